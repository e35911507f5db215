/**
 * The projection at the end of a chain (`[name,city]`, `[id, r6[name], comments(limit=50)[id]]`):
 * each name is a field of the rows the chain returns, or a relation of their entity whose rows are
 * attached to each row (a nest). A nest's arguments go through `buildStep` like any relation's
 * (so filters, `limit=` and their errors are the same); the step it makes is taken back and kept
 * as the nest, whose call takes the relation's bound fields from each row.
 */
import { quote } from '../common/quote.js';
import { suggestHint } from '../common/suggest.js';
import type { Entity } from '../pack/cgs.js';
import type { Chain, Name, NestedItem, Projection } from './ast.js';
import { buildStep } from './build-step.js';
import { relationIntoPath } from './path-value.js';
import type { NestArg, PlanArg, PlanNest } from './plan.js';
import { MAX_NEST_DEPTH } from './plan-schema.js';
import { listOf, type ResolveState, type Shape } from './resolve-state.js';

/** Check `chain.projection` against the fields of `cur` and set the step's projection (and nests). */
export function resolveProjection(st: ResolveState, cur: Shape, chain: Chain): void {
  const projection = chain.projection!;
  if (!cur.own) {
    st.fail(
      'syntax_error',
      projection.span,
      'a projection belongs where the rows are fetched',
      'move the [fields] to the line that binds the name',
    );
    return;
  }
  if (cur.card === 'none') {
    st.fail(
      'projection_unknown_field',
      projection.span,
      `\`${cur.step.capability}\` returns no rows to project`,
      'remove the projection',
    );
    return;
  }
  const out = projectRows(st, cur.api, cur.entity, projection, 0, cur.step.effect === 'write');
  if (!out) return;
  cur.step.projection = out.projection;
  if (out.nest.length) cur.step.nest = out.nest;
}

/** The fields and nests a projection keeps of rows of `entity`; undefined after a diagnostic. */
export function projectRows(
  st: ResolveState,
  api: string,
  entity: Entity,
  projection: Projection,
  depth: number,
  afterWrite = false,
): { projection: string[]; nest: PlanNest[] } | undefined {
  const fields = fieldNames(entity);
  const proj: string[] = [];
  const nest: PlanNest[] = [];
  let ok = true;
  for (const f of projection.fields) {
    const item = projection.nested?.find((n) => n.name === f);
    if (fields.includes(f.text)) {
      if (item) ok = fieldWithExtras(st, f, item) && ok;
      else if (!proj.includes(f.text)) proj.push(f.text);
      continue;
    }
    const rel = relationNamed(st, api, entity, f.text);
    if (!rel) {
      ok =
        st.fail(
          'projection_unknown_field',
          f.span,
          `${api}:${entity.name} has no field \`${quote(f.text)}\``,
          st.suggest(() =>
            suggestHint(f.text, [...fields, ...entity.relations.map((r) => r.name)], listOf('fields or relations')),
          ),
        ) ?? false;
      continue;
    }
    if (proj.includes(rel)) {
      ok = st.fail('duplicate_argument', f.span, `\`${rel}\` is nested twice`, 'keep one of the two') ?? false;
      continue;
    }
    if (afterWrite || depth >= MAX_NEST_DEPTH) {
      ok =
        st.fail(
          'syntax_error',
          f.span,
          afterWrite
            ? `\`${rel}\` cannot be nested in the answer of a write`
            : `nests go at most ${MAX_NEST_DEPTH} levels deep`,
          afterWrite
            ? 'bind the write, then read the row and its relation on the next line: x = m1(...) then e1(x.id)[id, rel[..]]'
            : 'follow the deeper relation on its own line',
        ) ?? false;
      continue;
    }
    const n = resolveNest(st, api, entity, rel, item ?? { name: f, span: f.span }, depth);
    if (!n) {
      ok = false;
      continue;
    }
    proj.push(rel);
    nest.push(n);
  }
  return ok ? { projection: proj, nest } : undefined;
}

/** The field names of an entity, listed once per entity (catalog entities never change). */
const namesOf = new WeakMap<Entity, readonly string[]>();

function fieldNames(entity: Entity): readonly string[] {
  let names = namesOf.get(entity);
  if (!names) namesOf.set(entity, (names = entity.fields.map((f) => f.name)));
  return names;
}

/** A field written with arguments or a projection (`name(x=1)`, `name[a]`). */
function fieldWithExtras(st: ResolveState, f: Name, item: NestedItem): boolean {
  return (
    st.fail(
      'syntax_error',
      item.span,
      `\`${quote(f.text)}\` is a field: it takes no ${item.args ? 'arguments' : 'projection'}`,
      `write just \`${f.text}\`; [..] after a name nests a relation`,
    ) ?? false
  );
}

/** The relation of `entity` written as `name`: its wire name or its r# symbol. */
function relationNamed(st: ResolveState, api: string, entity: Entity, name: string): string | undefined {
  const sym = st.opts.symbols?.lookup(name);
  if (sym?.kind === 'relation' && sym.api === api && sym.entity === entity.name) return sym.relation;
  if (sym) return undefined;
  return entity.relations.find((r) => r.name === name)?.name;
}

/** The nest for relation `relName` of `entity` (depth: how many nests it sits in), or undefined after a diagnostic. */
export function resolveNest(
  st: ResolveState,
  api: string,
  entity: Entity,
  relName: string,
  item: NestedItem,
  depth: number,
): PlanNest | undefined {
  const rel = entity.relations.find((r) => r.name === relName)!;
  const cap = st.opts.registry.capability(api, rel.capability)!;
  const target = st.opts.registry.entity(api, rel.target)!;
  // The related call takes its bound parameters from the row: a placeholder step id stands for it.
  const row = '_row';
  const pre: Record<string, PlanArg> = {};
  for (const [param, field] of Object.entries(rel.bind)) {
    const intoPath = relationIntoPath(entity, rel, cap, param, field);
    if (intoPath) return st.fail('wrong_type', item.span, intoPath.message, intoPath.hint);
    pre[param] = { ref: { step: row, field } };
  }
  const call = { name: item.name, ...(item.args ? { args: item.args } : {}), span: item.span };
  const shape = buildStep(st, api, target, cap, call, item.args ?? [], pre);
  if (!shape) return undefined;
  const step = shape.step;
  st.pop();
  const args: Record<string, NestArg> = {};
  for (const [k, v] of Object.entries(step.args)) args[k] = 'lit' in v ? { lit: v.lit } : { field: v.ref.field };
  const nest: PlanNest = {
    relation: rel.name,
    entity: target.name,
    capability: cap.name,
    card: rel.cardinality,
    args,
    max: st.maxFanout,
  };
  if (step.limit !== undefined) nest.limit = step.limit;
  if (step.sort) nest.sort = step.sort;
  if (item.projection) {
    const inner = projectRows(st, api, target, item.projection, depth + 1);
    if (!inner) return undefined;
    nest.projection = inner.projection;
    if (inner.nest.length) nest.nest = inner.nest;
  }
  return nest;
}
