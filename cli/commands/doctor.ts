/**
 * `svc doctor`: the profile is present and valid, `GET /v1/health` answers, and the credentials
 * are accepted (`GET /v1/incoming-auth/context`). One actionable line per problem.
 */
import { Command } from 'commander';
import { field, firstError, ServerClient } from '../terminal/client.js';
import { TERMINAL_EXIT, TerminalError } from '../terminal/errors.js';
import { paths, workspaceRoot } from '../workspace/paths.js';
import { profileProblems, readProfileRaw, removeLegacyLayout, type Profile } from '../workspace/profile.js';

export function doctorCommand(): Command {
  return new Command('doctor')
    .description('check the profile, that the server answers GET /v1/health, and that it accepts the credentials')
    .action(async () => {
      const root = workspaceRoot();
      removeLegacyLayout(root);
      const file = paths.profile(root);
      const raw = readProfileRaw(root);
      if (raw === undefined) {
        process.stdout.write(`problem: no profile at ${file}: run \`svc init --server <url>\`\n`);
        process.exitCode = TERMINAL_EXIT.usage;
        return;
      }
      const problems = profileProblems(raw);
      if (problems.length) {
        for (const p of problems) process.stdout.write(`problem: ${file}: ${p}: run \`svc init --server <url>\`\n`);
        process.exitCode = TERMINAL_EXIT.usage;
        return;
      }
      const profile = raw as Profile;
      process.stdout.write(`ok: profile ${file} (server ${profile.server}${profile.api_key ? ', API key' : ''})\n`);
      const client = new ServerClient(profile);
      try {
        const health = await client.request('/v1/health');
        if (health.status !== 200 || health.json?.status !== 'ok') {
          process.stdout.write(
            `problem: GET ${client.base}/v1/health answered ${health.status}: is ${client.base} an svc server? fix it with \`svc init --server <url>\`\n`,
          );
          process.exitCode = TERMINAL_EXIT.server;
          return;
        }
        process.stdout.write(
          `ok: ${client.base} answers (svc ${field(health.json.version)}, ${field(health.json.entries)} catalogs)\n`,
        );
        const who = await client.request('/v1/incoming-auth/context');
        if (who.status === 401 || who.status === 403) {
          const { code, message } = firstError(who);
          const why = !profile.api_key
            ? 'it requires credentials and the profile has no API key'
            : who.status === 401
              ? 'the API key is not accepted'
              : `the API key is not allowed here (${message})`;
          process.stdout.write(
            `problem: the server refused the credentials (${code}): ${why}; run \`svc init --server ${profile.server} --api-key <key>\`\n`,
          );
          process.exitCode = TERMINAL_EXIT.server;
          return;
        }
        if (who.status !== 200 || !who.json) {
          process.stdout.write(`problem: GET /v1/incoming-auth/context answered ${who.status}\n`);
          process.exitCode = TERMINAL_EXIT.server;
          return;
        }
        const w = who.json;
        process.stdout.write(
          `ok: credentials: auth mode ${field(w.mode)}, ${w.authenticated === true ? `authenticated by ${field(w.method)} as ${field(w.subject)} (tenant ${field(w.tenant_id)})` : 'anonymous'}\n`,
        );
      } catch (e) {
        if (!(e instanceof TerminalError)) throw e;
        process.stdout.write(`problem: ${e.message}: ${e.hint ?? ''}\n`);
        process.exitCode = e.exit;
      }
    });
}
