/**
 * The execute core shared by every surface: programs (compile, dry-run and plan tokens, the review
 * gate, live runs, page continuations), resolved plans, background operations and stored runs, over
 * the session repository. It takes typed requests and returns typed outcomes or throws typed
 * errors (`SvcFailure`); it knows no protocol status and no route: HTTP, MCP and the terminal each
 * render what it returns. Opening and teaching sessions is in teach.ts, operations in background.ts.
 */
import { fail, SvcFailure, type SvcError } from '../../common/errors.js';
import { SILENT, type Logger } from '../../common/log.js';
import { quote } from '../../common/quote.js';
import type { ContinuationStmt } from '../../compiler/ast.js';
import type { Plan, Review } from '../../compiler/plan.js';
import type { Registry } from '../../pack/registry.js';
import type { AuthResolver } from '../../runtime/auth.js';
import { RunAbort } from '../../runtime/call.js';
import { Cancel } from '../../runtime/signal.js';
import { executePlan, type ExecuteOptions } from '../../runtime/execute.js';
import { PooledHttpClient, type HttpClient } from '../../runtime/http-client.js';
import { WriteBehindStore, type ArtifactStore, type RunSnapshot } from '../../runtime/artifacts/index.js';
import type { Blobs } from '../../runtime/graph-blobs.js';
import { DEFAULT_LIMITS, type Limits } from '../limits.js';
import { Background, runOptions, type RunHow, type Watch } from './background.js';
import { findSession, type Found } from './find-session.js';
import type { CreatedOutcome, Outcome, TaughtOutcome } from './outcome.js';
import { continuePageHandle, pageRefRequest } from './pages.js';
import { finishRun, liveOutcome } from './finish-run.js';
import { refuseWrites } from './read-only.js';
import { callCap, checked, checkedPlan, dryRun, passGate, tokenProgram } from './review-gate.js';
import { PlanCache } from './plan-cache.js';
import { reviewResolvedPlan } from './resolved-plan.js';
import type { SessionRepository } from './repository.js';
import { keyText, type SessionKey, type SessionState } from './state.js';
import { Teacher, type OpenRequest } from './teach.js';
import type { Follow, ProgramRequest, RunRequest, Who } from './request.js';
import { storedRun } from './stored-run.js';
import { LogicalSessions } from './logical.js';
import { localReplica, type ReplicaOptions } from './replica.js';
import { patientUpdates } from './write-back.js';
import { callerOf, withAuth } from './caller.js';
import { SessionGraphs } from './graphs.js';
import { checkPins, cleanRead, compileInSession, pollOnly, type Compiled } from './session-compile.js';

export { cleanRead } from './session-compile.js';
export { PLAN_TOKEN_TTL_MS } from './repository.js';
export type { Follow, ProgramRequest, RunRequest, Who } from './request.js';

/** What of a program request a continuation reads. */
type ContinueRequest = Pick<ProgramRequest, 'signal' | 'pageRows' | 'who'>;

/** finishRun's arguments after its dependencies. */
type FinishArgs = Parameters<typeof finishRun> extends [unknown, ...infer A] ? A : never;

/** What the execute core is built from. */
export interface ServiceDeps {
  /** The registry in force (a reload swaps it). */
  registry: () => Registry;
  sessions: SessionRepository;
  artifacts: ArtifactStore;
  /** Base runtime options for vendor calls (env, http client, timeouts). */
  runtime: ExecuteOptions;
  /** Limits (defaults: DEFAULT_LIMITS). */
  limits?: Partial<Limits>;
  /** Vendor connections of background runs (default: a pool of their own). */
  backgroundHttp?: HttpClient;
  planCache?: PlanCache;
  now?: () => number;
  logger?: Logger;
  /** This process among replicas sharing the session store (default: one process, no leases). */
  replica?: ReplicaOptions;
  /** Where the session graph persists (`SVC_GRAPH_CACHE_URL`); default: in memory only. */
  graphBlobs?: Blobs;
  /** Whether callers of `tenant` may only read (SVC_READ_ONLY, or read_only per tenant in the credentials file). Default: nobody. */
  readOnly?: (tenant: string) => boolean;
}

