/**
 * The teaching table: TSV (`form<TAB>meaning`), one row per symbol of a wave, a copyable form on
 * the left and a short meaning on the right. The shared rules (grammar summary, continuations,
 * review) are rendered once per session by `teachingRules()`, not per row.
 */
import type { Capability, Entity, FieldDef, ParamDef } from '../pack/cgs.js';
import type { Registry } from '../pack/registry.js';
import { bindsRequired, defaultReads, singletonRead, type SymbolTable, type Wave } from './symbols.js';
import { describeType, exampleId, exampleIdValue, exampleLiteral } from './values.js';
import { DEFAULT_MAX_FANOUT } from './resolve.js';
import { capabilityConstraintText, paramConstraintText } from './constraint-text.js';
import { sharedPathParams } from './resolve-calls.js';

export const TEACHING_HEADER = 'form\tmeaning';

/** One teaching row. */
export interface TeachingRow {
  sym: string;
  form: string;
  meaning: string;
}

/** Cells hold no tab or newline. */
export function cell(s: string): string {
  return s.replace(/[\t\r\n]+/g, ' ').trim();
}

/** The rules every session learns once, before its first wave (about 200 o200k tokens); a read-only one learns no write. */
export function teachingRules(opts: { readOnly?: boolean } = {}): string {
  return [
    'svc programs: one statement per line; bare expressions return rows.',
    'e1(f=v, ...)[a, b]  rows by filters ("strings"); [..] keeps fields, r1[a] nests related rows; limit=N rows; sort="f", order="desc" if sort: shown',
    'e1(<id>) one row, .rel[..] its related rows, .m2(p=v) acts on it; m1(p=v) calls',
    "untyped parameter: its field's type, else string; long text: p=<<EOT, lines, EOT alone",
    `x = e1(...) binds rows: x.f is a value (a call per row, max ${DEFAULT_MAX_FANOUT}), x.rel[..] follows`,
    'page(pgN)[..] next page; wait(oN), cancel(oN) a background run',
    opts.readOnly
      ? 'this session only reads: a program that changes data is refused (read_only)'
      : 'create, update, delete, action change data: dry-run for a pcN, then run with it',
  ].join('\n');
}

/** TSV of a wave (header + rows). An empty wave renders as the header alone. */
export function renderWave(wave: Wave, registry: Registry, symbols: SymbolTable): string {
  return [TEACHING_HEADER, ...waveRows(wave, registry, symbols).map((r) => `${cell(r.form)}\t${cell(r.meaning)}`)].join(
    '\n',
  );
}

export function waveRows(wave: Wave, registry: Registry, symbols: SymbolTable): TeachingRow[] {
  const rows: TeachingRow[] = [];
  for (const e of wave.entities) {
    const entity = registry.entity(e.api, e.entity);
    if (entity) rows.push(entityRow(e.sym, e.api, entity, registry, symbols));
  }
  for (const r of wave.relations) {
    const row = relationRow(r.sym, r.api, r.entity, r.relation, registry, symbols);
    if (row) rows.push(row);
  }
  for (const c of wave.capabilities) {
    const cap = registry.capability(c.api, c.capability);
    if (cap) rows.push(capabilityRow(c.sym, c.api, cap, symbols, registry));
  }
  return rows;
}

/**
 * `e1("<id>").tickets(status=$)[..]  r1 -> e2 rows: ...`: the parameters the relation does not
 * bind are filters of the follow, so a list reached only through a nested route needs no `m#`.
 */
