/**
 * Dry-run review of a plan: verdict `proceed` (no remote mutation and a bounded flow) or `review`;
 * flow warnings; the number of remote-mutation steps; a short account of the DAG.
 */
import type { Registry } from '../pack/registry.js';
import type { FlowWarning, Plan, PlanArg, PlanStep, Review } from './plan.js';

/** A list step asking for more rows than this is an unbounded list. */
export const REVIEW_MAX_ROWS = 1000;
/** A fan-out over more rows than this is large. */
export const REVIEW_MAX_FANOUT_ROWS = 25;

export function reviewPlan(plan: Plan, registry: Registry): Review {
  const warnings = new Set<FlowWarning>();
  const rowsOf = new Map<string, number>();
  for (const s of plan.steps) {
    const rows = maxRows(s, registry, rowsOf);
    rowsOf.set(s.id, rows);
    if (rows > REVIEW_MAX_ROWS) warnings.add('unbounded_list');
    if (s.fanout && (rowsOf.get(s.fanout.from) ?? Infinity) > REVIEW_MAX_FANOUT_ROWS) warnings.add('large_fanout');
  }
  const mutations = plan.steps.filter((s) => s.effect === 'write').length;
  const flow = warnings.size ? [...warnings].sort() : 'clean';
  return {
    verdict: mutations === 0 && flow === 'clean' ? 'proceed' : 'review',
    flow,
    mutations,
    text: plan.steps.map((s) => describeStep(s, plan)).join('\n'),
  };
}

/** Upper bound of the rows a step yields: 1 for a row, the limit or one page for lists. */
function maxRows(s: PlanStep, registry: Registry, rowsOf: Map<string, number>): number {
  const cap = registry.capability(s.api, s.capability);
  const per = cap?.returns === 'rows' ? (s.limit ?? cap.http.pagination?.page_size ?? Infinity) : cap?.returns === 'none' ? 0 : 1;
  return s.fanout ? per * (rowsOf.get(s.fanout.from) ?? 1) : per;
}

function arg(v: PlanArg): string {
  return 'lit' in v ? JSON.stringify(v.lit) : `${v.ref.step}.${v.ref.field}`;
}

function describeStep(s: PlanStep, plan: Plan): string {
  const args = Object.entries(s.args).map(([k, v]) => `${k}=${arg(v)}`).join(', ');
  const parts = [`${s.id} ${s.effect === 'write' ? 'WRITE' : 'read'} ${s.api}:${s.entity} ${s.capability}(${args})`];
  if (s.limit) parts.push(`limit ${s.limit}`);
  if (s.fanout) parts.push(`once per row of ${s.fanout.from} (at most ${s.fanout.max})`);
  if (s.projection) parts.push(`[${s.projection.join(',')}]`);
  const bound = Object.entries(plan.bind).filter(([, v]) => v === s.id).map(([k]) => k);
  if (bound.length) parts.push(`as ${bound.join(', ')}`);
  if (plan.return.includes(s.id)) parts.push('-> returned');
  return parts.join(' ');
}
