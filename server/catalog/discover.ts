/**
 * Discovery: rank (api, entity) pairs of every loaded catalog by the words of an intent, looking
 * at entity names and descriptions, field names, capability names and descriptions, and the
 * catalog's label, tags and description, each word weighted by its rarity (discover-words.ts
 * has the words). Also renders the rows as Markdown for MCP and the CLI.
 */
import type { Registry, RegistryEntry } from '../../pack/registry.js';
import { WRITE_KINDS, type Capability, type Cgs, type Entity } from '../../pack/cgs.js';
import { keysOf, wordsOf } from './discover-words.js';

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

/** How much a word counts where it occurs (times its rarity); the name's weight is `nameWeight`. */
const WEIGHT = { about: 2, verbs: 2, fields: 1, catalog: 1 };

/**
 * A name match counts most, and more the fewer words the name has: `Commit` is about commits
 * more than `CommitComment` is (6 for a one-word name, 5 for two, 4.5 for four).
 */
const nameWeight = (words: number) => 4 + 2 / Math.max(1, words);

/**
 * An entity whose whole name the intent says (`commits` -> `Commit`, not `GitCommit`) gains this
 * much times the mean rarity of its name's words.
 */
const WHOLE_NAME = 3;

/** What discovery reads of one entity, as matching keys per place. */
interface EntityText {
  entity: Entity;
  caps: Capability[];
  name: Set<string>;
  about: Set<string>;
  verbs: Set<string>;
  fields: Set<string>;
  catalog: Set<string>;
  /** Every key of the entity, for the rarity of a word. */
  all: Set<string>;
}

/** Per CGS (a loaded catalog never changes; a reload brings a new one). */
const texts = new WeakMap<Cgs, EntityText[]>();

function entityTexts(entry: RegistryEntry): EntityText[] {
  const cached = texts.get(entry.cgs);
  if (cached) return cached;
  const catalog = keysOf(`${entry.entry_id} ${entry.label} ${entry.tags.join(' ')} ${entry.cgs.description}`);
  const out = entry.cgs.entities.map((e) => {
    const caps = entry.cgs.capabilities.filter((c) => c.entity === e.name);
    const t = {
      entity: e,
      caps,
      name: keysOf(e.name),
      about: keysOf(`${e.description} ${e.relations.map((r) => `${r.name} ${r.description}`).join(' ')}`),
      verbs: keysOf(caps.map((c) => `${c.name} ${c.description}`).join(' ')),
      fields: keysOf(e.fields.map((f) => `${f.name} ${f.description}`).join(' ')),
      catalog,
    };
    return { ...t, all: new Set([...t.name, ...t.about, ...t.verbs, ...t.fields, ...catalog]) };
  });
  texts.set(entry.cgs, out);
  return out;
}

export interface DiscoverOptions {
  /** Rows at most (default 20). */
  limit?: number;
  /** Only entities of these catalogs (default: every loaded one). */
  allowed?: ReadonlySet<string> | undefined;
  /** A caller that may only read: rows list no capability that writes. */
  readsOnly?: boolean;
}

/**
 * Rows for an intent, best first (only of the `allowed` catalogs when given); an empty intent
 * lists every entity. Each intent word scores, per entity, its weight where it occurs (name,
 * descriptions, capabilities, fields, catalog) times its rarity among the entities searched
 * (`ln(1 + N / entities having it)`): a word every entity has ranks little, a rare one decides;
 * an entity whose whole name the intent says gains more.
 */
export function discover(registry: Registry, intent: string, opts: DiscoverOptions = {}): DiscoverRow[] {
  const { limit = 20, allowed, readsOnly = false } = opts;
  const want = wordsOf(intent);
  const scope = registry.list().filter((entry) => !allowed || allowed.has(entry.entry_id));
  const all = scope.flatMap((entry) => entityTexts(entry).map((t) => ({ entry, t })));
  const rarity = new Map(
    want.map((w) => [w.key, Math.log(1 + all.length / Math.max(1, all.filter(({ t }) => t.all.has(w.key)).length))]),
  );
  const rows: DiscoverRow[] = [];
  for (const { entry, t } of all) {
    let score = 0;
    const matched: string[] = [];
    for (const w of want) {
      const s =
        (t.name.has(w.key) ? nameWeight(t.name.size) : 0) +
        (t.about.has(w.key) ? WEIGHT.about : 0) +
        (t.verbs.has(w.key) ? WEIGHT.verbs : 0) +
        (t.fields.has(w.key) ? WEIGHT.fields : 0) +
        (t.catalog.has(w.key) ? WEIGHT.catalog : 0);
      if (s > 0) {
        score += s * rarity.get(w.key)!;
        matched.push(w.shown);
      }
    }
    if (score > 0 && [...t.name].every((k) => rarity.has(k)))
      score += (WHOLE_NAME * [...t.name].reduce((sum, k) => sum + rarity.get(k)!, 0)) / t.name.size;
    if (want.length && score === 0) continue;
    rows.push({
      api: entry.entry_id,
      entity: t.entity.name,
      seed: `${entry.entry_id}:${t.entity.name}`,
      score: Math.round(score * 100) / 100,
      label: entry.label,
      description: t.entity.description,
      capabilities: [
        ...t.caps.filter((c) => !WRITE_KINDS.has(c.kind)),
        ...(readsOnly ? [] : t.caps.filter((c) => WRITE_KINDS.has(c.kind))),
      ].map((c) => c.name),
      matched,
    });
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