export class ExecuteService {
  private readonly now: () => number;
  private readonly logger: Logger;
  readonly limits: Limits;
  readonly plans: PlanCache;
  readonly background: Background;
  readonly teach: Teacher;
  readonly logical: LogicalSessions;
  private readonly backgroundHttp: HttpClient;
  readonly graphs: SessionGraphs;
  /** Runtime options of every run, with the outbound credentials resolver they share. */
  private readonly runtime: ExecuteOptions & { auth: AuthResolver };
  /** Aborted at shutdown: synchronous runs still going are cancelled with it. */
  private readonly stopping = new Cancel();
  /** The run artifacts: a clean read's is written after its answer (`putLater`). */
  readonly artifacts: WriteBehindStore;

  constructor(private readonly deps: ServiceDeps) {
    this.now = deps.now ?? Date.now;
    this.logger = deps.logger ?? SILENT;
    this.limits = { ...DEFAULT_LIMITS, ...deps.limits };
    this.artifacts =
      deps.artifacts instanceof WriteBehindStore
        ? deps.artifacts
        : new WriteBehindStore(deps.artifacts, this.logger, { maxBytes: this.limits.artifactsPendingBytes });
    this.plans = deps.planCache ?? new PlanCache();
    this.backgroundHttp = deps.backgroundHttp ?? new PooledHttpClient();
    this.runtime = withAuth(deps.runtime);
    // The clock the runtime stamps rows with (an injected service clock may be another one).
    this.graphs = new SessionGraphs(this.limits, this.runtime.now ?? Date.now, deps.graphBlobs, this.logger);
    this.teach = new Teacher(deps.registry, deps.sessions, deps.readOnly);
    this.logical = new LogicalSessions({ registry: deps.registry, repo: deps.sessions, teach: this.teach });
    this.background = new Background({
      registry: deps.registry,
      repo: deps.sessions,
      artifacts: this.artifacts,
      runtime: {
        ...this.runtime,
        http: this.backgroundHttp,
        deadlineMs: this.limits.backgroundDeadlineMs,
        background: true,
      },
      limits: this.limits,
      now: this.now,
      logger: this.logger,
      finish: (...a) => this.finishBackground(...a),
      replica: deps.replica ?? localReplica(),
    });
  }

  /**
   * The session at `key` for `tenant` (`unknown_session`, `forbidden`); `stale` set after a reload
   * changed its catalogs.
   */
  find(key: SessionKey, tenant: string): Promise<Found> {
    return findSession(this.deps.sessions, key, tenant, this.deps.registry());
  }

  /** A new session on one catalog, with its first wave. */
  open(req: OpenRequest, tenant: string): Promise<CreatedOutcome> {
    return this.teach.open(req, tenant);
  }

  /** More seeds for a session: a delta wave. */
  context(s: SessionState, seeds: readonly unknown[]): Promise<TaughtOutcome> {
    return this.teach.context(s, seeds);
  }

  /**
   * A program (or a continuation), on the session as `find` found it: with `stale` only `wait(oN)`
   * and `cancel(oN)` still run.
   */
  async program(s: SessionState, req: ProgramRequest, { stale }: Omit<Found, 'session'> = {}): Promise<Outcome> {
    if (stale) return this.continuation(s, staleContinuation(req, stale));
    const c = this.compiled(s, req.program);
    if (c.kind === 'error')
      return { kind: 'result', results: [], errors: c.diagnostics, meta: { code: c.diagnostics[0]?.code } };
    if (c.kind === 'continuation') {
      const text = `\`${c.continuation.kind}(${quote(c.continuation.handle.text)})\``;
      if (req.mode === 'check') return checked(`${text} is a continuation: it compiles, and nothing ran`);
      if (req.mode === 'plan')
        fail('bad_arguments', `${text} is a continuation: it has no dry-run`, 'send it as a live program');
      if (req.mode === 'auto' && c.continuation.kind !== 'page')
        fail(
          'bad_arguments',
          `${text} follows a background run, and runs here are awaited: there is none to follow`,
          'send a program; a write is dry-run first and then run by its pcN',
        );
      return this.continuation(s, c.continuation, req);
    }
    const { plan, commit_id, review } = c;
    checkPins(s, plan);
    return this.planOrRun(s, plan, commit_id, review, req, req.program);
  }

