/**
 * One run of a plan: steps start in dependency order (independent steps concurrently, bounded by
 * the limiter), a failed dependency skips its dependents, cancellation and the overall deadline
 * abort what is in flight, and progress events report each phase. Never throws for a vendor failure.
 */
import { svcError, type SvcError } from '../common/errors.js';
import type { Registry, RegistryEntry } from '../pack/registry.js';
import type { Plan, PlanStep } from '../compiler/plan.js';
import { BACKGROUND_DEADLINE_HINT, DEADLINE_HINT, RunAbort, type CallContext } from './call.js';
import { cancelledBy } from './cancel.js';
import { Cancel } from './signal.js';
import { project, type Row } from './decode.js';
import { budgetOf, RUNTIME_DEFAULTS, type ExecuteOptions } from './execute-options.js';
import { fetchRows, pageState, type CallBudget, type FetchOptions, type PageState } from './fetch-rows.js';
import { limiter, type Limiter } from './limiter.js';
import { coalesceProgress, type RunStatus, type StepPhase } from './progress.js';
import type { Values } from './request.js';
import type { ReturnedRows, RunResult, StepResult } from './run-result.js';
import { valueSets } from './value-sets.js';
import { doneLine } from './done-line.js';
import { attachNests, type NestContext } from './nest.js';
import { GraphFetch } from './graph-fetch.js';

/** One execution of a checked plan (`executePlan` builds it after its checks); `execute()` answers the RunResult. */
export class Run {
  private readonly results = new Map<string, StepResult>();
  /** Aborted by the caller, shutdown or the deadline; what the run's calls listen to. */
  private readonly cancel = new Cancel();
  /** Progress events, coalesced; none are built when nobody listens (a waited HTTP read). */
  private readonly progress: ReturnType<typeof coalesceProgress> | undefined;
  private readonly limit: Limiter;
  private readonly budget: CallBudget | undefined;
  private readonly graph: GraphFetch;

  constructor(
    private readonly plan: Plan,
    private readonly registry: Registry,
    private readonly entries: Map<string, RegistryEntry>,
    private readonly ctx: CallContext,
    private readonly opts: ExecuteOptions,
    private readonly started: number,
  ) {
    this.progress = opts.onProgress
      ? coalesceProgress((e) => opts.onProgress?.(e), opts.progressIntervalMs)
      : undefined;
    this.limit = limiter(opts.concurrency ?? RUNTIME_DEFAULTS.concurrency);
    this.budget = budgetOf(opts);
    this.graph = new GraphFetch(opts.graph, registry, ctx.now, plan);
  }

  private elapsed(): number {
    return this.ctx.now() - this.started;
  }

  async execute(): Promise<RunResult> {
    const detach = cancelledBy(this.cancel, this.opts);
    const deadline = setTimeout(
      () =>
        this.cancel.abort(
          new RunAbort('deadline_exceeded', this.opts.background ? BACKGROUND_DEADLINE_HINT : DEADLINE_HINT),
        ),
      this.opts.deadlineMs ?? RUNTIME_DEFAULTS.deadlineMs,
    );
    deadline.unref?.();
    this.progress?.push({ kind: 'start', phase: 'started', pages: 0, rows: 0, calls: 0, elapsed_ms: 0 });
    try {
      await this.schedule();
    } finally {
      clearTimeout(deadline);
      detach();
    }
    return this.finish();
  }

  /** Start every step whose dependencies are done; a failed dependency skips its dependents. */
  private async schedule(): Promise<void> {
    const steps = this.plan.steps;
    const running = new Map<string, Promise<void>>();
    const waiting = new Set(steps.map((s) => s.id));
    while (waiting.size || running.size) {
      for (const s of steps) {
        if (!waiting.has(s.id)) continue;
        const deps = s.depends_on.map((d) => this.results.get(d));
        const ended = deps.every((d) => d) || deps.some((d) => d && d.status !== 'done');
        if (!ended && !this.cancel.aborted) continue;
        waiting.delete(s.id);
        const started = this.begin(s, deps);
        if (started)
          running.set(
            s.id,
            started.finally(() => running.delete(s.id)),
          );
      }
      if (running.size) await Promise.race(running.values());
      else if (waiting.size) break; // unreachable for a valid DAG; avoids a spin on a malformed one
    }
  }

