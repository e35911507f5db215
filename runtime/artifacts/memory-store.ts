/**
 * The process-local artifact store (the default): a Map of id -> snapshot JSON and creation
 * time. Snapshots are kept as JSON text, so a caller mutating a snapshot after `put` (or the
 * object `get` returned) never changes what is stored under its id, and as its UTF-8 bytes in a
 * `Buffer`, outside the JS heap: the collector neither copies nor marks them. (Kept as strings,
 * every read's snapshot outlived the young generation and was promoted, about 3.3 KB a read on a
 * 25-row read, so the old generation filled with them; RSS rose 20-40 % over the first 15,000
 * reads and fell back once V8 had sized its heap. As bytes, RSS stays flat after the warm-up.)
 * Two bounds, besides the retention: a byte budget (past it, the oldest snapshots are dropped
 * first, never the one just stored) and a count per session (past it, that session's oldest is
 * dropped), so the memory it takes grows with the sessions served, not with the reads one session
 * makes.
 */
import { isArtifactId, type RunSnapshot } from './snapshot.js';
import { GcTimer, putByWrite } from './gc-timer.js';
import {
  DEFAULT_MEMORY_MAX_BYTES,
  DEFAULT_MEMORY_PER_SESSION,
  type ArtifactStore,
  type StoreOptions,
  type StoreStats,
} from './store.js';

interface Item {
  /** The snapshot's JSON, UTF-8. */
  bytes: Buffer;
  created: number;
  owner: string | undefined;
}

export class MemoryArtifactStore implements ArtifactStore {
  /** `get` answers what was written under an id, unchecked: a clean read's id can be minted. */
  readonly mintsIds = true;
  /** Oldest first (insertion order). */
  private readonly items = new Map<string, Item>();
  /** The ids each session owns, oldest first. */
  private readonly owned = new Map<string, Set<string>>();
  private readonly retentionMs: number;
  private readonly maxBytes: number;
  private readonly perSession: number;
  /** Bytes of the JSON held. */
  private held = 0;
  private readonly now: () => number;
  private readonly timer: GcTimer;

  constructor(opts: StoreOptions) {
    this.retentionMs = opts.retentionSecs * 1000;
    this.maxBytes = opts.memoryMaxBytes ?? DEFAULT_MEMORY_MAX_BYTES;
    this.perSession = opts.memoryPerSession ?? DEFAULT_MEMORY_PER_SESSION;
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

  async write(id: string, json: string, owner?: string): Promise<void> {
    this.writeNow(id, json, owner);
  }

  writeNow(id: string, json: string, owner?: string): void {
    if (this.items.has(id)) return;
    const bytes = Buffer.from(json);
    this.items.set(id, { bytes, created: this.now(), owner });
    this.held += bytes.length;
    if (owner !== undefined) this.own(owner, id);
    for (const [old, item] of this.items) {
      if (this.held <= this.maxBytes || old === id) break;
      this.remove(old, item);
    }
  }

  /** Record that `owner` made `id`, dropping the owner's oldest past the per-session count. */
  private own(owner: string, id: string): void {
    let ids = this.owned.get(owner);
    if (!ids) this.owned.set(owner, (ids = new Set()));
    ids.add(id);
    if (ids.size <= this.perSession) return;
    const oldest = ids.values().next().value as string;
    this.remove(oldest, this.items.get(oldest)!);
  }

  private remove(id: string, item: Item): void {
    this.items.delete(id);
    this.held -= item.bytes.length;
    if (item.owner === undefined) return;
    const ids = this.owned.get(item.owner);
    ids?.delete(id);
    if (ids?.size === 0) this.owned.delete(item.owner);
  }

  stats(): StoreStats {
    return {
      kind: 'memory',
      count: this.items.size,
      bytes: this.held,
      max_bytes: this.maxBytes,
      per_session: this.perSession,
    };
  }

  async get(id: string): Promise<RunSnapshot | undefined> {
    if (!isArtifactId(id)) return undefined;
    const item = this.items.get(id);
    return item ? (JSON.parse(item.bytes.toString()) as RunSnapshot) : undefined;
  }

  async delete(id: string): Promise<boolean> {
    const item = isArtifactId(id) ? this.items.get(id) : undefined;
    if (item) this.remove(id, item);
    return item !== undefined;
  }

  async gc(now: number = this.now()): Promise<number> {
    let removed = 0;
    for (const [id, item] of this.items) {
      if (now - item.created >= this.retentionMs) {
        this.remove(id, item);
        removed++;
      }
    }
    return removed;
  }

  async close(): Promise<void> {
    this.timer.stop();
  }
}
