/**
 * The report of the `peers` benchmark: the opening of each way, per task the tokens and calls of
 * each way and svc's share of the cheapest peer way, totals (tasks; opening + tasks), and the
 * checks: every answer right, and svc's per-task total at most 25 % of the cheapest peer way's.
 */
import type { BenchResult, Check, Metric } from './harness.js';
import type { CallCost, Cost } from './peers-mcp.js';
import { TASKS, type WayName } from './peers-tasks.js';

/** svc's per-task total must be at most this share of the cheapest peer way's. */
export const TARGET_SHARE = 0.25;

export interface WayResult {
  name: WayName;
  /** The opening, by part: label, tokens. */
  opening: Array<[string, number]>;
  openingCalls: number;
  /** Default proxy: its tools/list without its non-MCP fields. */
  toolsPlain?: number;
  tasks: Map<string, { cost: Cost; calls: CallCost[]; error?: string }>;
}

const sum = (parts: Array<[string, number]>) => parts.reduce((a, [, n]) => a + n, 0);
const plural = (n: number, w: string) => `${n} ${w}${n === 1 ? '' : 's'}`;
const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;
const pct = (a: number, b: number) => `${Math.round((a / b) * 100)}%`;

/** `3 calls: written 40, read 900 [svc 38+418, ...]` (the per-call list for up to 6 calls). */
function fmtCost(c: Cost, calls: CallCost[]): string {
  const each =
    calls.length > 0 && calls.length <= 6
      ? ` [${calls.map((x) => `${x.tool} ${x.written}+${x.read}`).join(', ')}]`
      : '';
  return `${plural(c.calls, 'call')}: written ${c.written}, read ${c.read}${each}`;
}

function cheapest(
  peers: WayResult[],
  f: (w: WayResult) => number | undefined,
): { name: WayName; value: number } | undefined {
  let best: { name: WayName; value: number } | undefined;
  for (const w of peers) {
    const v = f(w);
    if (v !== undefined && (!best || v < best.value)) best = { name: w.name, value: v };
  }
  return best;
}

function openingMetrics(ways: WayResult[]): Metric[] {
  return ways.map((w) => ({
    label: `opening ${w.name}`,
    value: sum(w.opening),
    unit: 'count',
    note:
      `${w.opening.map(([l, n]) => `${l} ${n}`).join(' + ')}; ${plural(w.openingCalls, 'tool call')}` +
      (w.toolsPlain !== undefined ? `; tools/list without the proxy's non-MCP fields: ${w.toolsPlain}` : ''),
  }));
}

function taskMetrics(ways: WayResult[], totals: Map<WayName, Cost>, errors: string[]): Metric[] {
  const [svc, ...peers] = ways as [WayResult, ...WayResult[]];
  const metrics: Metric[] = [];
  for (const task of TASKS) {
    let first = true;
    for (const w of ways) {
      const t = w.tasks.get(task.id);
      if (!t) continue;
      if (t.error) errors.push(`${w.name} ${task.id}: ${t.error}`);
      if (!task.extra) {
        const tot = totals.get(w.name)!;
        for (const k of ['written', 'read', 'total', 'compact', 'calls'] as const) tot[k] += t.cost[k];
      }
      const title = first ? `; ${task.title}${task.extra ? ` (${task.extra})` : ''}` : '';
      first = false;
      metrics.push({
        label: `${task.id} ${w.name}`,
        value: t.cost.total,
        unit: 'count',
        note: `${fmtCost(t.cost, t.calls)}${t.error ? '; WRONG ANSWER' : ''}${title}`,
      });
    }
    // T3x has no svc sequence of its own: svc's T3 answers the same question.
    const svcCost = (svc.tasks.get(task.id) ?? svc.tasks.get(task.id.replace(/x$/, '')))?.cost;
    const best = cheapest(peers, (w) => w.tasks.get(task.id)?.cost.total);
    if (svcCost && best)
      metrics.push({
        label: `${task.id} svc ÷ cheapest peer`,
        value: ratio(svcCost.total, best.value),
        unit: 'count',
        note: `cheapest: ${best.name}${task.extra ? ` (svc's T3, ${svcCost.total}, against it)` : ''}`,
      });
  }
  return metrics;
}

export function report(ways: WayResult[], more: Metric[]): BenchResult {
  const [svc, ...peers] = ways as [WayResult, ...WayResult[]];
  const errors: string[] = [];
  const totals = new Map<WayName, Cost>(
    ways.map((w) => [w.name, { written: 0, read: 0, total: 0, compact: 0, calls: 0 }]),
  );
  const metrics = [...openingMetrics(ways), ...taskMetrics(ways, totals, errors)];
  const total = (w: WayResult) => totals.get(w.name)!;
  for (const w of ways)
    metrics.push({ label: `tasks total ${w.name}`, value: total(w).total, unit: 'count', note: fmtCost(total(w), []) });
  const svcTasks = total(svc).total;
  const best = cheapest(peers, (w) => total(w).total)!;
  metrics.push({
    label: 'tasks total svc ÷ cheapest peer',
    value: ratio(svcTasks, best.value),
    unit: 'count',
    note: `cheapest: ${best.name}; informational tasks (T3x) left out`,
  });
  for (const w of peers)
    metrics.push({
      label: `tasks total ${w.name}, compact JSON`,
      value: total(w).compact,
      unit: 'count',
      note: `if the proxy printed results as compact JSON (it prints them indented by 2); svc at ${pct(svcTasks, total(w).compact)} of it`,
    });
  for (const w of ways)
    metrics.push({
      label: `session ${w.name}`,
      value: sum(w.opening) + total(w).total,
      unit: 'count',
      note: `opening + tasks; ${plural(w.openingCalls + total(w).calls, 'call')}`,
    });
  const bestSession = cheapest(peers, (w) => sum(w.opening) + total(w).total)!;
  metrics.push({
    label: 'session svc ÷ cheapest peer',
    value: ratio(sum(svc.opening) + svcTasks, bestSession.value),
    unit: 'count',
    note: `cheapest: ${bestSession.name}`,
  });
  metrics.push(...more);
  const checks: Check[] = ways.map((w) => {
    const wrong = errors.filter((e) => e.startsWith(`${w.name} `));
    return {
      target: `${w.name}: every task's answer matches the vendor data`,
      pass: wrong.length === 0,
      actual: wrong.length ? wrong.join('; ') : `${w.tasks.size} tasks right`,
    };
  });
  checks.push({
    target: `svc per-task total ≤ ${TARGET_SHARE * 100}% of the cheapest peer way`,
    pass: svcTasks <= TARGET_SHARE * best.value,
    actual: `svc ${svcTasks} vs ${best.name} ${best.value}: ${pct(svcTasks, best.value)}`,
  });
  return { metrics, checks };
}
