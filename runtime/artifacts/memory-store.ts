/**
 * The process-local artifact store (the default): a Map of id -> canonical JSON and creation
 * time. Snapshots are kept as JSON text, so a caller mutating a snapshot after `put` (or the
 * object `get` returned) never changes what is stored under its id.
 */
import { canonicalJson, sha256Hex } from '../../common/canonical.js';
import { isArtifactId, type RunSnapshot } from './snapshot.js';
import type { ArtifactStore, StoreOptions } from './store.js';

/** setInterval cannot wait longer than this (larger values fire after 1 ms). */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class MemoryArtifactStore implements ArtifactStore {
  private readonly items = new Map<string, { json: string; created: number }>();
  private readonly retentionMs: number;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;

  constructor(opts: StoreOptions) {
    this.retentionMs = opts.retentionSecs * 1000;
    this.now = opts.now ?? Date.now;
    this.timer = setInterval(() => void this.gc(), Math.min(MAX_TIMER_MS, opts.gcIntervalSecs * 1000));
    this.timer.unref();
  }

  /** Number of snapshots held. */
  get size(): number {
    return this.items.size;
  }

  async put(s: RunSnapshot): Promise<string> {
    const json = canonicalJson(s);
    const id = 'pr' + sha256Hex(json);
    if (!this.items.has(id)) this.items.set(id, { json, created: this.now() });
    return id;
  }

  async get(id: string): Promise<RunSnapshot | undefined> {
    if (!isArtifactId(id)) return undefined;
    const item = this.items.get(id);
    return item ? (JSON.parse(item.json) as RunSnapshot) : undefined;
  }

  async delete(id: string): Promise<boolean> {
    return isArtifactId(id) && this.items.delete(id);
  }

  async gc(now: number = this.now()): Promise<number> {
    let removed = 0;
    for (const [id, item] of this.items) {
      if (now - item.created >= this.retentionMs) {
        this.items.delete(id);
        removed++;
      }
    }
    return removed;
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
