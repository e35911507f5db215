/**
 * Executing a plan against the vendor APIs: steps in dependency order (independent steps
 * concurrently, bounded), fan-outs bounded, writes only when accepted, cooperative cancellation
 * and an overall deadline. Never throws for a vendor failure: errors come back per step.
 */
import { svcError, type SvcError } from '../common/errors.js';
import type { Capability, Entity, JsonValue } from '../pack/cgs.js';
import type { Registry, RegistryEntry } from '../pack/registry.js';
import type { Plan, PlanStep } from '../compiler/plan.js';
import { AuthResolver, checkSecrets, type Env } from './auth.js';
import { BACKGROUND_DEADLINE_HINT, DEADLINE_HINT, RunAbort, type CallContext } from './call.js';
import { project, type Row } from './decode.js';
import { fetchRows, type CallBudget, type Fetched, type PageState } from './fetch-rows.js';
import { PooledHttpClient, type HttpClient } from './http-client.js';
import { coalesceProgress, type ProgressEvent, type RunStatus, type StepPhase } from './progress.js';
import { DEFAULT_RETRY, type RetryPolicy } from './retry.js';
import type { Values } from './request.js';

export interface ExecuteOptions {
  /** Writes run only when the caller says the plan was accepted (review is the server's job). */
  accepted?: boolean;
  signal?: AbortSignal;
  /** Overall deadline of the run in ms (default 60 000). */
  deadlineMs?: number;
  /** A background run (wait=false): its `deadline_exceeded` does not suggest running in the background. */
  background?: boolean;
  /** Timeout of one vendor request in ms (default 15 000). */
  requestTimeoutMs?: number;
  /** Largest vendor response body in bytes (default 10 MiB). */
  maxBodyBytes?: number;
  /** Steps (and fan-out calls) in flight at once (default 8). */
  concurrency?: number;
  /**
   * Most vendor calls the run may send, across all its steps (one per page request and per
   * fan-out call; retries do not count). The call that would exceed it is not sent and its step
   * fails with `call_budget_exceeded`. Unset: no cap.
   */
  maxCalls?: number;
  retry?: RetryPolicy;
  /** Environment holding the secrets named by catalogs (default process.env). */
  env?: Env;
  http?: HttpClient;
  /** Reuse one resolver to keep OAuth2 tokens across runs. */
  auth?: AuthResolver;
  onProgress?: (e: ProgressEvent) => void;
  /** Coalescing interval of running updates (default 2000 ms). */
  progressIntervalMs?: number;
  now?: () => number;
  random?: () => number;
}

export const RUNTIME_DEFAULTS = { deadlineMs: 60_000, requestTimeoutMs: 15_000, maxBodyBytes: 10 * 1024 * 1024, concurrency: 8 } as const;

export interface StepResult {
  id: string;
  status: StepPhase;
  rows: Row[];
  total?: number;
  page?: PageState;
  error?: SvcError;
  calls: number;
  pages: number;
  ms: number;
}

export interface ReturnedRows {
  step: string;
  /** `api:Entity` */
  entity: string;
  rows: Row[];
  total?: number;
  /** Present when the vendor has more pages: the server puts it behind a `pgN` handle. */
  page?: PageState;
}

export interface RunResult {
  status: RunStatus;
  steps: Record<string, StepResult>;
  returns: ReturnedRows[];
  /** Every step error, each with `path` `/steps/<id>`. */
  errors: SvcError[];
  elapsed_ms: number;
}

function callContext(opts: ExecuteOptions, env: Env): CallContext {
  const http = opts.http ?? defaultHttpClient();
  const now = opts.now ?? Date.now;
  return {
    http,
    auth: opts.auth ?? new AuthResolver(env, http, now),
    requestTimeoutMs: opts.requestTimeoutMs ?? RUNTIME_DEFAULTS.requestTimeoutMs,
    maxBodyBytes: opts.maxBodyBytes ?? RUNTIME_DEFAULTS.maxBodyBytes,
    retry: opts.retry ?? DEFAULT_RETRY,
    now,
    random: opts.random ?? Math.random,
  };
}

let sharedHttp: HttpClient | undefined;
/** The process-wide keep-alive client used when none is passed. */
export function defaultHttpClient(): HttpClient {
  return (sharedHttp ??= new PooledHttpClient());
}

/**
 * Run a validated plan.
 * @example const run = await executePlan(compiled.plan, registry, { accepted: false });
 */
