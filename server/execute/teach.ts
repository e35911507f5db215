/**
 * Opening sessions and teaching them: the first wave of a new session, and delta waves that
 * expand it (more entities of a pinned catalog) or federate it (another catalog), from seeds.
 */
import { fail, svcError, SvcFailure, type SvcError } from '../../common/errors.js';
import { quote } from '../../common/quote.js';
import { suggestHint } from '../../common/suggest.js';
import type { Seed, SymbolTableJson } from '../../compiler/symbols.js';
import { renderWave, teachingRules } from '../../compiler/teaching.js';
import type { Registry } from '../../pack/registry.js';
import type { CreatedOutcome, TaughtOutcome } from './outcome.js';
import { readableSymbols, readableWave, type ReadOnly } from './read-only.js';
import type { SessionRepository } from './repository.js';
import type { SessionKey, SessionState } from './state.js';

/** A seed as a request gives it: `"api:Entity"`, `"Entity"` of the default catalog, or `{api?, entity}`. */
export type SeedInput = string | { api?: string | null; entity: string };

export interface OpenRequest {
  entry_id: string;
  intent?: string | null;
  seeds?: SeedInput[] | null;
}

export class Teacher {
  constructor(
    private readonly registry: () => Registry,
    private readonly repo: SessionRepository,
    /** Whose sessions are taught no write (read-only.ts); asked at each wave, so it may change at runtime. */
    private readonly readOnly?: ReadOnly,
  ) {}

  /** Seeds resolved against the loaded catalogs, all or nothing; a bad value is quoted by a short prefix only. */
  parseSeeds(raw: readonly unknown[] | null | undefined, defaultApi: string | undefined): Seed[] {
    if (raw === undefined || raw === null) return [];
    if (!Array.isArray(raw)) fail('bad_seed', '`seeds` must be a list', 'write for example "seeds": ["brewery:Beer"]');
    const registry = this.registry();
    const out: Seed[] = [];
    const problems: SvcError[] = [];
    raw.forEach((s, i) => {
      const parsed = seedParts(s, defaultApi);
      if (!parsed) {
        problems.push(
          svcError('bad_seed', `seed ${i} is not "api:Entity" or {"api": ..., "entity": ...}`, {
            hint: 'write for example "seeds": ["brewery:Beer"]',
          }),
        );
        return;
      }
      const { api, entity } = parsed;
      const shown =
        typeof s === 'string' ? `"${quote(s)}"` : `{api: "${quote(api ?? '')}", entity: "${quote(entity)}"}`;
      const entry = api ? registry.get(api) : undefined;
      if (!entry) {
        problems.push(
          svcError('bad_seed', `seed ${shown} names no loaded catalog`, {
            hint: `write api:Entity; catalogs: ${registry
              .list()
              .map((e) => e.entry_id)
              .join(', ')}`,
          }),
        );
      } else if (!registry.entity(entry.entry_id, entity)) {
        const names = entry.cgs.entities.map((e) => e.name);
        problems.push(
          svcError('bad_seed', `${entry.entry_id} has no entity "${quote(entity)}"`, {
            hint: suggestHint(entity, names, { show: (n) => `\`${entry.entry_id}:${n}\``, known: 'entities' }),
          }),
        );
      } else out.push({ api: entry.entry_id, entity });
    });
    if (problems.length) throw new SvcFailure(problems);
    return out;
  }