function relationRow(
  sym: string,
  api: string,
  entityName: string,
  relation: string,
  registry: Registry,
  symbols: SymbolTable,
): TeachingRow | undefined {
  const entity = registry.entity(api, entityName);
  const rel = entity?.relations.find((x) => x.name === relation);
  if (!entity || !rel) return undefined;
  const from = symbols.entitySymbol(api, entityName)?.sym ?? `${api}:${entityName}`;
  const target = symbols.entitySymbol(api, rel.target);
  const cap = registry.capability(api, rel.capability);
  const free = cap?.params.filter((p) => !(p.name in rel.bind)) ?? [];
  const args = free.length ? `(${free.map((p) => `${p.name}=$`).join(', ')})` : '';
  const parts = [
    `${sym} -> ${target ? target.sym : `${api}:${rel.target}`} ${rel.cardinality === 'many' ? 'rows' : 'row'}${target ? '' : ' (add the seed to learn its fields)'}${rel.description ? `: ${rel.description}` : ''}`,
  ];
  // Filters are typed by the target's fields only once the target's row taught them.
  const targetEntity = target ? registry.entity(api, rel.target) : undefined;
  const req = free.filter((p) => p.required);
  if (req.length) parts.push(`required: ${req.map((p) => paramText(p, targetEntity)).join(', ')}`);
  const odd = free.filter((p) => !p.required && !sameAsField(p, targetEntity));
  if (odd.length) parts.push(`filters: ${odd.map((p) => paramText(p, targetEntity)).join(', ')}`);
  const sort = cap && sortText(cap, registry.entity(api, rel.target));
  if (sort) parts.push(sort);
  return {
    sym,
    form: `${rowHead(registry, symbols, api, entityName) ?? `${from}(${rowId(registry, api, entityName)})`}.${relationMember(rel.name, sym)}${args}[..]`,
    meaning: parts.join(' | '),
  };
}

/**
 * How a relation row writes the relation: its wire name, unless a program would read that name
 * as something else (a symbol such as `m1`, a legacy `p#`/`s#`, or `true`/`false`/`null`);
 * then its `r#`, which always reaches it.
 */
function relationMember(wire: string, sym: string): string {
  return /^[emrps]\d+$/.test(wire) || ['true', 'false', 'null'].includes(wire) ? sym : wire;
}

/**
 * The example id of an entity's rows in forms: `"<id>"` or `1`, after its get's id parameter. A
 * get whose path takes more than the id (`/repos/{owner}/{repo}/issues/{index}`) adds those:
 * `1, owner=$, repo=$` (`fill` gives example values instead of `$` and an id that satisfies the
 * id parameter's constraints, for programs that compile).
 */
function rowId(registry: Registry, api: string, entity: string, fill?: (p: ParamDef) => string): string {
  const get = defaultReads(registry, api, entity).get;
  const p = get?.params.find((x) => x.name === get.id_param);
  if (!get || !p) return '"<id>"';
  const more = get.params.filter((x) => x.required && x.name !== get.id_param);
  return [fill ? exampleIdValue(p) : exampleId(p), ...more.map((x) => `${x.name}=${fill ? fill(x) : '$'}`)].join(', ');
}

/**
 * `m3()`, `m3(owner=$, repo=$)`: the call reading the one row of an entity that has no get by id
 * but a singleton get with an `m#` (`fill` gives example values instead of `$`); else undefined.
 */
function rowHead(
  registry: Registry,
  symbols: SymbolTable,
  api: string,
  entity: string,
  fill?: (p: ParamDef) => string,
): string | undefined {
  if (defaultReads(registry, api, entity).get) return undefined;
  const one = singletonRead(registry, api, entity);
  const m = one && symbols.capabilitySymbol(api, one.name);
  return one && m ? singletonCall(m.sym, one, fill) : undefined;
}

/** A singleton get's call with its required parameters: `m3()`, `m3(owner=$, repo=$)`. */
function singletonCall(sym: string, cap: Capability, fill?: (p: ParamDef) => string): string {
  const req = cap.params.filter((p) => p.required);
  return `${sym}(${req.map((p) => `${p.name}=${fill ? fill(p) : '$'}`).join(', ')})`;
}

function fieldText(f: FieldDef, entity: Entity): string {
  const t = f.type === 'string' ? '' : f.type === 'enum' ? `=${describeType(f)}` : `:${describeType(f)}`;
  return `${f.name}${t}${f.name === entity.id_field && f.name !== 'id' ? ' (id)' : ''}`;
}

/**
 * A parameter as the table shows it: its name alone when it has the type of the entity's field
 * of that name (the fields list taught it; the rules say so), else with its type (`:string`
 * spelt out when the field of that name has another type); then its default and dependencies.
 */
