/**
 * A store in front of a store, for runs whose answer need not wait for their artifact: `putLater`
 * serializes the snapshot and answers its id at once, and the write completes after the answer.
 * Reading an id whose write is still in flight waits for it; a failed write is logged and counted
 * (`stats().failed_writes`, shown by `/v1/health`), and its id then reads as absent.
 */
import { sha256Hex } from '../../common/canonical.js';
import type { Logger } from '../../common/log.js';
import { ownerOf, snapshotJson, type RunSnapshot } from './snapshot.js';
import type { ArtifactStore, StoreStats } from './store.js';

export class WriteBehindStore implements ArtifactStore {
  /** Writes started by `putLater` and not settled, by id. */
  private readonly pending = new Map<string, Promise<void>>();
  private failed = 0;

  constructor(
    readonly inner: ArtifactStore,
    private readonly logger?: Logger,
  ) {}

  /**
   * The id of `s`, answered before its write completes (the write goes on in the background).
   * @example const runId = store.putLater(snapshotOf(plan, commitId, run, { startedAt }));
   */
  putLater(s: RunSnapshot): string {
    const json = snapshotJson(s);
    const id = 'pr' + sha256Hex(json);
    if (this.pending.has(id)) return id;
    const write = this.inner
      .write(id, json, ownerOf(s))
      .catch((e: unknown) => {
        this.failed++;
        const where = s.session ? ` of session ${s.session.prompt_hash}/${s.session.session}` : '';
        this.logger?.error(`the run artifact${where} could not be stored`, {
          run_id: id,
          error: (e as Error)?.message ?? String(e),
        });
      })
      .finally(() => this.pending.delete(id));
    this.pending.set(id, write);
    return id;
  }

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
