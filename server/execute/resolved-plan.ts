/**
 * Resolved-plan execute: a plan IR compiled by a client. The server never sees symbols; it checks
 * the shape (JSON Schema), the catalog pins against what it holds, and every step against the
 * catalog (capability, entity, kind, effect, arguments, their types and constraints, sort, dependencies), so a
 * tampered plan cannot dodge the review gate. Pure.
 */
import { svcError, SvcFailure, type SvcError } from '../../common/errors.js';
import { WRITE_KINDS } from '../../pack/cgs.js';
import { headerValueProblem } from '../../pack/header-values.js';
import { paramValueFits, valueProblem } from '../../pack/param-constraints.js';
import type { Registry } from '../../pack/registry.js';
import { planCommitId, type Plan, type Review } from '../../compiler/plan.js';
import { reviewPlan } from '../../compiler/review.js';
import { validatePlanShape } from '../../compiler/validate-plan.js';
import { DEFAULT_MAX_FANOUT, DEFAULT_MAX_LIMIT } from '../../compiler/resolve.js';
import { checkNests, projectable } from './resolved-nest.js';

/** The media type of a resolved-plan request. */
export const RESOLVED_PLAN_TYPE = 'application/vnd.svc.resolved-plan+json';

/** A client plan checked, without its unhashed fields, with its commit id and review. */
export function reviewResolvedPlan(
  data: unknown,
  registry: Registry,
  maxCalls: number,
): { plan: Plan; commit_id: string; review: Review } {
  const checked = checkResolvedPlan(data, registry);
  const plan: Plan = { version: checked.version, steps: checked.steps, bind: checked.bind, return: checked.return };
  return { plan, commit_id: planCommitId(plan), review: reviewPlan(plan, registry, maxCalls) };
}

/** Check a client plan; throws SvcFailure with every problem found. */
export function checkResolvedPlan(data: unknown, registry: Registry): Plan {
  const shape = validatePlanShape(data);
  if (shape.length) throw new SvcFailure(shape);
  const plan = data as Plan;
  const problems: SvcError[] = [];
  const bad = (i: number, message: string, hint: string) =>
    problems.push(
      svcError('bad_arguments', `step ${plan.steps[i]?.id ?? i}: ${message}`, { path: `/steps/${i}`, hint }),
    );
  const index = new Map(plan.steps.map((x, i) => [x.id, i]));
  for (const [i, st] of plan.steps.entries()) {
    const entry = registry.get(st.api);
    if (!entry || entry.cgs_hash !== st.cgs_hash) {
      throw new SvcFailure([
        svcError(
          'catalog_mismatch',
          `the plan was compiled against ${st.api} ${st.cgs_hash.slice(0, 12)}, this server holds ${entry ? entry.cgs_hash.slice(0, 12) : 'no such catalog'}`,
          { hint: 'refresh the context (svc context --new) and compile the program again' },
        ),
      ]);
    }
    if (st.id !== `n${i + 1}`)
      bad(i, `steps are numbered n1, n2, ... in order (found ${st.id})`, 'compile the program again');
    const cap = registry.capability(st.api, st.capability);
    if (!cap) {
      bad(i, `${st.api} has no capability \`${st.capability}\``, 'compile the program again');
      continue;
    }
    if (cap.entity !== st.entity)
      bad(i, `\`${st.capability}\` is about ${cap.entity}, not ${st.entity}`, 'compile the program again');
    if (cap.kind !== st.op)
      bad(i, `\`${st.capability}\` is a ${cap.kind}, not a ${st.op}`, 'compile the program again');
    const effect = WRITE_KINDS.has(cap.kind) ? 'write' : 'read';
    if (st.effect !== effect)
      bad(
        i,
        `\`${st.capability}\` is a ${effect}, the plan says ${st.effect}`,
        'a plan cannot relabel a write; compile the program again',
      );
    for (const [name, arg] of Object.entries(st.args)) {
      const p = cap.params.find((x) => x.name === name);
      if (!p) {
        bad(i, `\`${st.capability}\` takes no argument \`${name}\``, 'compile the program again');
        continue;
      }
      if ('lit' in arg && arg.lit !== null && !paramValueFits(p, arg.lit))
        bad(i, `\`${name}\` does not fit its type ${p.type}`, 'compile the program again');
      else if ('lit' in arg && arg.lit !== null && valueProblem(p, arg.lit))
        bad(i, valueProblem(p, arg.lit)!.message, 'compile the program again');
      else if ('lit' in arg && arg.lit !== null && headerValueProblem(cap, name, arg.lit)) {
        const header = headerValueProblem(cap, name, arg.lit)!;
        bad(i, header.message, header.hint!);
      }
      if ('ref' in arg && !st.depends_on.includes(arg.ref.step))
        bad(i, `\`${name}\` refers to ${arg.ref.step}, which is not in depends_on`, 'compile the program again');
    }
    for (const p of cap.params)
      if (p.required && !(p.name in st.args))
        bad(i, `\`${st.capability}\` needs \`${p.name}\``, 'compile the program again');
    const least = cap.at_least_one ?? [];
    if (least.length && !least.some((n) => n in st.args))
      bad(i, `\`${st.capability}\` needs at least one of ${least.join(', ')}`, 'compile the program again');
    for (const d of [
      ...st.depends_on,
      ...(st.fanout ? [st.fanout.from] : []),
      ...(st.via?.from ? [st.via.from] : []),
    ]) {
      const j = index.get(d) ?? -1;
      if (j < 0 || j >= i) bad(i, `depends on ${d}, which is not an earlier step`, 'compile the program again');
    }
    // A client plan cannot raise the limits a compiled program has.
    if (st.fanout && st.fanout.max > DEFAULT_MAX_FANOUT)
      bad(
        i,
        `fans out over at most ${st.fanout.max} rows; the limit is ${DEFAULT_MAX_FANOUT}`,
        'compile the program again',
      );
    if (st.limit !== undefined && st.limit > DEFAULT_MAX_LIMIT)
      bad(
        i,
        `asks for ${st.limit} rows; the limit is ${DEFAULT_MAX_LIMIT}`,
        'compile the program again with a smaller limit=',
      );
    if (st.sort && !(cap.returns === 'rows' && cap.http.sort?.fields.includes(st.sort.field)))
      bad(
        i,
        cap.returns === 'rows' && cap.http.sort
          ? `\`${st.capability}\` does not sort by \`${st.sort.field}\``
          : `\`${st.capability}\` does not sort`,
        'compile the program again',
      );
    const entity = registry.entity(st.api, st.entity);
    if (st.projection) {
      const names = projectable(entity, st.nest);
      const unknown = st.projection.filter((f) => !names.includes(f));
      if (unknown.length) bad(i, `projects unknown fields ${unknown.join(', ')}`, 'compile the program again');
    }
    if (st.nest) checkNests(registry, st.api, entity, st.nest, (m) => bad(i, m, 'compile the program again'));
  }
  const ids = new Set(plan.steps.map((x) => x.id));
  for (const r of [...plan.return, ...Object.values(plan.bind)])
    if (!ids.has(r))
      problems.push(
        svcError('bad_arguments', `return or bind names unknown step ${r}`, { hint: 'compile the program again' }),
      );
  if (problems.length) throw new SvcFailure(problems);
  return plan;
}