  /**
   * Step `s`, its dependencies ended (or the run aborted): recorded as cancelled, past the deadline
   * or skipped after a failed dependency, or started (its promise).
   */
  private begin(s: PlanStep, deps: Array<StepResult | undefined>): Promise<void> | undefined {
    if (this.cancel.aborted) {
      const reason = this.cancel.reason instanceof RunAbort ? this.cancel.reason : undefined;
      this.record(
        s,
        reason?.code === 'deadline_exceeded'
          ? {
              status: 'failed',
              error: svcError('deadline_exceeded', `step ${s.id} did not start: the run passed its deadline`, {
                hint: reason.hint,
              }),
            }
          : {
              status: 'cancelled',
              error: svcError('cancelled', `step ${s.id} did not start: the run was cancelled`, {
                hint: 'completed steps are reported',
              }),
            },
      );
      return undefined;
    }
    if (deps.some((d) => d && d.status !== 'done')) {
      const failed = s.depends_on.find((d) => this.results.get(d)?.status !== 'done');
      this.record(s, {
        status: 'skipped',
        error: svcError('step_skipped', `step ${s.id} did not run because ${failed} did not complete`, {
          hint: `fix the error of ${failed} first`,
        }),
      });
      return undefined;
    }
    return this.runStep(s);
  }

  private record(s: PlanStep, r: Partial<StepResult> & { status: StepPhase }): void {
    this.settle({ id: s.id, rows: [], calls: 0, pages: 0, ms: 0, ...r });
  }

  private settle(r: StepResult): void {
    this.results.set(r.id, r);
    this.progress?.push({
      kind: 'step',
      step: r.id,
      phase: r.status,
      pages: r.pages,
      rows: r.rows.length,
      calls: r.calls,
      elapsed_ms: this.elapsed(),
    });
  }

  private async runStep(s: PlanStep): Promise<void> {
    const t0 = this.ctx.now();
    const entry = this.entries.get(s.api)!;
    const cap = this.registry.capability(s.api, s.capability)!;
    const entity = this.registry.entity(s.api, s.entity)!;
    this.progress?.push({
      kind: 'step',
      step: s.id,
      phase: 'running',
      pages: 0,
      rows: 0,
      calls: 0,
      elapsed_ms: this.elapsed(),
    });
    const calls = valueSets(s, cap, this.results);
    if ('error' in calls) return this.record(s, { status: 'failed', error: calls.error, ms: this.ctx.now() - t0 });
    let [pages, callCount, rowCount, fromGraph] = [0, 0, 0, 0];
    this.graph.written(s, cap);
    // Rows of a fan-out are kept in source order, whatever order the calls finish in.
    const parts: Row[][] = calls.sets.map(() => []);
    let total: number | undefined;
    let totalIgnored: string | undefined;
    let page: PageState | undefined;
    let error: SvcError | undefined;
    const one = async (values: Values, i: number): Promise<void> => {
      if (error) return;
      const f = await this.graph.fetch(s, cap, values, () => {
        const opts: FetchOptions = { signal: this.cancel };
        const progress = this.progress;
        if (progress)
          opts.onPage = (n, p, c) =>
            progress.push({
              kind: 'step',
              step: s.id,
              phase: 'running',
              pages: pages + p,
              rows: rowCount + n,
              calls: callCount + c,
              elapsed_ms: this.elapsed(),
            });
        if (s.limit !== undefined) opts.limit = s.limit;
        if (s.sort) opts.sort = s.sort;
        if (this.budget) opts.budget = this.budget;
        return fetchRows(this.ctx, entry, entity, cap, values, opts);
      });
      if (f.graph) fromGraph++;
      pages += f.pages;
      callCount += f.calls;
      rowCount += f.rows.length;
      parts[i] = f.rows;
      if (f.error) {
        error ??= f.error;
        return;
      }
      if (calls.sets.length === 1) {
        if (f.total !== undefined) total = f.total;
        if (f.totalIgnored !== undefined) totalIgnored = f.totalIgnored;
        if (f.next || f.leftover?.length) page = pageState(s, values, f);
      }
    };
    await Promise.all(calls.sets.map((values, i) => this.limit(() => one(values, i))));
    const rows = parts.flat();
    if (!error) this.graph.read(s, cap, entity, rows);
    this.graph.written(s, cap);
    if (!error && s.nest?.length) {
      const n = await attachNests(this.nestContext(s), rows, s.nest);
      pages += n.pages;
      callCount += n.calls;
      error = n.error;
    }
    const status: StepPhase = error ? (error.code === 'cancelled' ? 'cancelled' : 'failed') : 'done';
    const r: StepResult = { id: s.id, status, rows, calls: callCount, pages, ms: this.ctx.now() - t0 };
    if (error) r.error = error;
    if (fromGraph) r.graph = fromGraph;
    if (total !== undefined) r.total = total;
    if (totalIgnored !== undefined) r.total_ignored = totalIgnored;
    if (page) r.page = page;
    if (status === 'done' && cap.returns === 'none') r.done = doneLine(s.api, cap, calls.sets);
    this.settle(r);
  }

