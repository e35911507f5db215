/**
 * Discovery: rank (api, entity) pairs of every loaded catalog by the words of an intent, looking
 * at entity names and descriptions, field names, capability names and descriptions, and the
 * catalog's label, tags and description. Also renders the rows as Markdown for MCP and the CLI.
 */
import type { Registry } from '../../pack/registry.js';
import { WRITE_KINDS } from '../../pack/cgs.js';

export interface DiscoverRow {
  api: string;
  entity: string;
  /** `api:Entity`, the seed to pass to a context call. */
  seed: string;
  score: number;
  label: string;
  description: string;
  /** Capability names about the entity, reads first. */
  capabilities: string[];
  /** Words of the intent that matched. */
  matched: string[];
}

const STOP = new Set([
  'a',
  'an',
  'the',
  'of',
  'for',
  'and',
  'or',
  'to',
  'in',
  'on',
  'by',
  'with',
  'me',
  'my',
  'all',
  'list',
  'show',
  'find',
  'get',
  'what',
  'which',
  'is',
  'are',
]);

/** Lower-case words of at least two letters, crude singular forms, stop words removed. */
export function words(text: string): string[] {
  const out: string[] = [];
  for (const w of text
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)) {
    if (w.length < 2 || STOP.has(w)) continue;
    const stem = w.endsWith('ies')
      ? w.slice(0, -3) + 'y'
      : w.endsWith('ses')
        ? w.slice(0, -2)
        : w.endsWith('s') && !w.endsWith('ss')
          ? w.slice(0, -1)
          : w;
    if (!out.includes(stem)) out.push(stem);
  }
  return out;
}

/** Rows for an intent, best first (only of the `allowed` catalogs when given); an empty intent lists every entity. */
export function discover(registry: Registry, intent: string, limit = 20, allowed?: ReadonlySet<string>): DiscoverRow[] {
  const want = words(intent);
  const rows: DiscoverRow[] = [];
  for (const entry of registry.list()) {
    if (allowed && !allowed.has(entry.entry_id)) continue;
    const catalogWords = new Set(
      words(`${entry.entry_id} ${entry.label} ${entry.tags.join(' ')} ${entry.cgs.description}`),
    );
    for (const e of entry.cgs.entities) {
      const caps = registry.capabilitiesOf(entry.entry_id, e.name);
      const name = new Set(words(e.name));
      const about = new Set(
        words(`${e.description} ${e.relations.map((r) => `${r.name} ${r.description}`).join(' ')}`),
      );
      const fields = new Set(words(e.fields.map((f) => `${f.name} ${f.description}`).join(' ')));
      const verbs = new Set(words(caps.map((c) => `${c.name} ${c.description}`).join(' ')));
      let score = 0;
      const matched: string[] = [];
      for (const w of want) {
        const s =
          (name.has(w) ? 5 : 0) +
          (about.has(w) ? 2 : 0) +
          (verbs.has(w) ? 2 : 0) +
          (fields.has(w) ? 1 : 0) +
          (catalogWords.has(w) ? 1 : 0);
        if (s > 0) {
          score += s;
          matched.push(w);
        }
      }
      if (want.length && score === 0) continue;
      rows.push({
        api: entry.entry_id,
        entity: e.name,
        seed: `${entry.entry_id}:${e.name}`,
        score,
        label: entry.label,
        description: e.description,
        capabilities: [
          ...caps.filter((c) => !WRITE_KINDS.has(c.kind)),
          ...caps.filter((c) => WRITE_KINDS.has(c.kind)),
        ].map((c) => c.name),
        matched,
      });
    }
  }
  rows.sort((a, b) => b.score - a.score || a.seed.localeCompare(b.seed));
  return rows.slice(0, limit);
}

function md(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/[\r\n]+/g, ' ');
}

/** Markdown table of discovery rows (used by MCP `discover_capabilities` and `svc search`). */
export function discoverMarkdown(
  intent: string,
  rows: DiscoverRow[],
  listing = 'GET /v1/registry lists the catalogs',
): string {
  if (rows.length === 0) return `No entity matches "${md(intent)}". Try other words; ${listing}.\n`;
  const head = `Entities for "${md(intent)}" (seed a context with the api:Entity of a row):\n\n| seed | catalog | about | capabilities |\n|---|---|---|---|\n`;
  return (
    head +
    rows
      .map((r) => `| \`${r.seed}\` | ${md(r.label)} | ${md(r.description)} | ${r.capabilities.join(', ')} |`)
      .join('\n') +
    '\n'
  );
}
