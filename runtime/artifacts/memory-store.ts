/**
 * The process-local artifact store (the default): a Map of id -> snapshot JSON and creation
 * time. Snapshots are kept as JSON text, so a caller mutating a snapshot after `put` (or the
 * object `get` returned) never changes what is stored under its id. The store has a byte budget:
 * past it, the oldest snapshots are dropped first (never the one just stored).
 */
import { isArtifactId, type RunSnapshot } from './snapshot.js';
import { GcTimer, putByWrite } from './gc-timer.js';
import { DEFAULT_MEMORY_MAX_BYTES, type ArtifactStore, type StoreOptions, type StoreStats } from './store.js';

export class MemoryArtifactStore implements ArtifactStore {
  /** Oldest first (insertion order). */
  private readonly items = new Map<string, { json: string; created: number }>();
  private readonly retentionMs: number;
  private readonly maxBytes: number;
  /** UTF-16 code units of the JSON held: the memory the texts take is about twice this. */
  private held = 0;
  private readonly now: () => number;
  private readonly timer: GcTimer;

  constructor(opts: StoreOptions) {
    this.retentionMs = opts.retentionSecs * 1000;
    this.maxBytes = opts.memoryMaxBytes ?? DEFAULT_MEMORY_MAX_BYTES;
    this.now = opts.now ?? Date.now;
    this.timer = new GcTimer(opts.gcIntervalSecs, {
      store: 'memory',
      run: async () => ({ removed: await this.gc(), held: this.items.size, bytes: this.held }),
      describe: String,
      ...(opts.logger ? { logger: opts.logger } : {}),
    });
  }

  /** Number of snapshots held. */
  get size(): number {
    return this.items.size;
  }

  put(s: RunSnapshot): Promise<string> {
    return putByWrite(this, s);
  }

  async write(id: string, json: string): Promise<void> {
    if (this.items.has(id)) return;
    this.items.set(id, { json, created: this.now() });
    this.held += json.length;
    for (const [old, item] of this.items) {
      if (this.held <= this.maxBytes || old === id) break;
      this.remove(old, item.json);
    }
  }

  private remove(id: string, json: string): void {
    this.items.delete(id);
    this.held -= json.length;
  }

  stats(): StoreStats {
    return { kind: 'memory', count: this.items.size, bytes: this.held, max_bytes: this.maxBytes };
  }

  async get(id: string): Promise<RunSnapshot | undefined> {
    if (!isArtifactId(id)) return undefined;
    const item = this.items.get(id);
    return item ? (JSON.parse(item.json) as RunSnapshot) : undefined;
  }

  async delete(id: string): Promise<boolean> {
    const item = isArtifactId(id) ? this.items.get(id) : undefined;
    if (item) this.remove(id, item.json);
    return item !== undefined;
  }

  async gc(now: number = this.now()): Promise<number> {
    let removed = 0;
    for (const [id, item] of this.items) {
      if (now - item.created >= this.retentionMs) {
        this.remove(id, item.json);
        removed++;
      }
    }
    return removed;
  }

  async close(): Promise<void> {
    this.timer.stop();
  }
}
