/** `svc init`: write the terminal profile `.svc/profiles/default.json`. */
import { Command } from 'commander';
import { usageError } from '../terminal/errors.js';
import { hostSlug, normalizeServer, workspaceRoot } from '../workspace/paths.js';
import { DEFAULT_SERVER, isHttpUrl, removeLegacyLayout, writeProfile } from '../workspace/profile.js';

export function initCommand(): Command {
  return new Command('init')
    .description('write the terminal profile (.svc/profiles/default.json): the server URL and an optional API key')
    .option('--server <url>', 'the svc server', DEFAULT_SERVER)
    .option('--api-key <key>', 'the API key sent as X-API-Key (the profile is then written with mode 0600)')
    .option('--no-login', 'skip device login (only managed hosts have it; this server build never runs it)')
    .action((opts: { server: string; apiKey?: string; login: boolean }) => {
      if (!isHttpUrl(opts.server))
        throw usageError(
          'bad_arguments',
          `--server is not an http(s) URL: ${opts.server}`,
          'write for example --server http://127.0.0.1:7311',
        );
      if (opts.apiKey !== undefined && opts.apiKey.trim() === '')
        throw usageError('bad_arguments', '--api-key is empty', 'pass the key, or leave --api-key out');
      const root = workspaceRoot();
      removeLegacyLayout(root);
      const file = writeProfile(root, { server: opts.server, ...(opts.apiKey ? { api_key: opts.apiKey } : {}) });
      process.stdout.write(
        `wrote ${file} (server ${normalizeServer(opts.server)}, host ${hostSlug(opts.server)}${opts.apiKey ? ', API key, mode 0600' : ''})\n` +
          'next: `svc doctor`, then `svc search <intent>`\n',
      );
    });
}