  /** A new session for one entry and its first wave; seeds default to every entity of the entry. */
  async open(req: OpenRequest, tenant: string): Promise<CreatedOutcome> {
    const registry = this.registry();
    const entry =
      registry.get(req.entry_id) ??
      fail(
        'unknown_entry',
        `no catalog "${quote(req.entry_id)}" is loaded`,
        `catalogs: ${registry
          .list()
          .map((e) => e.entry_id)
          .join(', ')}`,
      );
    let seeds = this.parseSeeds(req.seeds, entry.entry_id);
    if (seeds.some((s) => s.api !== entry.entry_id))
      fail(
        'bad_seed',
        'a new session takes seeds of its own entry only',
        'open it with seeds of one catalog, then add seeds of other catalogs to its context',
      );
    if (seeds.length === 0) seeds = entry.cgs.entities.map((e) => ({ api: entry.entry_id, entity: e.name }));
    const created = await this.repo.create({
      entry_id: entry.entry_id,
      cgs_hash: entry.cgs_hash,
      intent: req.intent ?? '',
      tenant,
    });
    const readOnly = this.readOnly?.(tenant) ?? false;
    const rules = teachingRules({ readOnly });
    return this.repo.update(created, (s) => {
      const wave = s.symbols.expose(registry, seeds);
      const table = renderWave(readOnly ? readableWave(wave, registry) : wave, registry, s.symbols);
      s.teaching = `${rules}\n${table}`;
      return {
        kind: 'created',
        results: [],
        errors: [],
        text: s.teaching,
        meta: { domain_revision: s.symbols.domainRevision },
        extra: {
          prompt_hash: s.prompt_hash,
          session: s.session,
          domain_revision: s.symbols.domainRevision,
          entries: pins(s),
          rules,
          wave: table,
          // The terminal teaches its own symbol table: it leaves out the writes too.
          ...(readOnly ? { read_only: true } : {}),
        },
      };
    });
  }

  /** GET /symbols: the session's symbol table and teaching text; a read-only caller's lists no write capability. */
  symbols(s: SessionState): SymbolTableJson & { teaching: string } {
    const j = s.symbols.toJSON();
    return { ...(this.readOnly?.(s.tenant) ? readableSymbols(j, this.registry()) : j), teaching: s.teaching };
  }

  /** More seeds: expand (same entries) or federate (new entry) with a delta-only wave. */
  async context(key: SessionKey, rawSeeds: readonly unknown[]): Promise<TaughtOutcome> {
    const registry = this.registry();
    const first = (await this.repo.get(key))?.pins.keys().next().value;
    const seeds = this.parseSeeds(rawSeeds, first);
    if (seeds.length === 0)
      fail('bad_seed', '`seeds` is required and not empty', 'send for example "seeds": ["api:Entity"]');
    return this.repo.update(key, (s) => {
      for (const api of [...new Set(seeds.map((x) => x.api))].sort())
        if (!s.pins.has(api)) s.pins.set(api, registry.get(api)!.cgs_hash);
      const exposed = s.symbols.expose(registry, seeds);
      const readOnly = this.readOnly?.(s.tenant) ?? false;
      const wave = readOnly ? readableWave(exposed, registry) : exposed;
      const fresh = wave.entities.length + wave.capabilities.length + wave.relations.length > 0;
      const notice = wave.repeated.length
        ? `already taught: ${wave.repeated.map((r) => `${s.symbols.entitySymbol(r.api, r.entity)?.sym} (${r.api}:${r.entity})`).join(', ')}`
        : undefined;
      const table = fresh ? renderWave(wave, registry, s.symbols) : '';
      if (fresh) s.teaching += `\n${table.split('\n').slice(1).join('\n')}`;
      return {
        kind: 'result',
        results: [],
        errors: [],
        text: [notice, table].filter(Boolean).join('\n'),
        meta: { domain_revision: s.symbols.domainRevision },
        extra: {
          domain_revision: s.symbols.domainRevision,
          entries: pins(s),
          wave: table,
          ...(notice ? { notice } : {}),
          ...(readOnly ? { read_only: true } : {}),
        },
      };
    });
  }
}

function pins(s: SessionState): Array<{ entry_id: string; cgs_hash: string }> {
  return [...s.pins].map(([entry_id, cgs_hash]) => ({ entry_id, cgs_hash }));
}

/** The catalog and entity a seed names, or undefined when it has neither form. */
export function seedParts(
  s: unknown,
  defaultApi: string | undefined,
): { api: string | undefined; entity: string } | undefined {
  if (typeof s === 'string') {
    const c = s.indexOf(':');
    return c >= 0 ? { api: s.slice(0, c), entity: s.slice(c + 1) } : { api: defaultApi, entity: s };
  }
  if (!s || typeof s !== 'object' || Array.isArray(s)) return undefined;
  const o = s as { api?: unknown; entity?: unknown };
  if (typeof o.entity !== 'string' || (o.api !== undefined && o.api !== null && typeof o.api !== 'string'))
    return undefined;
  return { api: typeof o.api === 'string' ? o.api : defaultApi, entity: o.entity };
}