  /** A check, a dry-run (`plan`; `auto` but for a clean read), or gate and run; `read_only` first. */
  private planOrRun(s: SessionState, plan: Plan, commit_id: string, review: Review, req: RunRequest, program?: string) {
    refuseWrites(this.deps.readOnly, s, plan);
    if (req.mode === 'check') return Promise.resolve(checkedPlan(commit_id, review));
    if (req.mode === 'plan' || (req.mode === 'auto' && !cleanRead(review)))
      return dryRun(this.deps.sessions, s, plan, commit_id, review, this.now(), program);
    const waited = Object.assign({}, req, { wait: req.mode === 'auto' || req.wait }); // see live()
    return this.runPlan(s, plan, commit_id, review, waited, program);
  }

  /**
   * A run asked for by a handle alone, awaited to its end (MCP svc_run): a pcN runs the program
   * its dry-run kept, through the review gate, as an operation whose lines go to `follow`; a page
   * handle (`pgN`, or `l_<token>_pgN` of a bound logical session) fetches its next page.
   */
  async runRef(s: SessionState, ref: string, follow: Follow = {}): Promise<Outcome> {
    const page = pageRefRequest(ref, follow);
    if (page) return this.program(s, page);
    const program = tokenProgram(s, ref, this.now());
    const c = this.compiled(s, program);
    if (c.kind !== 'plan')
      return fail('plan_token_mismatch', `the program of \`${ref}\` no longer compiles to a plan`, 'dry-run it again');
    checkPins(s, c.plan);
    refuseWrites(this.deps.readOnly, s, c.plan);
    this.background.checkCap(s);
    const req = { force: false, plan_commit_ref: ref };
    const accepted = await passGate(this.deps.sessions, s, c.commit_id, c.review, req, this.now());
    const how = await this.how(s, accepted, c.review, follow.who);
    return this.background.awaitRun(s, c.plan, c.commit_id, how, program, follow);
  }

  /** A program compiled for this session (the plan cache first). */
  private compiled(s: SessionState, program: string): Compiled {
    const { plans, logger } = this;
    const registry = this.deps.registry();
    const deps = { registry, plans, maxCalls: this.limits.maxVendorCalls, logger, readOnly: this.deps.readOnly };
    return compileInSession(deps, s, program);
  }

  /** The review gate, then a live run: answered when done, or in the background with `wait: false`. */
  async runPlan(
    s: SessionState,
    plan: Plan,
    commit_id: string,
    review: Review,
    req: RunRequest,
    program?: string,
  ): Promise<Outcome> {
    // The cap is checked before the gate, so a refused start does not spend a write's pcN.
    if (!req.wait) this.background.checkCap(s);
    const accepted = await passGate(this.deps.sessions, s, commit_id, review, req, this.now());
    const how = await this.how(s, accepted, review, req.who);
    if (!req.wait) return this.background.start(s, plan, commit_id, how, program);
    return this.live(s, plan, commit_id, how, program, req);
  }

  private async live(
    s: SessionState,
    plan: Plan,
    commit_id: string,
    how: RunHow,
    program: string | undefined,
    req: Pick<RunRequest, 'signal' | 'onProgress'>,
  ): Promise<Outcome> {
    const startedAt = new Date(this.now());
    // Two signals cancel the run: the caller's and the server's shutdown (runtime/cancel.ts).
    const opts: ExecuteOptions = { ...this.runtime, ...runOptions(how), signal: req.signal, stop: this.stopping };
    if (req.onProgress) opts.onProgress = req.onProgress;
    const run = await executePlan(plan, this.deps.registry(), opts);
    const reads = plan.steps.every((x) => x.effect === 'read');
    // A read's artifact is written after the answer; a write's before it (its answer says if it was
    // not stored). The session write (page handles, the run record) lands before the answer either way.
    const write = reads ? 'later' : 'now';
    const done = await this.finish(s, plan, commit_id, run, {
      startedAt,
      program,
      write,
    });
    return liveOutcome(commit_id, run, done, { reads });
  }

