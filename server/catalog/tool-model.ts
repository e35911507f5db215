/**
 * The tool model of one registry entry (GET /v1/registry/{entry_id}/tool-model): what an agent
 * or a tool generator needs to know about a slice of the catalog, with the static `execute`
 * notes on continuations, paging, long operations and review. A read-only caller's model has no
 * write (no verb, line or kind whose capability kind is in `WRITE_KINDS`).
 */
import { svcError, type SvcError } from '../../common/errors.js';
import { suggestHint } from '../../common/suggest.js';
import type { Capability, Entity } from '../../pack/cgs.js';
import { WRITE_KINDS } from '../../pack/cgs.js';
import type { Registry, RegistryEntry } from '../../pack/registry.js';
import { defaultReads } from '../../compiler/symbols.js';
import { describeType } from '../../compiler/values.js';

export type Focus = 'all' | 'single' | 'seeds';

/** The static notes of the `execute` object. */
export const EXECUTE_NOTES = {
  summary:
    'Programs are short expressions over the teaching symbols (e# entities, m# capabilities, r# relations; fields and parameters by wire name). POST them to /execute/{prompt_hash}/{session}. Continuations are handles minted by the host (pgN, oN, pcN), never vendor cursors or job ids.',
  pagination:
    'A list returns one vendor page. When more exist the result carries a handle pgN: send page(pgN)[fields] as the whole program to get the next page. limit=N on a list asks for N rows at once. The vendor cursor stays on the server.',
  long_operations:
    'Live execute with wait=false starts the run in the background and answers a line with wait(oN) (sign +). Poll with wait(oN) every 3 to 5 seconds until ! (done), x (cancelled) or ? (failed); cancel(oN) stops it. Handles are minted by the host.',
  review_gate:
    'A plan that changes vendor data (create, update, delete, action) or whose flow is not clean needs review: dry-run it with mode=plan to get pcN and its verdict, then run the same program with plan_commit_ref=pcN within 10 minutes (a pcN of a plan with writes runs once), or pass force=true. Clean reads run at once.',
} as const;

/** The `execute` notes of a read-only caller: its review gate only ever sees reads. */
export const READ_ONLY_NOTES = {
  ...EXECUTE_NOTES,
  review_gate:
    'This caller may only read: a program that changes vendor data is refused with read_only before anything is sent. A read whose flow is not clean needs review: dry-run it with mode=plan to get pcN, then run the same program with plan_commit_ref=pcN within 10 minutes, or pass force=true. Clean reads run at once.',
} as const;

export interface ToolModelQuery {
  focus?: string;
  entity: string[];
}

/** Validate focus/entity; a problem is a 400 `svc-tool-model-bad-request`. */
export function resolveFocus(
  entry: RegistryEntry,
  q: ToolModelQuery,
): { mode: Focus; entities: Entity[] } | { problem: SvcError } {
  const mode = (q.focus ?? 'all') as Focus;
  const bad = (message: string, hint: string) => ({ problem: svcError('bad_arguments', message, { hint }) });
  if (!['all', 'single', 'seeds'].includes(mode))
    return bad(
      `focus \`${q.focus}\` is not one of all, single, seeds`,
      'use focus=all (default), focus=single&entity=E or focus=seeds&entity=E1&entity=E2',
    );
  if (mode === 'all' && q.entity.length)
    return bad('focus=all takes no entity', 'drop entity, or use focus=single / focus=seeds');
  if (mode === 'single' && q.entity.length !== 1)
    return bad(`focus=single takes exactly one entity (got ${q.entity.length})`, 'write focus=single&entity=<Entity>');
  if (mode === 'seeds' && q.entity.length === 0)
    return bad('focus=seeds takes one or more entity', 'write focus=seeds&entity=<Entity>&entity=<Entity>');
  const names = entry.cgs.entities.map((e) => e.name);
  const picked: Entity[] = [];
  for (const n of mode === 'all' ? names : q.entity) {
    const e = entry.cgs.entities.find((x) => x.name === n || `${entry.entry_id}:${x.name}` === n);
    if (!e) return bad(`${entry.entry_id} has no entity \`${n}\``, suggestHint(n, names, { known: 'entities' }));
    if (!picked.includes(e)) picked.push(e);
  }
  return { mode, entities: picked };
}

function verb(c: Capability, defaults: ReturnType<typeof defaultReads>) {
  const v: Record<string, unknown> = {
    name: c.name,
    kind: c.kind,
    effect: WRITE_KINDS.has(c.kind) ? 'write' : 'read',
    returns: c.returns,
    default: c === defaults.query || c === defaults.get || c === defaults.search,
    params: c.params.map((p) => ({
      name: p.name,
      type: describeType(p),
      required: p.required,
      ...(p.default !== undefined ? { default: p.default } : {}),
      description: p.description,
    })),
    about: c.description,
  };
  if (c.id_param) v.id_param = c.id_param;
  if (c.singleton) v.singleton = true;
  if (c.http.pagination) {
    v.pagination = { style: c.http.pagination.style, page_size: c.http.pagination.page_size };
    v.about = `${c.description}${c.description ? ' ' : ''}${EXECUTE_NOTES.pagination}`;
  }
  return v;
}

