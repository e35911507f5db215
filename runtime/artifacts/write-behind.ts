/**
 * A store in front of a store, for runs whose answer need not wait for their artifact: `putLater`
 * answers the snapshot's id at once, and the write completes after the answer. In front of a store
 * that checks ids against content (file, S3) the id is the hash, so the snapshot is serialized
 * first; in front of one that does not (memory) the id is minted, and the snapshot is built,
 * serialized and written after the answers of this turn of the event loop (at once by a store that
 * writes at once, `writeNow`: no promise per read). Reading an id not built yet builds it then;
 * reading one whose write is still in flight waits for it; a failed write is logged and counted
 * (`stats().failed_writes`, shown by `/v1/health`), and its id then reads as absent.
 *
 * `putOrHold` is for a run whose artifact is the only copy of its rows (a background run): when
 * the store fails, the snapshot is held in memory (held.ts) and written again with backoff; its id
 * reads from memory meanwhile, and `writeState` tells a caller which ids are held or were lost.
 */
import { sha256Hex } from '../../common/canonical.js';
import type { Logger } from '../../common/log.js';
import { mintArtifactId, ownerOf, snapshotJson, type RunSnapshot } from './snapshot.js';
import type { ArtifactStore, StoreStats } from './store.js';
import { HeldWrites, type HeldOptions, type WriteState } from './held.js';

export type { WriteState } from './held.js';

/** A minted snapshot waiting for its turn; `make` is dropped once it is started. */
interface Queued {
  id: string;
  make: (() => RunSnapshot) | undefined;
}

export class WriteBehindStore implements ArtifactStore {
  /** Writes started and not settled, by id. */
  private readonly pending = new Map<string, Promise<void>>();
  /**
   * Minted snapshots waiting for this turn's answers to go out, in order: one immediate builds
   * them all: an array taken whole each turn; a read of an id still queued finds it by a scan.
   */
  private batch: Queued[] = [];
  private scheduled = false;
  private failed = 0;
  /** Snapshots of `putOrHold` whose write failed: kept in memory and written again with backoff. */
  private readonly held: HeldWrites;

  constructor(
    readonly inner: ArtifactStore,
    private readonly logger?: Logger,
    held: HeldOptions = {},
  ) {
    this.held = new HeldWrites(inner, held, logger);
  }