  /** How a run passed the gate: accepted writes, its call cap, and who its vendor calls are made for. */
  private async how(s: SessionState, accepted: boolean, review: Review, who: Who | undefined): Promise<RunHow> {
    const caller = callerOf(this.runtime.auth, s, who);
    return { accepted, maxCalls: callCap(this.limits, accepted, review), caller, graph: await this.graphs.view(s) };
  }

  /** What a finished run leaves in its session (finish-run.ts). */
  private finish(...a: FinishArgs) {
    this.graphs.saved(a[0]);
    return finishRun({ repo: this.deps.sessions, artifacts: this.artifacts, logger: this.logger }, ...a);
  }

  /**
   * What a finished background run leaves in its session: as `finish`, with its session write
   * retried while the store is away (write-back.ts), so an outage does not drop what the run did.
   */
  private finishBackground(...a: FinishArgs) {
    this.graphs.saved(a[0]);
    const repo = patientUpdates(
      this.deps.sessions,
      this.logger,
      `the run record of a background run of ${keyText(a[0])}`,
    );
    return finishRun({ repo, artifacts: this.artifacts, logger: this.logger }, ...a);
  }

  /**
   * A continuation: `page(pgN)` fetches the next page of a handle (pages.ts), `wait(oN)` and
   * `cancel(oN)` follow or stop a background operation (background.ts). A page fetch stops when
   * the request's signal aborts (or at shutdown).
   */
  private continuation(s: SessionState, c: ContinuationStmt, req: ContinueRequest = {}): Promise<Outcome> {
    if (c.kind === 'wait') return this.background.wait(s, c.handle.text);
    if (c.kind === 'cancel') return this.background.cancel(s, c.handle.text);
    const caller = callerOf(this.runtime.auth, s, req.who);
    return continuePageHandle(s, c, {
      registry: this.deps.registry(),
      repo: this.deps.sessions,
      runtime: { ...this.runtime, stop: this.stopping, caller, ...(req.signal ? { signal: req.signal } : {}) },
      ...(req.pageRows !== undefined ? { maxRows: req.pageRows } : {}),
    });
  }

  /** A client-compiled plan, checked, reviewed and run like a compiled program. */
  async resolvedPlan(s: SessionState, plan: unknown, req: RunRequest, program?: string): Promise<Outcome> {
    const c = reviewResolvedPlan(plan, this.deps.registry(), this.limits.maxVendorCalls);
    checkPins(s, c.plan);
    return this.planOrRun(s, c.plan, c.commit_id, c.review, req, program);
  }

  /** The operation `handle` of a session, to follow it (a stream): its line now and its events. */
  watch(s: SessionKey, handle: string): Promise<Watch> {
    return this.background.watch(s, handle);
  }

  /** A stored run of the session at `key` for a caller of `tenant` (also when the session is gone). */
  storedRun(key: SessionKey, tenant: string, runId: string): Promise<RunSnapshot> {
    return storedRun(this.artifacts, key, tenant, runId);
  }

  /** Resolves when no background operation runs and every run artifact and session write has settled. */
  async idle(): Promise<void> {
    await this.background.idle();
    await Promise.all([this.artifacts.flush(), this.graphs.flush(), this.deps.sessions.settled?.()]);
  }

  /**
   * Shutdown, once the grace has passed: cancel every run still going (waited and background) and
   * give the cancellations `settleMs` to store what they did.
   */
  async cancelAll(settleMs: number): Promise<void> {
    this.stopping.abort(new RunAbort('cancelled'));
    await this.background.cancelAll(settleMs);
    await Promise.race([this.backgroundHttp.close(), new Promise<void>((r) => setTimeout(r, settleMs).unref())]);
  }
}

/**
 * On a stale session (a reload changed one of its catalogs) only a program that is `wait(oN)` or
 * `cancel(oN)` alone still runs: that statement; anything else fails with the staleness.
 */
function staleContinuation(req: Pick<ProgramRequest, 'mode' | 'program'>, stale: SvcError): ContinuationStmt {
  const only = req.mode === 'plan' || req.mode === 'check' ? undefined : pollOnly(req.program);
  if (!only) throw new SvcFailure([stale]);
  return only;
}
