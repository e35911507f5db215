/**
 * Background runs (`wait=false`): each behind a handle `oN` of its session, capped per session and
 * in all, run on their own vendor connection pool (so they can never starve waited reads) and with
 * their own deadline. The descriptor of an operation lives in session state (any process can
 * answer `wait(oN)` from it); the run itself (abort controller, listeners, promise) lives here, in
 * the process that started it. `watch` gives a surface the current line and a subscription (SSE,
 * MCP notifications); at shutdown the running ones are cancelled and what they did is stored.
 */
import { fail, svcError } from '../../common/errors.js';
import type { Logger } from '../../common/log.js';
import type { Plan } from '../../compiler/plan.js';
import type { Registry } from '../../pack/registry.js';
import type { ArtifactStore } from '../../runtime/artifacts/index.js';
import { executePlan, type ExecuteOptions } from '../../runtime/execute.js';
import type { Limits } from '../limits.js';
import type { FinishRun } from './finish-run.js';
import type { Outcome, StartedOutcome } from './outcome.js';
import type { Follow } from './request.js';
import { opLine, opMeta, terminalSign, trimOperations, type OpEvent } from './operations.js';
import { LeaseKeeper, OpWriter } from './op-writer.js';
import {
  leasesJudgedFrom,
  lostMark,
  lostOperation,
  reapLost,
  SHARED_PROGRESS_COALESCE_MS,
  type ReplicaOptions,
} from './replica.js';
import type { SessionRepository } from './repository.js';
import { findOperation, followElsewhere, pollOperation, terminalAnswer, type WaitDeps } from './poll-operation.js';
import { runOptions, type RunHow } from './run-how.js';
import { checkOperationCaps, followToEnd, liveKey, notify, type LiveOp, type Watch } from './live-op.js';
import { keyText, type OpDescriptor, type SessionKey, type SessionState } from './state.js';
import { untilStored } from './write-back.js';

export interface BackgroundDeps {
  registry: () => Registry;
  repo: SessionRepository;
  artifacts: ArtifactStore;
  /** Runtime options of background runs (their own pool and deadline). */
  runtime: ExecuteOptions;
  limits: Pick<Limits, 'maxRunningOpsPerSession' | 'maxRunningOps'>;
  now: () => number;
  logger: Logger;
  /** Store a finished run and mint its page handles: what a run leaves in its session. */
  finish: FinishRun;
  /** This process among the replicas of a shared store: its id, lease and progress window. */
  replica: ReplicaOptions;
}

export { runOptions, type RunHow } from './run-how.js';

export type { Watch } from './live-op.js';

/** `writes`: the plan's write steps, when it has any (an `operation_lost` answer then says they may have landed). */
const writeSteps = (plan: Plan): Pick<OpDescriptor, 'writes'> => {
  const writes = plan.steps.filter((x) => x.effect === 'write').length;
  return writes ? { writes } : {};
};

export class Background {
  private readonly live = new Map<string, LiveOp>();
  private idleWaiters: Array<() => void> = [];
  /** Renews the leases of the operations running here (shared store only). */
  private readonly leases: LeaseKeeper;

  constructor(private readonly deps: BackgroundDeps) {
    this.leases = new LeaseKeeper(deps.replica.leaseMs, () => this.live.values());
  }

  /** Operations running in this process. */
  get runningCount(): number {
    return this.live.size;
  }

  /** `too_many_operations` when the session, or the server, already runs as many operations as allowed. */
  checkCap(s: SessionState): void {
    checkOperationCaps(s, this.live.size, this.deps.limits);
  }

