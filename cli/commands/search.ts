/**
 * `svc search <INTENT>`: `GET /v1/discover` (JSON for the rows, Markdown to print), merges the
 * rows into the host's `discovery.tsv`; with an active session also records `out/NNNN-search/`.
 */
import { Command } from 'commander';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ServerClient } from '../terminal/client.js';
import { safeText } from '../terminal/safe-text.js';
import { mergeDiscovery } from '../workspace/discovery.js';
import { hostSlug, paths } from '../workspace/paths.js';
import { loadProfile } from '../workspace/profile.js';
import { activeSession } from '../workspace/session.js';

export function searchCommand(): Command {
  return new Command('search')
    .description('find the api:Entity seeds for an intent (GET /v1/discover); prints Markdown and caches the rows')
    .argument('<intent...>', 'the intent in words')
    .option('--limit <n>', 'rows at most (1 to 200)', '20')
    .action(async (words: string[], opts: { limit: string }) => {
      const intent = words.join(' ');
      const { root, profile } = loadProfile();
      const client = new ServerClient(profile);
      const q = `/v1/discover?intent=${encodeURIComponent(intent)}&limit=${encodeURIComponent(opts.limit)}`;
      const json = await client.json(q, {}, 2);
      const md = await client.request(`${q}&format=markdown`, { accept: 'text/markdown' });
      const slug = hostSlug(profile.server);
      const rows = Array.isArray(json.rows) ? (json.rows as Array<Record<string, unknown>>) : [];
      mergeDiscovery(paths.discovery(root, slug), intent, rows);
      const text = md.text.endsWith('\n') ? md.text : md.text + '\n';
      const session = activeSession(root, slug);
      if (session) {
        const dir = session.newRecord('search');
        writeFileSync(join(dir, 'body.md'), text);
        writeFileSync(join(dir, 'body.json'), JSON.stringify(json, null, 2) + '\n');
      }
      process.stdout.write(safeText(text));
    });
}
