/**
 * The teaching table: TSV (`form<TAB>meaning`), one row per symbol of a wave, a copyable form on
 * the left and a short meaning on the right. The shared rules (grammar summary, continuations,
 * review) are rendered once per session by `teachingRules()`, not per row.
 */
import type { Capability, Entity, FieldDef, ParamDef } from '../pack/cgs.js';
import { WRITE_KINDS } from '../pack/cgs.js';
import type { Registry } from '../pack/registry.js';
import { defaultReads, type SymbolTable, type Wave } from './symbols.js';
import { describeType, exampleId, exampleLiteral } from './values.js';
import { DEFAULT_MAX_FANOUT } from './resolve.js';

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

/** The rules every session learns once, before its first wave. */
export function teachingRules(): string {
  return [
    '# svc programs: one statement per line; the rows of each bare expression are returned.',
    '#   e1(field=value, ...)[f1,f2]   list rows: named filters, strings in "double quotes", [..] = fields to keep (r1[f] there nests each row\'s related rows); limit=N asks for more than one page; sort="field", order="desc" orders a list marked sort:',
    '#   e1("<id>")   one row by id;   e1("<id>").<relation>[..]   follow a relation;   e1("<id>").m2(field=value)   act on that row',
    '#   m1(name=value, ...)   invoke a capability with named arguments (wire names; never p# or s#)',
    '#   text over several lines: body=<<EOT, newline, the text, then a line holding EOT (the close may be glued before ) , or })',
    `#   x = e1(...)   bind rows; later lines use x.field as a value (one call per row, at most ${DEFAULT_MAX_FANOUT}) or x.<relation>[..]`,
    '# continuations: page(pgN)[..] fetches the next page of a result; wait(oN) polls and cancel(oN) stops a background run. Handles come from the server.',
    '# review: a row marked "write: needs review" changes vendor data: dry-run it for a pcN, then run it with that pcN (or force); reads run at once.',
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
    if (entity) rows.push(entityRow(e.sym, e.api, entity, registry));
  }
  for (const r of wave.relations) {
    const entity = registry.entity(r.api, r.entity);
    const rel = entity?.relations.find((x) => x.name === r.relation);
    if (!entity || !rel) continue;
    const from = symbols.entitySymbol(r.api, r.entity)?.sym ?? `${r.api}:${r.entity}`;
    const target = symbols.entitySymbol(r.api, rel.target);
    const many = rel.cardinality === 'many';
    rows.push({
      sym: r.sym,
      form: `${from}(${rowId(registry, r.api, r.entity)}).${relationMember(rel.name, r.sym)}[..]`,
      meaning: `${r.entity}.${rel.name} (${r.sym}) -> ${r.api}:${rel.target} ${many ? 'rows' : 'row'}${target ? ` (${target.sym})` : ' (add the seed to learn its fields)'}${rel.description ? `: ${rel.description}` : ''}`,
    });
  }
  for (const c of wave.capabilities) {
    const cap = registry.capability(c.api, c.capability);
    if (cap) rows.push(capabilityRow(c.sym, c.api, cap, symbols, registry));
  }
  return rows;
}

/**
 * How a relation row writes the relation: its wire name, unless a program would read that name
 * as something else (a symbol such as `m1`, a legacy `p#`/`s#`, or `true`/`false`/`null`);
 * then its `r#`, which always reaches it.
 */
function relationMember(wire: string, sym: string): string {
  return /^[emrps]\d+$/.test(wire) || ['true', 'false', 'null'].includes(wire) ? sym : wire;
}

/** The example id of an entity's rows in forms: `"<id>"` or `1`, after its get's id parameter. */
function rowId(registry: Registry, api: string, entity: string): string {
  const get = defaultReads(registry, api, entity).get;
  const p = get?.params.find((x) => x.name === get.id_param);
  return p ? exampleId(p) : '"<id>"';
}

function fieldText(f: FieldDef, entity: Entity): string {
  const t = f.type === 'string' ? '' : f.type === 'enum' ? `=${describeType(f)}` : `:${describeType(f)}`;
  return `${f.name}${t}${f.name === entity.id_field && f.name !== 'id' ? ' (id)' : ''}`;
}

function paramText(p: ParamDef): string {
  const t = p.type === 'string' ? '' : p.type === 'enum' ? `=${describeType(p)}` : `:${describeType(p)}`;
  const needs = p.requires ? ` (with ${p.requires.join(', ')})` : '';
  return `${p.name}${t}${p.default !== undefined ? ` (default ${JSON.stringify(p.default)})` : ''}${needs}`;
}

