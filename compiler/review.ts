/**
 * Dry-run review of a plan: verdict `proceed` (no remote mutation and a bounded flow) or `review`;
 * flow warnings; the number of remote-mutation steps; an upper bound of the vendor calls it makes
 * (against a budget); a short account of the DAG. Linear in the plan's size.
 */
import type { Capability } from '../pack/cgs.js';
import type { Registry } from '../pack/registry.js';
import { DEFAULT_MAX_VENDOR_CALLS } from './limits.js';
import type { FlowWarning, Plan, PlanArg, PlanNest, PlanStep, Review } from './plan.js';

/** A list step asking for more rows than this is an unbounded list. */
export const REVIEW_MAX_ROWS = 1000;
/** A fan-out over more rows than this is large. */
export const REVIEW_MAX_FANOUT_ROWS = 25;

/**
 * Review a plan. `maxCalls` is the budget of vendor calls (default `DEFAULT_MAX_VENDOR_CALLS`): a
 * plan that may make more gets the flow warning `over_call_budget`, so it runs only when accepted.
 */
export function reviewPlan(plan: Plan, registry: Registry, maxCalls: number = DEFAULT_MAX_VENDOR_CALLS): Review {
  const warnings = new Set<FlowWarning>();
  const rowsOf = new Map<string, number>();
  /** Steps that may return more than REVIEW_MAX_ROWS rows, and whether a limit on the step alone bounds each. */
  const unbounded: string[] = [];
  let limitBounds = true;
  let calls = 0;
  for (const s of plan.steps) {
    const cap = registry.capability(s.api, s.capability);
    const rows = maxRows(s, cap, rowsOf);
    rowsOf.set(s.id, rows);
    if (rows > REVIEW_MAX_ROWS) {
      warnings.add('unbounded_list');
      unbounded.push(s.id);
      // A fan-out multiplies the rows of each call: a limit on the step may not bring it under.
      if (s.fanout) limitBounds = false;
    }
    if (s.fanout && (rowsOf.get(s.fanout.from) ?? Infinity) > REVIEW_MAX_FANOUT_ROWS) warnings.add('large_fanout');
    calls += callsOf(s, cap, rowsOf);
    for (const n of s.nest ?? []) calls += nestCalls(n, rows, registry, s.api, warnings);
  }
  const bounded = Number.isSafeInteger(calls);
  if (!bounded || calls > maxCalls) warnings.add('over_call_budget');
  const mutations = plan.steps.filter((s) => s.effect === 'write').length;
  const flow = warnings.size ? [...warnings].sort() : 'clean';
  const lines = describeSteps(plan);
  if (unbounded.length) {
    const atOnce = limitBounds && mutations === 0 && warnings.size === 1;
    lines.unshift(
      `${unbounded.join(', ')} may return more than ${REVIEW_MAX_ROWS} rows (unbounded_list): ${
        atOnce
          ? `add limit=N (N up to ${REVIEW_MAX_ROWS}) and the read runs at once, without a pcN`
          : `add limit=N (N up to ${REVIEW_MAX_ROWS}; in a fan-out, rows per call) to bound it`
      }`,
    );
  }
  if (warnings.has('over_call_budget')) {
    lines.unshift(
      `${bounded ? `up to ${calls}` : 'an unbounded number of'} vendor calls (budget ${maxCalls}): dry-run and accept it with its pcN, or narrow it (filters, a smaller limit=, fewer statements)`,
    );
  }
  return {
    verdict: mutations === 0 && flow === 'clean' ? 'proceed' : 'review',
    flow,
    mutations,
    max_calls: bounded ? calls : null,
    text: lines.join('\n'),
  };
}

/** Upper bound of the vendor calls of one step (see runtime/fetch-rows.ts): pages per call, times the fan-out. */
function callsOf(s: PlanStep, cap: Capability | undefined, rowsOf: Map<string, number>): number {
  const pages = pagesPerCall(cap, s.limit);
  if (!s.fanout) return pages;
  // More source rows than `fanout.max` fail the step before any call.
  return pages * Math.min(rowsOf.get(s.fanout.from) ?? Infinity, s.fanout.max);
}