export async function executePlan(plan: Plan, registry: Registry, opts: ExecuteOptions = {}): Promise<RunResult> {
  const now = opts.now ?? Date.now;
  const started = now();
  const refuse = (e: SvcError): RunResult => ({ status: 'failed', steps: {}, returns: [], errors: [e], elapsed_ms: 0 });
  const writes = plan.steps.filter((s) => s.effect === 'write');
  if (writes.length && !opts.accepted) {
    return refuse(svcError('write_not_accepted', `the plan changes vendor data (${writes.map((s) => s.capability).join(', ')}) and was not accepted`, { hint: 'dry-run it first (mode=plan) and run it with its pcN, or pass force' }));
  }
  const entries = new Map<string, RegistryEntry>();
  for (const s of plan.steps) {
    const e = registry.get(s.api);
    if (!e || e.cgs_hash !== s.cgs_hash) {
      return refuse(svcError('catalog_mismatch', `step ${s.id} was compiled against ${s.api} ${s.cgs_hash.slice(0, 12)}, the server holds ${e ? e.cgs_hash.slice(0, 12) : 'no such catalog'}`, { hint: 'refresh the context (svc context --new) and compile the program again' }));
    }
    entries.set(s.api, e);
  }
  const env = opts.env ?? process.env;
  for (const e of entries.values()) {
    const missing = checkSecrets(e.entry_id, e.cgs.auth, env);
    if (missing) return refuse(missing);
  }
  const run = new Run(plan, registry, entries, callContext(opts, env), opts, started);
  return run.execute();
}

class Run {
  private readonly results = new Map<string, StepResult>();
  private readonly controller = new AbortController();
  private readonly progress;
  private readonly limit: Limiter;
  private readonly budget: CallBudget | undefined;

  constructor(
    private readonly plan: Plan,
    private readonly registry: Registry,
    private readonly entries: Map<string, RegistryEntry>,
    private readonly ctx: CallContext,
    private readonly opts: ExecuteOptions,
    private readonly started: number,
  ) {
    this.progress = coalesceProgress((e) => opts.onProgress?.(e), opts.progressIntervalMs);
    this.limit = limiter(opts.concurrency ?? RUNTIME_DEFAULTS.concurrency);
    this.budget = budgetOf(opts);
  }

  private elapsed(): number {
    return this.ctx.now() - this.started;
  }

  async execute(): Promise<RunResult> {
    const outer = this.opts.signal;
    const onCancel = () => this.controller.abort(new RunAbort('cancelled'));
    if (outer?.aborted) onCancel();
    outer?.addEventListener('abort', onCancel, { once: true });
    const deadline = setTimeout(() => this.controller.abort(new RunAbort('deadline_exceeded', this.opts.background ? BACKGROUND_DEADLINE_HINT : DEADLINE_HINT)), this.opts.deadlineMs ?? RUNTIME_DEFAULTS.deadlineMs);
    deadline.unref?.();
    this.progress.push({ kind: 'start', phase: 'started', pages: 0, rows: 0, calls: 0, elapsed_ms: 0 });
    try {
      await this.schedule();
    } finally {
      clearTimeout(deadline);
      outer?.removeEventListener('abort', onCancel);
    }
    return this.finish();
  }

  /** Start every step whose dependencies are done; a failed dependency skips its dependents. */
  private async schedule(): Promise<void> {
    const running = new Map<string, Promise<void>>();
    const waiting = new Set(this.plan.steps.map((s) => s.id));
    while (waiting.size || running.size) {
      for (const s of this.plan.steps) {
        if (!waiting.has(s.id)) continue;
        const deps = s.depends_on.map((d) => this.results.get(d));
        if (this.controller.signal.aborted) {
          waiting.delete(s.id);
          const reason = this.controller.signal.reason instanceof RunAbort ? this.controller.signal.reason : undefined;
          this.record(s, reason?.code === 'deadline_exceeded'
            ? { status: 'failed', error: svcError('deadline_exceeded', `step ${s.id} did not start: the run passed its deadline`, { hint: reason.hint }) }
            : { status: 'cancelled', error: svcError('cancelled', `step ${s.id} did not start: the run was cancelled`, { hint: 'completed steps are reported' }) });
        } else if (deps.some((d) => d && d.status !== 'done')) {
          waiting.delete(s.id);
          const failed = s.depends_on.find((d) => this.results.get(d)?.status !== 'done');
          this.record(s, { status: 'skipped', error: svcError('step_skipped', `step ${s.id} did not run because ${failed} did not complete`, { hint: `fix the error of ${failed} first` }) });
        } else if (deps.every((d) => d?.status === 'done')) {
          waiting.delete(s.id);
          running.set(s.id, this.runStep(s).finally(() => running.delete(s.id)));
        }
      }
      if (running.size) await Promise.race(running.values());
      else if (waiting.size) break; // unreachable for a valid DAG; avoids a spin on a malformed one
    }
  }