  private nestContext(s: PlanStep): NestContext {
    return {
      ctx: this.ctx,
      registry: this.registry,
      entry: (api) => this.entries.get(api),
      api: s.api,
      limit: this.limit,
      signal: this.cancel,
      ...(this.budget ? { budget: this.budget } : {}),
    };
  }

  private finish(): RunResult {
    const steps: Record<string, StepResult> = {};
    const errors: SvcError[] = [];
    for (const s of this.plan.steps) {
      const r = this.results.get(s.id) ?? {
        id: s.id,
        status: 'cancelled' as const,
        rows: [],
        calls: 0,
        pages: 0,
        ms: 0,
      };
      steps[s.id] = r;
      if (r.error) errors.push({ ...r.error, path: `/steps/${s.id}` });
    }
    const returns: ReturnedRows[] = this.plan.return.map((id) => {
      const s = this.plan.steps.find((x) => x.id === id)!;
      const r = steps[id]!;
      // A step the cancel interrupted returns nothing: its partial rows stay in the step result
      // (and the run artifact), but the answer holds the rows of completed steps only.
      if (r.status === 'cancelled') return { step: id, entity: `${s.api}:${s.entity}`, rows: [] };
      const out: ReturnedRows = { step: id, entity: `${s.api}:${s.entity}`, rows: project(r.rows, s.projection) };
      if (r.total !== undefined) out.total = r.total;
      if (r.total_ignored !== undefined) out.total_ignored = r.total_ignored;
      if (r.page) out.page = r.page;
      if (r.done) out.done = r.done;
      return out;
    });
    const aborted = this.cancel.reason instanceof RunAbort ? this.cancel.reason.code : undefined;
    const status: RunStatus = aborted === 'cancelled' ? 'cancelled' : errors.length ? 'failed' : 'succeeded';
    const elapsed = this.elapsed();
    this.progress?.push({
      kind: 'end',
      phase: status,
      pages: sum(steps, 'pages'),
      rows: returns.reduce((n, r) => n + r.rows.length, 0),
      calls: sum(steps, 'calls'),
      elapsed_ms: elapsed,
    });
    this.progress?.close();
    return { status, steps, returns, errors, elapsed_ms: elapsed };
  }
}

function sum(steps: Record<string, StepResult>, k: 'pages' | 'calls'): number {
  return Object.values(steps).reduce((n, s) => n + s[k], 0);
}
