/**
 * The nests of a client plan step checked against the catalog: each follows a relation of the
 * step's entity through that relation's capability, binds the relation's fields, passes
 * arguments the capability takes with values of their types, and keeps the server's bounds.
 * Pure; problems are reported through `bad`.
 */
import { READ_KINDS, type Entity } from '../../pack/cgs.js';
import { paramValueFits, valueProblem } from '../../pack/param-constraints.js';
import type { Registry } from '../../pack/registry.js';
import type { PlanNest } from '../../compiler/plan.js';
import { DEFAULT_MAX_FANOUT, DEFAULT_MAX_LIMIT } from '../../compiler/resolve.js';

/** The names a projection of `entity` rows may keep: its fields and the relations nested in them. */
export function projectable(entity: Entity | undefined, nests: readonly PlanNest[] | undefined): string[] {
  return [...(entity?.fields.map((f) => f.name) ?? []), ...(nests ?? []).map((n) => n.relation)];
}

/** Check the nests hanging from rows of `entity` (in catalog `api`). */
export function checkNests(
  registry: Registry,
  api: string,
  entity: Entity | undefined,
  nests: readonly PlanNest[],
  bad: (message: string) => void,
): void {
  const seen = new Set<string>();
  for (const n of nests) {
    const at = `nest \`${n.relation}\``;
    if (seen.has(n.relation)) bad(`${at} is given twice`);
    seen.add(n.relation);
    const rel = entity?.relations.find((r) => r.name === n.relation);
    if (!entity || !rel) {
      bad(`${at}: ${api}:${entity?.name ?? '?'} has no such relation`);
      continue;
    }
    const cap = registry.capability(api, n.capability);
    const target = registry.entity(api, n.entity);
    if (!cap || !target || rel.capability !== cap.name || rel.target !== target.name || rel.cardinality !== n.card) {
      bad(`${at} does not follow the relation as the catalog defines it`);
      continue;
    }
    if (!READ_KINDS.has(cap.kind)) bad(`${at}: \`${cap.name}\` is not a read`);
    for (const [param, field] of Object.entries(rel.bind)) {
      const a = n.args[param];
      if (!a || !('field' in a) || a.field !== field) bad(`${at} must take \`${param}\` from the row's \`${field}\``);
    }
    for (const [name, arg] of Object.entries(n.args)) {
      const p = cap.params.find((x) => x.name === name);
      if (!p) bad(`${at}: \`${cap.name}\` takes no argument \`${name}\``);
      else if ('lit' in arg && arg.lit !== null && !paramValueFits(p, arg.lit))
        bad(`${at}: \`${name}\` does not fit its type ${p.type}`);
      else if ('lit' in arg && arg.lit !== null && valueProblem(p, arg.lit))
        bad(`${at}: ${valueProblem(p, arg.lit)!.message}`);
      else if ('field' in arg && !entity.fields.some((f) => f.name === arg.field))
        bad(`${at}: the row has no field \`${arg.field}\``);
    }
    for (const p of cap.params)
      if (p.required && !(p.name in n.args)) bad(`${at}: \`${cap.name}\` needs \`${p.name}\``);
    if (n.max > DEFAULT_MAX_FANOUT) bad(`${at} makes up to ${n.max} calls; the limit is ${DEFAULT_MAX_FANOUT}`);
    if (n.limit !== undefined && (n.limit > DEFAULT_MAX_LIMIT || cap.returns !== 'rows'))
      bad(`${at}: limit ${n.limit} is not allowed here`);
    if (n.sort && !(cap.returns === 'rows' && cap.http.sort?.fields.includes(n.sort.field)))
      bad(`${at}: \`${cap.name}\` does not sort by \`${n.sort.field}\``);
    if (n.projection) {
      const names = projectable(target, n.nest);
      const unknown = n.projection.filter((f) => !names.includes(f));
      if (unknown.length) bad(`${at} projects unknown fields ${unknown.join(', ')}`);
    }
    if (n.nest) checkNests(registry, api, target, n.nest, bad);
  }
}