  private record(s: PlanStep, r: Partial<StepResult> & { status: StepPhase }): void {
    const full: StepResult = { id: s.id, rows: [], calls: 0, pages: 0, ms: 0, ...r };
    this.results.set(s.id, full);
    this.progress.push({ kind: 'step', step: s.id, phase: full.status, pages: full.pages, rows: full.rows.length, calls: full.calls, elapsed_ms: this.elapsed() });
  }

  private async runStep(s: PlanStep): Promise<void> {
    const t0 = this.ctx.now();
    const entry = this.entries.get(s.api)!;
    const cap = this.registry.capability(s.api, s.capability)!;
    const entity = this.registry.entity(s.api, s.entity)!;
    this.progress.push({ kind: 'step', step: s.id, phase: 'running', pages: 0, rows: 0, calls: 0, elapsed_ms: this.elapsed() });
    const calls = this.valueSets(s, cap);
    if ('error' in calls) return this.record(s, { status: 'failed', error: calls.error, ms: this.ctx.now() - t0 });
    let pages = 0, callCount = 0, rowCount = 0;
    // Rows of a fan-out are kept in source order, whatever order the calls finish in.
    const parts: Row[][] = calls.sets.map(() => []);
    let total: number | undefined;
    let page: PageState | undefined;
    let error: SvcError | undefined;
    await Promise.all(calls.sets.map((values, i) => this.limit(async () => {
      if (error) return;
      const f = await fetchRows(this.ctx, entry, entity, cap, values, {
        ...(s.limit !== undefined ? { limit: s.limit } : {}),
        ...(this.budget ? { budget: this.budget } : {}),
        signal: this.controller.signal,
        onPage: (n, p, c) => this.progress.push({ kind: 'step', step: s.id, phase: 'running', pages: pages + p, rows: rowCount + n, calls: callCount + c, elapsed_ms: this.elapsed() }),
      });
      pages += f.pages;
      callCount += f.calls;
      rowCount += f.rows.length;
      parts[i] = f.rows;
      if (f.error) { error ??= f.error; return; }
      if (calls.sets.length === 1) {
        if (f.total !== undefined) total = f.total;
        if (f.next || f.leftover?.length) page = pageState(s, values, f);
      }
    })));
    const rows = parts.flat();
    const status: StepPhase = error ? (error.code === 'cancelled' ? 'cancelled' : 'failed') : 'done';
    this.record(s, { status, rows, calls: callCount, pages, ms: this.ctx.now() - t0, ...(error ? { error } : {}), ...(total !== undefined ? { total } : {}), ...(page ? { page } : {}) });
  }

  /** The argument values of each vendor call of a step: one set, or one per row of a fan-out source. */
  private valueSets(s: PlanStep, cap: Capability): { sets: Values[] } | { error: SvcError } {
    const sources = s.fanout ? this.results.get(s.fanout.from)!.rows : [undefined];
    if (s.fanout && sources.length > s.fanout.max) {
      return { error: svcError('fanout_too_large', `step ${s.id} would call ${cap.name} once for each of ${sources.length} rows of ${s.fanout.from}; the limit is ${s.fanout.max}`, { hint: 'narrow the bound rows with filters or a smaller limit' }) };
    }
    const sets: Values[] = [];
    for (const row of sources) {
      const values: Values = {};
      for (const [name, arg] of Object.entries(s.args)) {
        if ('lit' in arg) { values[name] = arg.lit; continue; }
        const from = s.fanout && arg.ref.step === s.fanout.from ? row : this.results.get(arg.ref.step)?.rows[0];
        const v: JsonValue | undefined = from?.[arg.ref.field];
        if (v === undefined || v === null) {
          if (cap.params.find((p) => p.name === name)?.required) {
            if (s.fanout) { values[name] = null; continue; }
            return { error: svcError('vendor_bad_response', `step ${s.id}: the row of ${arg.ref.step} has no \`${arg.ref.field}\` to pass as \`${name}\``, { hint: 'the vendor left the field empty; nothing to follow' }) };
          }
          continue;
        }
        values[name] = v;
      }
      if (Object.values(values).some((v) => v === null) && s.fanout) continue; // rows without the key are not followed
      sets.push(values);
    }
    return { sets };
  }

