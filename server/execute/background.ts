/**
 * Background runs (`wait=false`): each behind a handle `oN` of its session, capped per session and
 * in all, run on their own vendor connection pool (so they can never starve synchronous reads) and
 * with their own deadline; `wait(oN)` polls, `cancel(oN)` stops, listeners (SSE) follow; at
 * shutdown the running ones are cancelled and what they did is stored.
 */
import { svcError, SvcFailure, type SvcError } from '../../common/errors.js';
import type { Logger } from '../../common/log.js';
import type { Plan } from '../../compiler/plan.js';
import type { Registry } from '../../pack/registry.js';
import type { ArtifactStore } from '../../runtime/artifacts/index.js';
import { executePlan, type ExecuteOptions, type RunResult } from '../../runtime/execute.js';
import type { Limits } from '../limits.js';
import type { Outcome, ResultBlock } from './outcome.js';
import { notify, opLine, progressOf, terminalSign, trimOperations, type Operation, type Sign } from './operations.js';
import type { ExecuteSession } from './session.js';

export interface BackgroundDeps {
  registry: () => Registry;
  artifacts: ArtifactStore;
  /** Runtime options of background runs (their own pool and deadline). */
  runtime: ExecuteOptions;
  limits: Pick<Limits, 'maxRunningOpsPerSession' | 'maxRunningOps'>;
  now: () => number;
  logger: Logger;
  /** Store a finished run and mint its page handles: what a run leaves in its session. */
  finish(s: ExecuteSession, plan: Plan, commit_id: string, run: RunResult, startedAt: Date, program: string | undefined): Promise<{ run_id: string; blocks: ResultBlock[] }>;
}

const fail = (code: SvcError['code'], message: string, hint: string): never => {
  throw new SvcFailure([svcError(code, message, { hint })]);
};

export class Background {
  /** Every running operation of the server. */
  private readonly running = new Set<Operation>();
  private idleWaiters: Array<() => void> = [];

  constructor(private readonly deps: BackgroundDeps) {}

  get runningCount(): number {
    return this.running.size;
  }

  /** `too_many_operations` when the session, or the server, already runs as many operations as allowed. */
  checkCap(s: ExecuteSession): void {
    const cap = this.deps.limits.maxRunningOpsPerSession;
    const mine = [...s.ops.values()].filter((o) => o.state === 'running');
    if (mine.length >= cap) {
      fail('too_many_operations', `this session already runs ${mine.length} operations (the cap is ${cap}): ${mine.map((o) => o.handle).join(', ')}`, `wait for them with wait(oN) or stop them with cancel(oN) first: ${mine.map((o) => `wait(${o.handle})`).join(', ')}`);
    }
    const total = this.deps.limits.maxRunningOps;
    if (this.running.size >= total) {
      const hint = mine.length ? `wait for or cancel this session's own: ${mine.map((o) => `wait(${o.handle})`).join(', ')}` : 'run it without wait=false, or try again when operations have ended';
      fail('too_many_operations', `the server already runs ${this.running.size} background operations (the cap is ${total})`, hint);
    }
  }

  /** Start the run behind `oN` and answer the accept line at once (the caller checked the cap). */
  start(s: ExecuteSession, plan: Plan, commit_id: string, how: RunHow, program: string | undefined): Outcome {
    const now = this.deps.now;
    const handle = `o${s.nextOp++}`;
    const startedAt = new Date(now());
    const op: Operation = {
      handle, state: 'running', started: now(), steps: plan.steps.length, returns: new Set(plan.return), progress: new Map(), version: 0, seen: 0,
      controller: new AbortController(), errors: [], listeners: new Set(), done: Promise.resolve(),
    };
    this.running.add(op);
    op.done = executePlan(plan, this.deps.registry(), {
      ...this.deps.runtime, ...runOptions(how), signal: op.controller.signal,
      onProgress: (e) => { const ev = progressOf(op, e, now()); if (ev) notify(op, ev); },
    }).then(async (run) => {
      const { run_id, blocks } = await this.deps.finish(s, plan, commit_id, run, startedAt, program);
      op.run_id = run_id;
      op.blocks = blocks.map(({ rows: _rows, ...b }, i) => ({ ...b, step: run.returns[i]!.step }));
      op.errors = run.errors;
      op.state = run.status;
    }).catch((e: unknown) => {
      this.deps.logger.error(`background run ${handle} of session ${s.prompt_hash}/${s.session} failed: ${(e as Error)?.stack ?? String(e)}`);
      op.errors = [svcError('internal_error', 'the background run failed unexpectedly', { hint: 'this is a bug in svc; the server log has the details' })];
      op.state = 'failed';
    }).finally(() => {
      op.ended = now();
      this.running.delete(op);
      notify(op, { kind: 'terminal', line: opLine(op, terminalSign(op.state), now()) });
      op.listeners.clear();
      trimOperations(s.ops, now());
      if (this.running.size === 0) for (const w of this.idleWaiters.splice(0)) w();
    });
    s.ops.set(handle, op);
    const line = opLine(op, '+', now());
    return { status: 202, results: [], errors: [], text: line, meta: { mode: 'live', commit_id, op: opMeta(op, '+', line) } };
  }