  /** Start the run behind the next `oN` and answer the accept line at once (`awaited`: its caller follows it to the end). */
  async start(
    s: SessionState,
    plan: Plan,
    commit_id: string,
    how: RunHow,
    program: string | undefined,
    { awaited = false }: { awaited?: boolean } = {},
  ): Promise<StartedOutcome> {
    const { now, repo, replica } = this.deps;
    const startedAt = new Date(now());
    const desc = await repo.update(s, (st) => {
      reapLost(st, now(), (h) => this.live.has(liveKey(s, h)), leasesJudgedFrom(repo, replica));
      this.checkCap(st); // again, inside the transaction: two concurrent starts cannot both pass it
      trimOperations(st.ops, now());
      const d: OpDescriptor = {
        handle: `o${++st.counters.o}`,
        state: 'running',
        started: now(),
        steps: plan.steps.length,
        ...writeSteps(plan),
        returns: [...plan.return],
        progress: {},
        version: 0,
        seen: 0,
        errors: [],
        commit_id,
        owner: replica.id,
        ...(replica.leaseMs ? { lease_until: now() + replica.leaseMs } : {}),
        ...(awaited ? { awaited } : {}),
      };
      st.ops.set(d.handle, d);
      return { ...d };
    });
    const op: LiveOp = {
      key: { prompt_hash: s.prompt_hash, session: s.session },
      handle: desc.handle,
      controller: new AbortController(),
      listeners: new Set(),
      notified: {},
      chain: Promise.resolve(),
      done: Promise.resolve(),
    };
    const writer = new OpWriter(op, { repo, now, replica });
    op.writer = writer;
    this.live.set(liveKey(op.key, op.handle), op);
    this.leases.start();
    op.done = executePlan(plan, this.deps.registry(), {
      ...this.deps.runtime,
      ...runOptions(how),
      signal: op.controller.signal,
      onProgress: (e) => writer.progress(e),
    })
      .then(async (run) => {
        const { run_id, blocks } = await this.deps.finish(s, plan, commit_id, run, { startedAt, program });
        await this.end(op, (d) => {
          d.run_id = run_id;
          d.blocks = blocks.map(({ rows: _rows, ...b }, i) => ({ ...b, step: run.returns[i]!.step }));
          d.errors = run.errors;
          d.state = run.status;
        });
      })
      .catch(async (e: unknown) => {
        this.deps.logger.error(
          `background run ${op.handle} of session ${keyText(op.key)} failed: ${(e as Error)?.stack ?? String(e)}`,
        );
        await this.end(op, (d) => {
          d.errors = [
            svcError('internal_error', 'the background run failed unexpectedly', {
              hint: 'this is a bug in svc; the server log has the details',
            }),
          ];
          d.state = 'failed';
        }).catch(() => {
          /* the session is gone */
        });
      })
      .finally(() => {
        op.terminal ??= `? ${op.handle} failed: the session is gone`;
        notify(op, { kind: 'terminal', line: op.terminal });
        op.listeners.clear();
        this.live.delete(liveKey(op.key, op.handle));
        if (this.live.size === 0) {
          this.leases.stop();
          for (const w of this.idleWaiters.splice(0)) w();
        }
      });
    const line = opLine(desc, '+', now());
    return {
      kind: 'started',
      results: [],
      errors: [],
      text: line,
      meta: { mode: 'live', commit_id, op: opMeta(desc, '+', line) },
    };
  }

  /**
   * Run as an operation that its caller awaits (MCP svc_run): its lines go to `follow.onLine` (the
   * accept line with the commit id, progress, the terminal line), an abort of `follow.signal`
   * cancels it, and the answer is its terminal answer (rows read back from the run artifact).
   */
  async awaitRun(
    s: SessionState,
    plan: Plan,
    commit_id: string,
    how: RunHow,
    program: string | undefined,
    follow: Follow,
  ): Promise<Outcome> {
    const started = await this.start(s, plan, commit_id, how, program, { awaited: true });
    const handle = started.meta.op.n;
    follow.onLine?.({ line: started.text!, handle, commit_id });
    const op = this.live.get(liveKey(s, handle));
    if (op) await followToEnd(op, follow);
    return this.wait(s, handle);
  }

  /**
   * Write the end of an operation (after its progress writes) and keep its terminal line. While the
   * store is away it is retried until it lands (write-back.ts); the operation stays live here (its
   * lease renewed, and this process never marks it lost) until then.
   */
  private async end(op: LiveOp, set: (d: OpDescriptor) => void): Promise<void> {
    await op.writer?.settle();
    const { repo, logger } = this.deps;
    const what = `the end of ${op.handle} of session ${keyText(op.key)}`;
    op.terminal = await untilStored(() => repo.update(op.key, (st) => this.ended(st, op.handle, set)), {
      logger,
      what,
    });
  }

