/**
 * The writes a running operation makes to its descriptor in session state, in order: progress
 * (folded and pushed to listeners; coalesced to one write per window on a shared store) and the
 * renewal of its lease. The terminal write waits for all of them (`settle`).
 */
import type { ProgressEvent } from '../../runtime/progress.js';
import { notify, type LiveOp } from './live-op.js';
import { applyProgress, newCounts, progressNow, type ProgressNow } from './operations.js';
import type { ReplicaOptions } from './replica.js';
import type { SessionRepository } from './repository.js';

export interface OpWriterDeps {
  repo: SessionRepository;
  now: () => number;
  replica: ReplicaOptions;
}

export class OpWriter {
  private pending: ProgressEvent[] = [];
  private timer: NodeJS.Timeout | undefined;
  private last = 0;

  constructor(
    private readonly op: LiveOp,
    private readonly deps: OpWriterDeps,
  ) {}

  /** A progress event of the run: written now, or with the next write of its window. */
  progress(e: ProgressEvent): void {
    this.pending.push(e);
    const window = this.deps.replica.progressCoalesceMs;
    if (window === 0) return this.flush();
    if (this.timer) return;
    const wait = Math.max(0, this.last + window - this.deps.now());
    this.timer = setTimeout(() => this.flush(), wait);
    this.timer.unref();
  }

  /** Renew the lease (a write of its own unless one is due anyway). */
  renew(): void {
    if (!this.timer) this.flush();
  }

  /** Write what is pending, then wait until every write is done. */
  async settle(): Promise<void> {
    if (this.timer || this.pending.length) this.flush();
    await this.op.chain;
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const events = this.pending.splice(0);
    const { repo, now, replica } = this.deps;
    const op = this.op;
    this.last = now();
    op.chain = op.chain
      .then(() =>
        repo.update(op.key, (st) => {
          const d = st.ops.get(op.handle);
          if (!d || d.state !== 'running') return undefined;
          if (replica.leaseMs) d.lease_until = now() + replica.leaseMs;
          let changed = false;
          for (const e of events) changed = applyProgress(d, e) || changed;
          // Only the state changes in here (the store may run this twice); listeners are told after.
          return changed ? progressNow(d, now()) : undefined;
        }),
      )
      .then(
        (p: ProgressNow | undefined) => {
          const ev = p && newCounts(p, op.notified);
          if (ev) notify(op, ev);
        },
        () => {
          /* the session is gone (or the store is away): the next write tries again */
        },
      );
  }
}

/** With leases: renews those of the operations running in this process every third of the lease. */
export class LeaseKeeper {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly leaseMs: number,
    private readonly running: () => Iterable<LiveOp>,
  ) {}

  /** Start renewing (once an operation runs; no-op without leases or when already renewing). */
  start(): void {
    if (!this.leaseMs || this.timer) return;
    this.timer = setInterval(() => {
      for (const op of this.running()) op.writer?.renew();
    }, this.leaseMs / 3);
    this.timer.unref();
  }

  /** Stop renewing (no operation runs any more). */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