function paramText(p: ParamDef, entity: Entity | undefined): string {
  const f = entity?.fields.find((x) => x.name === p.name);
  const t =
    f && describeType(f) === describeType(p)
      ? ''
      : p.type === 'enum'
        ? `=${describeType(p)}`
        : p.type === 'string' && !f
          ? ''
          : `:${describeType(p)}`;
  const needs = p.requires ? ` (with ${p.requires.join(', ')})` : '';
  const rule = paramConstraintText(p);
  return `${p.name}${t}${rule ? ` ${rule}` : ''}${p.default !== undefined ? ` (default ${JSON.stringify(p.default)})` : ''}${needs}`;
}

function entityRow(sym: string, api: string, entity: Entity, registry: Registry, symbols: SymbolTable): TeachingRow {
  const reads = defaultReads(registry, api, entity.name);
  // Without a get by id, the entity's one row is its singleton's (`one: m3()`).
  const one = rowHead(registry, symbols, api, entity.name);
  const parts = [`${api}:${entity.name}${entity.description ? `: ${entity.description}` : ''}`];
  let form: string;
  if (reads.query) {
    const req = reads.query.params.filter((p) => p.required);
    // Filters named and typed like a field are taught by the field list and shown in the form; the
    // others are spelt out once, with their types, under `filters:`.
    const odd = reads.query.params.filter((p) => !req.includes(p) && !sameAsField(p, entity));
    const filters = reads.query.params.filter((p) => !odd.includes(p)).map((p) => `${p.name}=$`);
    form = `${sym}${filters.length ? `(${filters.join(', ')})` : ''}[..]`;
    const page = reads.query.http.pagination?.page_size;
    if (req.length || page)
      parts.push(
        `list${req.length ? ` (required: ${req.map((p) => paramText(p, entity)).join(', ')})` : ''}${page ? ` ${page}/page` : ''}`,
      );
    const sort = sortText(reads.query, entity);
    if (sort) parts.push(sort);
    if (odd.length) parts.push(`filters: ${odd.map((p) => paramText(p, entity)).join(', ')}`);
  } else if (reads.search) {
    form = `${sym}(${reads.search.params
      .filter((p) => p.required)
      .map((p) => `${p.name}=$`)
      .join(', ')})[..]`;
  } else {
    form = one ?? `${sym}("<id>")[..]`;
  }
  if (reads.get) parts.push(`one: ${sym}(${rowId(registry, api, entity.name)})`);
  else if (one && form !== one) parts.push(`one: ${one}`);
  if (reads.search && reads.query)
    parts.push(
      `search: ${sym}(${reads.search.params
        .filter((p) => p.required)
        .map((p) => `${p.name}=$`)
        .join(', ')})`,
    );
  parts.push(`fields: ${entity.fields.map((f) => fieldText(f, entity)).join(', ')}`);
  return { sym, form, meaning: parts.join(' | ') };
}

/** `sort: any field` (every field of the entity) or `sort: createdAt, priority`, for a list that sorts. */
function sortText(cap: Capability, entity: Entity | undefined): string | undefined {
  const s = cap.returns === 'rows' ? cap.http.sort : undefined;
  if (!s || !entity) return undefined;
  return `sort: ${s.fields.length === entity.fields.length ? 'any field' : s.fields.join(', ')}`;
}

function sameAsField(p: ParamDef, entity: Entity | undefined): boolean {
  const f = entity?.fields.find((x) => x.name === p.name);
  return !!f && describeType(f) === describeType(p) && p.default === undefined && !paramConstraintText(p);
}