function entityRow(sym: string, api: string, entity: Entity, registry: Registry): TeachingRow {
  const reads = defaultReads(registry, api, entity.name);
  const parts = [`${api}:${entity.name}${entity.description ? `: ${entity.description}` : ''}`];
  let form: string;
  if (reads.query) {
    const filters = reads.query.params.map((p) => `${p.name}=$`);
    form = `${sym}(${filters.join(', ')})[..]`;
    const page = reads.query.http.pagination?.page_size;
    const req = reads.query.params.filter((p) => p.required);
    if (req.length || page)
      parts.push(
        `list${req.length ? ` (required: ${req.map(paramText).join(', ')})` : ''}${page ? ` ${page}/page` : ''}`,
      );
    const sort = sortText(reads.query, entity);
    if (sort) parts.push(sort);
    // Filters named and typed like a field are taught by the field list; only the others are spelt out.
    const odd = reads.query.params.filter((p) => !req.includes(p) && !sameAsField(p, entity));
    if (odd.length) parts.push(`filters: ${odd.map(paramText).join(', ')}`);
  } else if (reads.search) {
    form = `${sym}(${reads.search.params
      .filter((p) => p.required)
      .map((p) => `${p.name}=$`)
      .join(', ')})[..]`;
  } else {
    form = `${sym}("<id>")[..]`;
  }
  if (reads.get) parts.push(`one: ${sym}(${exampleId(reads.get.params.find((p) => p.name === reads.get!.id_param)!)})`);
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
function sortText(cap: Capability, entity: Entity): string | undefined {
  const s = cap.returns === 'rows' ? cap.http.sort : undefined;
  if (!s) return undefined;
  return `sort: ${s.fields.length === entity.fields.length ? 'any field' : s.fields.join(', ')}`;
}

function sameAsField(p: ParamDef, entity: Entity): boolean {
  const f = entity.fields.find((x) => x.name === p.name);
  return !!f && describeType(f) === describeType(p) && p.default === undefined;
}

function capabilityRow(
  sym: string,
  api: string,
  cap: Capability,
  symbols: SymbolTable,
  registry: Registry,
): TeachingRow {
  const onRow = cap.id_param !== undefined;
  const own = cap.params.filter((p) => p.name !== cap.id_param);
  const call = own.length ? `${sym}(${own.map((p) => `${p.name}=$`).join(', ')})` : sym;
  const esym = symbols.entitySymbol(api, cap.entity)?.sym ?? `${api}:${cap.entity}`;
  const form = onRow
    ? `${esym}(${rowId(registry, api, cap.entity)}).${call}`
    : cap.returns === 'rows'
      ? `${call}[..]`
      : call;
  const req = own.filter((p) => p.required);
  const opt = own.filter((p) => !p.required);
  const parts = [
    `${cap.kind} ${api}:${cap.entity}${cap.returns === 'none' ? ' (returns nothing)' : ''}${cap.description ? `: ${cap.description}` : ''}`,
  ];
  if (req.length) parts.push(`required: ${req.map(paramText).join(', ')}`);
  if (opt.length) parts.push(`optional: ${opt.map(paramText).join(', ')}`);
  const entity = registry.entity(api, cap.entity);
  const sort = entity && sortText(cap, entity);
  if (sort) parts.push(sort);
  if (WRITE_KINDS.has(cap.kind)) parts.push('write: needs review');
  return { sym, form, meaning: parts.join(' | ') };
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
  if (cap === reads.get) return `${e.sym}(${exampleId(cap.params.find((p) => p.name === cap.id_param)!)})`;
  if (cap === reads.query || cap === reads.search) return `${e.sym}(${fill(cap.params)})`;
  const m = symbols.capabilitySymbol(api, cap.name);
  if (!m) return undefined;
  const own = cap.params.filter((p) => p.name !== cap.id_param);
  if (cap.id_param !== undefined) {
    const get = reads.get;
    const id = get ? exampleId(get.params.find((p) => p.name === get.id_param)!) : undefined;
    if (id !== undefined) return `${e.sym}(${id}).${m.sym}(${fill(own)})`;
    return `${m.sym}(${fill(cap.params)})`;
  }
  return `${m.sym}(${fill(cap.params)})`;
}