/** Pages one call of `cap` fetches: one without `limit`; with it, pages of min(limit, max_page_size) rows until the limit. */
function pagesPerCall(cap: Capability | undefined, limit: number | undefined): number {
  const pg = cap?.returns === 'rows' ? cap.http.pagination : undefined;
  return pg && limit !== undefined ? Math.ceil(limit / Math.max(1, Math.min(pg.max_page_size, limit))) : 1;
}

/** Rows one call of `cap` yields at most: 1 for a row, 0 for nothing, the limit or one page for a list. */
function rowsPerCall(cap: Capability | undefined, limit: number | undefined): number {
  if (cap?.returns === 'rows') return limit ?? cap.http.pagination?.page_size ?? Infinity;
  return cap?.returns === 'none' ? 0 : 1;
}

/** Upper bound of the vendor calls of a nest over `parentRows` rows (one call per distinct key, at most `max`). */
function nestCalls(
  n: PlanNest,
  parentRows: number,
  registry: Registry,
  api: string,
  warnings: Set<FlowWarning>,
): number {
  const cap = registry.capability(api, n.capability);
  if (parentRows > REVIEW_MAX_FANOUT_ROWS) warnings.add('large_fanout');
  const fanned = Math.min(parentRows, n.max);
  let calls = pagesPerCall(cap, n.limit) * fanned;
  for (const d of n.nest ?? []) calls += nestCalls(d, rowsPerCall(cap, n.limit) * fanned, registry, api, warnings);
  return calls;
}

/** Upper bound of the rows a step yields: 1 for a row, the limit or one page for lists. */
function maxRows(s: PlanStep, cap: Capability | undefined, rowsOf: Map<string, number>): number {
  const per = rowsPerCall(cap, s.limit);
  return s.fanout ? per * (rowsOf.get(s.fanout.from) ?? 1) : per;
}

/** `+ customer: getCustomer(id=.customerId) [name] once per distinct row (at most 50)` */
function describeNest(n: PlanNest): string {
  const args = Object.entries(n.args)
    .map(([k, v]) => `${k}=${'lit' in v ? JSON.stringify(v.lit) : `.${v.field}`}`)
    .join(', ');
  const inner = (n.nest ?? []).map((d) => ` ${describeNest(d)}`).join('');
  const proj = n.projection ? ` [${n.projection.join(',')}]` : '';
  const limit = `${n.limit ? ` limit ${n.limit}` : ''}${n.sort ? ` sort ${n.sort.field} ${n.sort.order}` : ''}`;
  return `+ ${n.relation}: ${n.capability}(${args})${limit}${proj} once per distinct row (at most ${n.max})${inner}`;
}

function arg(v: PlanArg): string {
  return 'lit' in v ? JSON.stringify(v.lit) : `${v.ref.step}.${v.ref.field}`;
}

/** One line per step; the bindings and returns of every step are looked up once, not per step. */
function describeSteps(plan: Plan): string[] {
  const boundTo = new Map<string, string[]>();
  for (const name in plan.bind) {
    const id = plan.bind[name]!;
    const names = boundTo.get(id);
    if (names) names.push(name);
    else boundTo.set(id, [name]);
  }
  const returned = new Set(plan.return);
  // Written by concatenation (no arrays of parts to join): this runs for every step of every plan.
  return plan.steps.map((s) => {
    let line = `${s.id} ${s.effect === 'write' ? 'WRITE' : 'read'} ${s.api}:${s.entity} ${s.capability}(`;
    let sep = '';
    for (const k in s.args) {
      line += `${sep}${k}=${arg(s.args[k]!)}`;
      sep = ', ';
    }
    line += ')';
    if (s.limit) line += ` limit ${s.limit}`;
    if (s.sort) line += ` sort ${s.sort.field} ${s.sort.order}`;
    if (s.fanout) line += ` once per row of ${s.fanout.from} (at most ${s.fanout.max})`;
    if (s.projection) line += ` [${joined(s.projection, ',')}]`;
    for (const n of s.nest ?? []) line += ` ${describeNest(n)}`;
    const bound = boundTo.get(s.id);
    if (bound) line += ` as ${joined(bound, ', ')}`;
    if (returned.has(s.id)) line += ' -> returned';
    return line;
  });
}

/** `xs.join(sep)` for the few names of a projection or a step's bindings (join costs more for those). */
function joined(xs: string[], sep: string): string {
  let out = xs[0] ?? '';
  for (let i = 1; i < xs.length; i++) out += sep + (xs[i] ?? '');
  return out;
}