  /** The operation `handle` of a session. */
  find(s: ExecuteSession, handle: string): Operation {
    trimOperations(s.ops, this.deps.now());
    return s.ops.get(handle) ?? fail('unknown_operation_handle', `\`${handle}\` is not an operation of this session`, `operations are started with wait=false; their handles come in the accept line${s.ops.size ? `; this session has ${[...s.ops.keys()].join(', ')}` : ''}`);
  }

  /** wait(oN): a progress line while running; the rows (from the run artifact) once done. */
  async wait(op: Operation): Promise<Outcome> {
    if (op.state === 'running') {
      const sign: Sign = op.version !== op.seen ? '~' : '=';
      op.seen = op.version;
      const line = opLine(op, sign, this.deps.now());
      return { status: 200, results: [], errors: [], text: line, meta: { op: opMeta(op, sign, line) } };
    }
    return this.terminal(op);
  }

  /** cancel(oN): stop a running operation (cooperatively) and answer its terminal line. */
  async cancel(op: Operation): Promise<Outcome> {
    if (op.state === 'running') {
      op.controller.abort();
      await op.done;
    }
    return this.terminal(op);
  }

  private async terminal(op: Operation): Promise<Outcome> {
    const sign = terminalSign(op.state);
    const line = opLine(op, sign, this.deps.now());
    const snap = op.run_id ? await this.deps.artifacts.get(op.run_id) : undefined;
    const results: ResultBlock[] = (op.blocks ?? []).map(({ step, ...b }) => ({ ...b, rows: snap?.steps.find((x) => x.id === step)?.rows ?? [] }));
    return { status: 200, results, errors: op.errors, text: line, meta: { op: opMeta(op, sign, line), ...(op.run_id ? { run_id: op.run_id } : {}), status: op.state, ...(op.errors[0] ? { code: op.errors[0].code } : {}) } };
  }

  /** The current line of an operation (the SSE snapshot) and whether it has ended. */
  snapshotLine(op: Operation): { line: string; terminal: boolean } {
    if (op.state === 'running') return { line: opLine(op, op.version ? '~' : '+', this.deps.now()), terminal: false };
    return { line: opLine(op, terminalSign(op.state), this.deps.now()), terminal: true };
  }

  /** Resolves when no operation runs (at once when none does). */
  idle(): Promise<void> {
    if (this.running.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Cancel every running operation and wait (at most `waitMs`) until each has ended and stored
   * what it did; their listeners get the terminal `x` event.
   */
  async cancelAll(waitMs: number): Promise<void> {
    const ops = [...this.running];
    for (const op of ops) op.controller.abort();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(ops.map((o) => o.done)), new Promise<void>((r) => { timer = setTimeout(r, waitMs); })]);
    clearTimeout(timer);
  }
}

/** `_meta.svc.op`: `n` handle, `~` sign, `s` state, `l` the line, `r` run artifact id (when ended). */
function opMeta(op: Operation, sign: Sign, line: string): Record<string, string> {
  return { n: op.handle, '~': sign, s: op.state, l: line, ...(op.run_id ? { r: op.run_id } : {}) };
}

/** How a live run was let through the gate: whether writes were accepted, and its call cap. */
export interface RunHow {
  accepted: boolean;
  maxCalls: number | undefined;
}

/** The runtime options that `how` sets. */
export function runOptions(how: RunHow): Pick<ExecuteOptions, 'accepted' | 'maxCalls'> {
  return { accepted: how.accepted, ...(how.maxCalls !== undefined ? { maxCalls: how.maxCalls } : {}) };
}