  private finish(): RunResult {
    const steps: Record<string, StepResult> = {};
    const errors: SvcError[] = [];
    for (const s of this.plan.steps) {
      const r = this.results.get(s.id) ?? { id: s.id, status: 'cancelled' as const, rows: [], calls: 0, pages: 0, ms: 0 };
      steps[s.id] = r;
      if (r.error) errors.push({ ...r.error, path: `/steps/${s.id}` });
    }
    const returns: ReturnedRows[] = this.plan.return.map((id) => {
      const s = this.plan.steps.find((x) => x.id === id)!;
      const r = steps[id]!;
      const out: ReturnedRows = { step: id, entity: `${s.api}:${s.entity}`, rows: project(r.rows, s.projection) };
      if (r.total !== undefined) out.total = r.total;
      if (r.page) out.page = r.page;
      return out;
    });
    const aborted = this.controller.signal.reason instanceof RunAbort ? this.controller.signal.reason.code : undefined;
    const status: RunStatus = aborted === 'cancelled' ? 'cancelled' : errors.length ? 'failed' : 'succeeded';
    const elapsed = this.elapsed();
    this.progress.push({ kind: 'end', phase: status, pages: sum(steps, 'pages'), rows: returns.reduce((n, r) => n + r.rows.length, 0), calls: sum(steps, 'calls'), elapsed_ms: elapsed });
    this.progress.close();
    return { status, steps, returns, errors, elapsed_ms: elapsed };
  }
}

/** The call budget of a run (or a continuation), when `maxCalls` is set. */
function budgetOf(opts: ExecuteOptions): CallBudget | undefined {
  return opts.maxCalls === undefined ? undefined : { max: Math.max(0, opts.maxCalls), used: 0 };
}

function pageState(s: PlanStep, values: Values, f: Fetched): PageState {
  const state: PageState = { api: s.api, cgs_hash: s.cgs_hash, capability: s.capability, values, cursor: f.next ?? {}, size: f.size ?? f.rows.length, fetched: f.rows.length };
  if (f.total !== undefined) state.total = f.total;
  if (s.projection) state.projection = s.projection;
  if (f.leftover?.length) state.buffer = f.leftover;
  if (!f.next) state.last = true;
  return state;
}

function sum(steps: Record<string, StepResult>, k: 'pages' | 'calls'): number {
  return Object.values(steps).reduce((n, s) => n + s[k], 0);
}

type Limiter = <T>(fn: () => Promise<T>) => Promise<T>;

/** At most `n` tasks at once, FIFO. */
function limiter(n: number): Limiter {
  let active = 0;
  const queue: Array<() => void> = [];
  const next = () => {
    if (active >= n) return;
    const go = queue.shift();
    if (go) { active++; go(); }
  };
  return <T>(fn: () => Promise<T>) =>
    new Promise<T>((resolve, reject) => {
      queue.push(() => fn().then(resolve, reject).finally(() => { active--; next(); }));
      next();
    });
}

/** Continue a paginated result: fetch the next page described by `state`. */
export async function continuePage(state: PageState, registry: Registry, opts: ExecuteOptions = {}): Promise<{ rows: Row[]; total?: number; page?: PageState; error?: SvcError }> {
  const entry = registry.get(state.api);
  const cap = registry.capability(state.api, state.capability);
  if (!entry || !cap || entry.cgs_hash !== state.cgs_hash) {
    return { rows: [], error: svcError('catalog_mismatch', `the catalog ${state.api} changed since this page handle was minted`, { hint: 'run the program again' }) };
  }
  const entity: Entity = registry.entity(state.api, cap.entity)!;
  const env = opts.env ?? process.env;
  const missing = checkSecrets(entry.entry_id, entry.cgs.auth, env);
  if (missing) return { rows: [], error: missing };
  if (state.buffer?.length) {
    // Rows the vendor sent beyond the program's limit come first; the vendor cursor is unchanged.
    const { buffer, ...rest } = state;
    const out: { rows: Row[]; total?: number; page?: PageState } = { rows: project(buffer, state.projection) };
    if (state.total !== undefined) out.total = state.total;
    if (!state.last) out.page = { ...rest, fetched: state.fetched + buffer.length };
    return out;
  }
  if (state.last) return { rows: [] };
  const ctx = callContext(opts, env);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new RunAbort('deadline_exceeded')), opts.deadlineMs ?? RUNTIME_DEFAULTS.deadlineMs);
  const onCancel = () => controller.abort(new RunAbort('cancelled'));
  if (opts.signal?.aborted) onCancel();
  opts.signal?.addEventListener('abort', onCancel, { once: true });
  let f: Fetched;
  try {
    const budget = budgetOf(opts);
    f = await fetchRows(ctx, entry, entity, cap, state.values, { from: state.cursor, size: state.size, fetchedBefore: state.fetched, signal: controller.signal, ...(budget ? { budget } : {}) });
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onCancel);
  }
  const out: { rows: Row[]; total?: number; page?: PageState; error?: SvcError } = { rows: project(f.rows, state.projection) };
  if (f.error) out.error = f.error;
  const total = f.total ?? state.total;
  if (total !== undefined) out.total = total;
  if (f.next) out.page = { ...state, cursor: f.next, fetched: state.fetched + f.rows.length, ...(total !== undefined ? { total } : {}) };
  return out;
}
