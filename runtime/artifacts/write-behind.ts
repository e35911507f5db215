/**
 * A store in front of a store, for runs whose answer need not wait for their artifact: `putLater`
 * answers the snapshot's id at once, and the write completes after the answer. In front of a store
 * that checks ids against content (file, S3) the id is the hash, so the snapshot is serialized
 * first; in front of one that does not (memory) the id is minted, and the snapshot is built,
 * serialized and written after the answers of this turn of the event loop.
 * Reading an id whose write is still in flight waits for it; a failed write is logged and counted
 * (`stats().failed_writes`, shown by `/v1/health`), and its id then reads as absent.
 */
import { sha256Hex } from '../../common/canonical.js';
import type { Logger } from '../../common/log.js';
import { mintArtifactId, ownerOf, snapshotJson, type RunSnapshot } from './snapshot.js';
import type { ArtifactStore, StoreStats } from './store.js';

export class WriteBehindStore implements ArtifactStore {
  /** Writes started by `putLater` and not settled, by id. */
  private readonly pending = new Map<string, Promise<void>>();
  private failed = 0;
  /** Minted writes waiting for the turn's answers to go out: one immediate for all of them. */
  private queued: Array<() => void> = [];

  constructor(
    readonly inner: ArtifactStore,
    private readonly logger?: Logger,
  ) {}

  /**
   * The id of the snapshot `make` builds, answered before its write completes (the write goes on
   * in the background). `make` must build the same snapshot when called in a later turn: the run
   * it reads is not changed after it ends.
   * @example const runId = store.putLater(() => snapshotOf(plan, commitId, run, { startedAt }));
   */
  putLater(make: () => RunSnapshot): string {
    if (this.inner.mintsIds) {
      const id = mintArtifactId();
      let s: RunSnapshot | undefined;
      const write = this.afterAnswers().then(() => {
        s = make();
        return this.inner.write(id, snapshotJson(s), ownerOf(s));
      });
      this.track(id, write, () => s);
      return id;
    }
    const s = make();
    const json = snapshotJson(s);
    const id = 'pr' + sha256Hex(json);
    if (!this.pending.has(id)) this.track(id, this.inner.write(id, json, ownerOf(s)), () => s);
    return id;
  }

  /** Keep `write` as the pending write of `id` until it settles; a failure is logged and counted. */
  private track(id: string, write: Promise<void>, of: () => RunSnapshot | undefined): void {
    const tracked = write
      .catch((e: unknown) => {
        this.failed++;
        const o = of()?.session;
        this.logger?.error(
          `the run artifact${o ? ` of session ${o.prompt_hash}/${o.session}` : ''} could not be stored`,
          {
            run_id: id,
            error: (e as Error)?.message ?? String(e),
          },
        );
      })
      .finally(() => this.pending.delete(id));
    this.pending.set(id, tracked);
  }

  /**
   * Resolves in the check phase of this turn of the event loop: after the microtasks that write
   * this turn's answers (a clean read's whole path from the vendor's answer to `res.end` is one
   * chain of them), before the next I/O.
   */
  private afterAnswers(): Promise<void> {
    return new Promise((resolve) => {
      if (this.queued.push(resolve) === 1) setImmediate(this.release);
    });
  }

  private readonly release = (): void => {
    const queued = this.queued;
    this.queued = [];
    for (const go of queued) go();
  };

  /** Store `s` and answer its id once stored (a failure rejects, as the inner store's does). */
  put(s: RunSnapshot): Promise<string> {
    return this.inner.put(s);
  }

  write(id: string, json: string, owner?: string): Promise<void> {
    return this.inner.write(id, json, owner);
  }

  async get(id: string): Promise<RunSnapshot | undefined> {
    await this.pending.get(id);
    return this.inner.get(id);
  }

  async delete(id: string): Promise<boolean> {
    await this.pending.get(id);
    return this.inner.delete(id);
  }

  gc(now?: number): Promise<number> {
    return this.inner.gc(now);
  }

  /** Resolves when every write started so far has settled. */
  async flush(): Promise<void> {
    while (this.pending.size) await Promise.all(this.pending.values());
  }

  async close(): Promise<void> {
    await this.flush();
    await this.inner.close();
  }

  stats(): StoreStats {
    return { ...this.inner.stats(), pending_writes: this.pending.size, failed_writes: this.failed };
  }
}