  /**
   * The id of the snapshot `make` builds, answered before its write completes (the write goes on
   * in the background). `make` must build the same snapshot when called in a later turn: the run
   * it reads is not changed after it ends.
   * @example const runId = store.putLater(() => snapshotOf(plan, commitId, run, { startedAt }));
   */
  putLater(make: () => RunSnapshot): string {
    if (this.inner.mintsIds) {
      const id = mintArtifactId();
      this.batch.push({ id, make });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.release);
      }
      return id;
    }
    const s = make();
    const json = snapshotJson(s);
    const id = 'pr' + sha256Hex(json);
    if (!this.pending.has(id)) this.track(id, this.inner.write(id, json, ownerOf(s)), s);
    return id;
  }

  /**
   * The check phase of the turn that queued them: after the microtasks that write this turn's
   * answers (a clean read's whole path from the vendor's answer to `res.end` is one chain of
   * them), before the next I/O.
   */
  private readonly release = (): void => {
    this.scheduled = false;
    const batch = this.batch;
    this.batch = [];
    for (const q of batch) if (q.make) this.start(q);
  };

  /** Build the queued snapshot `q` and write it: in its immediate, or sooner for a read of it. */
  private start(q: Queued): void {
    const { id } = q;
    const make = q.make!;
    q.make = undefined;
    let s: RunSnapshot | undefined;
    try {
      s = make();
      const json = snapshotJson(s);
      // A store that writes at once (memory) needs no promise to wait for.
      if (this.inner.writeNow) this.inner.writeNow(id, json, ownerOf(s));
      else this.track(id, this.inner.write(id, json, ownerOf(s)), s);
    } catch (e) {
      this.failedWrite(id, s, e);
    }
  }

  /** Start `id` now when it is still queued (a read or a delete of it must not wait for its turn). */
  private startQueued(id: string): void {
    for (const q of this.batch) if (q.id === id && q.make) return this.start(q);
  }

  /** Keep `write` as the pending write of `id` until it settles; a failure is logged and counted. */
  private track(id: string, write: Promise<void>, s: RunSnapshot): void {
    const settled = () => {
      this.pending.delete(id);
    };
    const failed = (e: unknown) => {
      settled();
      this.failedWrite(id, s, e);
    };
    this.pending.set(id, write.then(settled, failed));
  }

  private failedWrite(id: string, s: RunSnapshot | undefined, e: unknown): void {
    this.failed++;
    const o = s?.session;
    this.logger?.error(`the run artifact${o ? ` of session ${o.prompt_hash}/${o.session}` : ''} could not be stored`, {
      run_id: id,
      error: (e as Error)?.message ?? String(e),
    });
  }

  /** Store `s` and answer its id once stored (a failure rejects, as the inner store's does). */
  put(s: RunSnapshot): Promise<string> {
    return this.inner.put(s);
  }

  /**
   * Store `s` and answer its id once the write has settled: stored, or, when the store failed,
   * held in memory and written again with backoff (`writeState(id)` is then `held`; `get` answers
   * it from memory). For a run whose artifact is the only copy of its rows (a background run).
   * Rejects only when `s` cannot be serialized.
   */
  async putOrHold(s: RunSnapshot): Promise<string> {
    const json = snapshotJson(s);
    const id = 'pr' + sha256Hex(json);
    const owner = ownerOf(s);
    try {
      await this.inner.write(id, json, owner);
    } catch (e) {
      this.failed++;
      this.held.hold(id, json, owner, e);
    }
    return id;
  }

  /**
   * What this process knows of `id`'s write: `held` (the store failed; the snapshot is in memory
   * and its write is retried), `lost` (dropped before it could be stored), or undefined (nothing
   * held here: the store answers for it).
   */
  writeState(id: string): WriteState | undefined {
    return this.held.state(id);
  }

  /** True when `id` was lost and belonged to `owner` (`ownerOf` its snapshot). */
  lostOf(id: string, owner: string): boolean {
    return this.held.lostOwner(id) === owner;
  }

  write(id: string, json: string, owner?: string): Promise<void> {
    return this.inner.write(id, json, owner);
  }

  async get(id: string): Promise<RunSnapshot | undefined> {
    this.startQueued(id);
    await this.pending.get(id);
    // A held snapshot answers from memory, a lost one as absent: the store that failed is not asked.
    const state = this.held.state(id);
    if (state) return state === 'held' ? this.held.get(id) : undefined;
    return this.inner.get(id);
  }

  async delete(id: string): Promise<boolean> {
    this.startQueued(id);
    await this.pending.get(id);
    const held = this.held.forget(id);
    return (await this.inner.delete(id)) || held;
  }

  gc(now?: number): Promise<number> {
    return this.inner.gc(now);
  }

  /** Resolves when every write started so far has settled. */
  async flush(): Promise<void> {
    this.release();
    while (this.pending.size) await Promise.all(this.pending.values());
  }

  /** Flush, give each held snapshot a last write, then close the store (what is still held is lost). */
  async close(): Promise<void> {
    await this.flush();
    await this.held.close();
    await this.inner.close();
  }

  stats(): StoreStats {
    // The batch's entries not started yet (a read of one starts it early).
    const queued = this.batch.reduce((n, q) => (q.make ? n + 1 : n), 0);
    const held = this.held.stats();
    return {
      ...this.inner.stats(),
      pending_writes: this.pending.size + queued + held.count,
      retrying_writes: held.count,
      pending_bytes: held.bytes,
      pending_max_bytes: held.maxBytes,
      failed_writes: this.failed + held.failedRetries,
      lost_writes: held.lost,
    };
  }
}