  /**
   * The terminal write of an operation: `set` applied once (written again after an outage cut off
   * its answer, it changes nothing). Another replica's `operation_lost` mark (it found the lease
   * lapsed, while this process could not renew it) is a guess, and this end is a fact: it wins.
   */
  private ended(st: SessionState, handle: string, set: (d: OpDescriptor) => void): string | undefined {
    const now = this.deps.now;
    const d = st.ops.get(handle);
    if (!d) return undefined;
    if (d.state !== 'running' && !lostMark(d)) return opLine(d, terminalSign(d.state), now());
    set(d);
    d.ended = now();
    const line = opLine(d, terminalSign(d.state), now());
    trimOperations(st.ops, now());
    return line;
  }

  /** The operation `handle` of a session, or `unknown_operation_handle`. */
  find(key: SessionKey, handle: string): Promise<OpDescriptor> {
    return findOperation(this.deps.repo, key, handle);
  }

  /** wait(oN): a progress line while running; the rows (from the run artifact) once done. */
  wait(key: SessionKey, handle: string): Promise<Outcome> {
    return pollOperation(this.waitDeps(key), key, handle);
  }

  /** What answering about a session's operations needs: the stores, and which run here. */
  private waitDeps(key: SessionKey): WaitDeps {
    const { repo, replica } = this.deps;
    return {
      ...this.deps,
      local: (h) => this.live.has(liveKey(key, h)),
      leasesJudgedFrom: () => leasesJudgedFrom(repo, replica),
    };
  }

  /** cancel(oN): stop a running operation (cooperatively) and answer its terminal line. */
  async cancel(key: SessionKey, handle: string): Promise<Outcome> {
    const d = await this.find(key, handle);
    if (d.state === 'running') {
      // An operation whose owner is gone is failed by the poll, and its terminal answer given.
      const from = leasesJudgedFrom(this.deps.repo, this.deps.replica);
      if (!this.live.has(liveKey(key, handle)) && lostOperation(d, this.deps.now(), false, from))
        return this.wait(key, handle);
      const op =
        this.live.get(liveKey(key, handle)) ??
        fail(
          'operation_not_on_replica',
          `\`${handle}\` runs in another server process`,
          `poll wait(${handle}) until it ends; a cancel reaches only the process that runs it`,
        );
      op.controller.abort();
      await op.done;
    }
    return terminalAnswer(this.deps, await this.find(key, handle));
  }

  /** The operation's current line, and its events while it runs in this process. */
  async watch(key: SessionKey, handle: string): Promise<Watch> {
    const d = await this.find(key, handle);
    const op = this.live.get(liveKey(key, handle));
    const none = () => () => undefined;
    if (op && op.terminal === undefined) {
      return {
        line: opLine(d, d.version ? '~' : '+', this.deps.now()),
        terminal: false,
        subscribe: (l) => {
          op.listeners.add(l);
          return () => op.listeners.delete(l);
        },
      };
    }
    if (d.state === 'running' && !op) {
      const every = this.deps.replica.progressCoalesceMs || SHARED_PROGRESS_COALESCE_MS;
      const subscribe = (l: (e: OpEvent) => void) => followElsewhere(this.waitDeps(key), key, handle, l, every);
      return { line: opLine(d, '~', this.deps.now()), terminal: false, subscribe };
    }
    const ended = d.state === 'running' ? await this.find(key, handle) : d;
    return {
      line: op?.terminal ?? opLine(ended, terminalSign(ended.state), this.deps.now()),
      terminal: true,
      subscribe: none,
    };
  }

  /** How many listeners follow an operation in this process (0 when it does not run here). */
  listenerCount(key: SessionKey, handle: string): number {
    return this.live.get(liveKey(key, handle))?.listeners.size ?? 0;
  }

  /** Resolves when no operation runs in this process (at once when none does). */
  idle(): Promise<void> {
    if (this.live.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Cancel every running operation and wait (at most `waitMs`) until each has ended and stored
   * what it did; their listeners get the terminal `x` event.
   */
  async cancelAll(waitMs: number): Promise<void> {
    const ops = [...this.live.values()];
    for (const op of ops) op.controller.abort();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(ops.map((o) => o.done)),
      new Promise<void>((r) => {
        timer = setTimeout(r, waitMs);
      }),
    ]);
    clearTimeout(timer);
    const unwritten = [...this.live.values()].map((o) => `${o.handle} of session ${keyText(o.key)}`);
    if (unwritten.length)
      this.deps.logger.warn(
        `${unwritten.length} operations stop with their end not stored (is the session store away?); other replicas answer operation_lost once their lease lapses: ${unwritten.join(', ')}`,
      );
  }
}