function capabilityRow(
  sym: string,
  api: string,
  cap: Capability,
  symbols: SymbolTable,
  registry: Registry,
): TeachingRow {
  const onRow = cap.id_param !== undefined;
  const scoped = rowScope(registry, api, cap);
  const own = cap.params.filter((p) => p.name !== cap.id_param && !scoped.has(p.name));
  const req = own.filter((p) => p.required);
  const opt = own.filter((p) => !p.required);
  // The form shows the required parameters (the optional ones when none is); the meaning the rest.
  const shown = req.length ? req : opt;
  const call = shown.length ? `${sym}(${shown.map((p) => `${p.name}=$`).join(', ')})` : sym;
  const esym = symbols.entitySymbol(api, cap.entity)?.sym ?? `${api}:${cap.entity}`;
  const form = onRow
    ? `${esym}(${rowId(registry, api, cap.entity)}).${call}`
    : cap.singleton
      ? singletonCall(sym, cap)
      : cap.returns === 'rows'
        ? `${call}[..]`
        : call;
  const what = cap.singleton ? ' (the one row, no id)' : cap.returns === 'none' ? ' (returns nothing)' : '';
  const parts = [`${cap.kind} ${esym}${what}${cap.description ? `: ${cap.description}` : ''}`];
  const entity = registry.entity(api, cap.entity);
  const noted = (ps: ParamDef[]) => ps.filter((p) => paramText(p, entity) !== p.name);
  if (noted(req).length)
    parts.push(
      `required: ${noted(req)
        .map((p) => paramText(p, entity))
        .join(', ')}`,
    );
  const optional = req.length ? opt : noted(opt);
  if (optional.length) parts.push(`optional: ${optional.map((p) => paramText(p, entity)).join(', ')}`);
  const atLeast = capabilityConstraintText(cap);
  if (atLeast) parts.push(atLeast);
  else if (!req.length && opt.length) parts.push('all optional');
  const sort = entity && sortText(cap, entity);
  if (sort) parts.push(sort);
  return { sym, form, meaning: parts.join(' | ') };
}

/**
 * Path parameters a row capability takes from the row's get (`/repos/{owner}/{repo}/...`): the
 * compiler passes them on, so the form leaves them out.
 */
function rowScope(registry: Registry, api: string, cap: Capability): Set<string> {
  const get = cap.id_param === undefined ? undefined : defaultReads(registry, api, cap.entity).get;
  return new Set(get ? sharedPathParams(cap, get) : []);
}

/**
 * A program exercising a capability, built from the teaching forms with example values; the
 * teachability check compiles one per capability.
 */
export function exampleProgram(
  api: string,
  cap: Capability,
  registry: Registry,
  symbols: SymbolTable,
): string | undefined {
  const e = symbols.entitySymbol(api, cap.entity);
  if (!e) return undefined;
  const reads = defaultReads(registry, api, cap.entity);
  const fill = (ps: ParamDef[]) =>
    ps
      .filter((p) => p.required)
      .map((p) => `${p.name}=${exampleLiteral(p)}`)
      .join(', ');
  if (cap === reads.get) return `${e.sym}(${rowId(registry, api, cap.entity, exampleLiteral)})`;
  if (cap === reads.query || cap === reads.search) return `${e.sym}(${fill(cap.params)})`;
  const m = symbols.capabilitySymbol(api, cap.name);
  if (!m) return relationExample(api, cap, registry, symbols);
  const scoped = rowScope(registry, api, cap);
  const own = cap.params.filter((p) => p.name !== cap.id_param && !scoped.has(p.name));
  if (cap.id_param !== undefined) {
    if (reads.get) return `${e.sym}(${rowId(registry, api, cap.entity, exampleLiteral)}).${m.sym}(${fill(own)})`;
    return `${m.sym}(${fill(cap.params)})`;
  }
  return `${m.sym}(${fill(cap.params)})`;
}

/** `e1("<id>").tickets`: the example of a list that only a relation reaches (it has no `m#`). */
function relationExample(api: string, cap: Capability, registry: Registry, symbols: SymbolTable): string | undefined {
  for (const s of symbols.all()) {
    if (s.kind !== 'relation' || s.api !== api) continue;
    const rel = registry.entity(api, s.entity)?.relations.find((r) => r.name === s.relation);
    const from = symbols.entitySymbol(api, s.entity);
    if (!rel || !from || rel.capability !== cap.name) continue;
    if (!bindsRequired(rel, cap)) continue;
    const head =
      rowHead(registry, symbols, api, s.entity, exampleLiteral) ??
      `${from.sym}(${rowId(registry, api, s.entity, exampleLiteral)})`;
    return `${head}.${relationMember(rel.name, s.sym)}`;
  }
  return undefined;
}
