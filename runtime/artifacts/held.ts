/**
 * Snapshots whose write failed, held in memory and written again with exponential backoff (0.5 s,
 * doubling to 30 s), within a byte budget (`SVC_RUN_ARTIFACTS_PENDING_BYTES`): past it the oldest
 * held snapshot is dropped and recorded as lost. For a run whose artifact is the only copy of its
 * rows (a background run): until its write lands, `wait(oN)` answers the rows from here, and a
 * lost one says so instead of answering no rows (write-behind.ts `putOrHold`, docs/operations.md
 * "When the artifact store is down").
 */
import type { Logger } from '../../common/log.js';
import type { RunSnapshot } from './snapshot.js';
import type { ArtifactStore } from './store.js';

/** `held`: in memory, its write retried; `lost`: dropped before it could be stored. */
export type WriteState = 'held' | 'lost';

export interface HeldOptions {
  /** Bytes of held snapshots at most (default `DEFAULT_HELD_MAX_BYTES`). */
  maxBytes?: number;
  /** The first retry comes after this many ms (default 500); each later one waits twice as long. */
  firstDelayMs?: number;
  /** The longest wait between two retries (default 30 s). */
  maxDelayMs?: number;
  /** At close, how long the last write of the snapshots still held may take (default 5 s). */
  closeWaitMs?: number;
}

/** The budget of held snapshots (`SVC_RUN_ARTIFACTS_PENDING_BYTES`): 64 MiB. */
export const DEFAULT_HELD_MAX_BYTES = 64 * 1024 * 1024;

/** Lost ids remembered (a read of one says lost, not unknown); past it the oldest is forgotten. */
const LOST_KEPT = 1024;

interface Held {
  id: string;
  json: string;
  owner: string | undefined;
  bytes: number;
  /** Retries scheduled so far (the next waits `firstDelayMs * 2 ** attempts`, capped). */
  attempts: number;
  timer?: NodeJS.Timeout;
}

export interface HeldStats {
  count: number;
  bytes: number;
  maxBytes: number;
  /** Held snapshots dropped unwritten since the start. */
  lost: number;
  /** Retries that failed since the start. */
  failedRetries: number;
}

export class HeldWrites {
  /** By id, oldest first (a Map keeps insertion order): the budget drops from the front. */
  private readonly held = new Map<string, Held>();
  /** Lost ids and the session that owned each ('' for none), oldest first. */
  private readonly lost = new Map<string, string>();
  private bytes = 0;
  private lostCount = 0;
  private failedRetries = 0;
  private closed = false;
  private readonly maxBytes: number;
  private readonly firstDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly closeWaitMs: number;

  constructor(
    private readonly store: Pick<ArtifactStore, 'write'>,
    opts: HeldOptions = {},
    private readonly logger?: Logger,
  ) {
    this.maxBytes = opts.maxBytes ?? DEFAULT_HELD_MAX_BYTES;
    this.firstDelayMs = opts.firstDelayMs ?? 500;
    this.maxDelayMs = opts.maxDelayMs ?? 30_000;
    this.closeWaitMs = opts.closeWaitMs ?? 5_000;
  }

  /** Hold the snapshot `json` (id `id`) whose write failed with `e`, and retry it later. */
  hold(id: string, json: string, owner: string | undefined, e: unknown): void {
    if (this.held.has(id)) return; // the same content, held already
    const h: Held = { id, json, owner, bytes: Buffer.byteLength(json), attempts: 0 };
    this.logger?.error(`${artifactOf(owner)} could not be stored: held in memory, its write retried`, {
      run_id: id,
      bytes: h.bytes,
      error: (e as Error)?.message ?? String(e),
    });
    if (this.closed) return this.drop(h, 'the server is stopping');
    if (h.bytes > this.maxBytes) return this.drop(h, 'it is larger than SVC_RUN_ARTIFACTS_PENDING_BYTES');
    this.held.set(id, h);
    this.bytes += h.bytes;
    for (const old of this.held.values()) {
      if (this.bytes <= this.maxBytes) break;
      this.drop(old, 'the held snapshots passed SVC_RUN_ARTIFACTS_PENDING_BYTES; the oldest goes first');
    }
    this.later(h);
  }

  state(id: string): WriteState | undefined {
    return this.held.has(id) ? 'held' : this.lost.has(id) ? 'lost' : undefined;
  }

  /** The session that owned the lost snapshot `id` ('' for none); undefined when `id` is not lost. */
  lostOwner(id: string): string | undefined {
    return this.lost.get(id);
  }

  /** The held snapshot `id`, parsed from what will be written. */
  get(id: string): RunSnapshot | undefined {
    const h = this.held.get(id);
    return h ? (JSON.parse(h.json) as RunSnapshot) : undefined;
  }

  /** Stop holding `id` (it was deleted); true when it was held. */
  forget(id: string): boolean {
    const h = this.held.get(id);
    if (!h) return false;
    this.release(h);
    return true;
  }

  /** One last write of each snapshot still held (at most `closeWaitMs`); what stays unwritten is lost. */
  async close(): Promise<void> {
    this.closed = true;
    const last = [...this.held.values()];
    for (const h of last) clearTimeout(h.timer);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled(last.map((h) => this.retry(h))),
      new Promise<void>((r) => (timer = setTimeout(r, this.closeWaitMs))),
    ]);
    clearTimeout(timer);
    for (const h of [...this.held.values()]) this.drop(h, 'the server stopped before the store took it');
  }

  stats(): HeldStats {
    const { bytes, maxBytes, lostCount: lost, failedRetries } = this;
    return { count: this.held.size, bytes, maxBytes, lost, failedRetries };
  }

  /** Schedule the next write of `h`: 0.5 s, 1 s, 2 s, ... up to 30 s after the last failure. */
  private later(h: Held): void {
    const delay = Math.min(this.maxDelayMs, this.firstDelayMs * 2 ** h.attempts);
    h.attempts++;
    h.timer = setTimeout(() => void this.retry(h), delay);
    h.timer.unref();
  }

  private async retry(h: Held): Promise<void> {
    h.timer = undefined;
    try {
      await this.store.write(h.id, h.json, h.owner);
    } catch (e) {
      this.failedRetries++;
      this.logger?.debug(`${artifactOf(h.owner)} still cannot be stored`, {
        run_id: h.id,
        attempts: h.attempts,
        error: (e as Error)?.message ?? String(e),
      });
      if (this.held.get(h.id) === h && !this.closed) this.later(h);
      return;
    }
    // Dropped while this write was in flight, and stored after all: not lost.
    if (this.held.get(h.id) === h) this.release(h);
    else if (this.lost.delete(h.id)) this.lostCount--;
    this.logger?.info(`${artifactOf(h.owner)} is stored after ${h.attempts} retries`, { run_id: h.id });
  }

  private release(h: Held): void {
    clearTimeout(h.timer);
    this.held.delete(h.id);
    this.bytes -= h.bytes;
  }

  private drop(h: Held, why: string): void {
    if (this.held.get(h.id) === h) this.release(h);
    this.lostCount++;
    this.lost.set(h.id, h.owner ?? '');
    if (this.lost.size > LOST_KEPT) this.lost.delete(this.lost.keys().next().value!);
    this.logger?.error(`${artifactOf(h.owner)} is lost: ${why}`, { run_id: h.id, bytes: h.bytes });
  }
}

function artifactOf(owner: string | undefined): string {
  return `the run artifact${owner ? ` of session ${owner}` : ''}`;
}