/** The tool model; `readOnly` (a read-only caller, see server/execute/read-only.ts) leaves every write out. */
export function toolModel(
  registry: Registry,
  entry: RegistryEntry,
  mode: Focus,
  entities: Entity[],
  readOnly = false,
): Record<string, unknown> {
  const cgs = entry.cgs;
  const shown = (c: Capability) => !readOnly || !WRITE_KINDS.has(c.kind);
  const out: Record<string, unknown> = {};
  for (const e of entities) {
    const defaults = defaultReads(registry, entry.entry_id, e.name);
    out[e.name] = {
      description: e.description,
      id_field: e.id_field,
      fields: e.fields.map((f) => ({ name: f.name, type: describeType(f), description: f.description })),
      verbs: registry
        .capabilitiesOf(entry.entry_id, e.name)
        .filter(shown)
        .map((c) => verb(c, defaults)),
      relations: e.relations.map((r) => ({
        name: r.name,
        target: r.target,
        cardinality: r.cardinality,
        capability: r.capability,
        bind: r.bind,
        description: r.description,
      })),
      reverse_traversals: cgs.entities.flatMap((x) =>
        x.relations
          .filter((r) => r.target === e.name)
          .map((r) => ({ from: x.name, relation: r.name, cardinality: r.cardinality })),
      ),
      entity_ref_links: e.fields
        .filter((f) => f.type === 'ref')
        .map((f) => ({ field: f.name, entity: (f as { entity: string }).entity })),
      domain_lines: domainLines(entry.entry_id, e, registry, shown),
    };
  }
  const relationEdges = cgs.entities.reduce((n, e) => n + e.relations.length, 0);
  return {
    entry: { entry_id: entry.entry_id, label: entry.label, tags: entry.tags },
    focus: { mode, resolved_entities: entities.map((e) => e.name) },
    overview: {
      entity_count: cgs.entities.length,
      relation_edge_count: relationEdges,
      verb_count: cgs.capabilities.filter(shown).length,
    },
    ...(readOnly ? { read_only: true } : {}),
    execute: readOnly ? READ_ONLY_NOTES : EXECUTE_NOTES,
    auth: authBlock(entry),
    entities: out,
    domain: {
      model: {
        kinds: Object.fromEntries(
          (['query', 'get', 'search', 'create', 'update', 'delete', 'action'] as const)
            .filter((k) => !readOnly || !WRITE_KINDS.has(k))
            .map((k) => [k, cgs.capabilities.filter((c) => c.kind === k).length]),
        ),
        cross_entity_hints: cgs.entities.flatMap((e) =>
          e.fields
            .filter((f) => f.type === 'ref')
            .map((f) => `${e.name}.${f.name} holds a ${(f as { entity: string }).entity} id`),
        ),
        relation_materialization: cgs.entities.flatMap((e) =>
          e.relations.map((r) => {
            const cap = cgs.capabilities.find((c) => c.name === r.capability);
            return `${e.name}.${r.name} -> ${r.target} (${r.cardinality}) via ${r.capability} (${cap ? `${cap.http.method} ${cap.http.path}` : '?'}) binding ${Object.entries(
              r.bind,
            )
              .map(([p, f]) => `${p}=${f}`)
              .join(', ')}`;
          }),
        ),
      },
    },
  };
}

/** Plain-language lines about an entity (what the teaching rows say, without symbols). */
function domainLines(api: string, e: Entity, registry: Registry, shown: (c: Capability) => boolean): string[] {
  const lines = [`${api}:${e.name}: ${e.description || e.name}`];
  for (const c of registry.capabilitiesOf(api, e.name).filter(shown))
    lines.push(
      `${c.kind} ${c.name}(${c.params.map((p) => `${p.name}${p.required ? '' : '?'}`).join(', ')})${WRITE_KINDS.has(c.kind) ? ' [write: needs review]' : ''}`,
    );
  for (const r of e.relations)
    lines.push(`${e.name}.${r.name} -> ${r.target} ${r.cardinality === 'many' ? 'rows' : 'row'}`);
  return lines;
}

/** Outbound auth as the agent may see it: scheme and variable names, never secrets. */
function authBlock(entry: RegistryEntry): Record<string, unknown> {
  const a = entry.cgs.auth;
  const block: Record<string, unknown> = { scheme: a.scheme };
  if (a.scheme === 'oauth2_client_credentials')
    block.oauth = { grant: 'client_credentials', token_url: a.token_url, scopes: a.scopes };
  block.connect_profile = { outbound_oauth_eligible: a.scheme === 'oauth2_client_credentials', control_plane: false };
  return block;
}
