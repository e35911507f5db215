/**
 * The directory artifact store (`file:///abs/dir`): one `<id>.json` per snapshot holding its
 * JSON (`snapshotJson`). A snapshot is written to `<id>.json.tmp-<pid>-<random>` in the same directory,
 * flushed, then renamed, so the final name never holds a half-written file; a crash leaves only
 * `*.tmp-*` files, which the GC removes. Retention is by file mtime. Another store opened on the
 * same directory (after a restart, or in another process) serves the same snapshots.
 */
import { randomBytes } from 'node:crypto';
import { lstat, mkdir, open, readdir, rename, rm, unlink, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { NotRegularFileError, readRegularFile } from '../../pack/read-regular.js';
import { isArtifactId, verifiedSnapshot, type RunSnapshot } from './snapshot.js';
import { GcTimer, putByWrite } from './gc-timer.js';
import type { ArtifactStore, StoreOptions, StoreStats } from './store.js';

/** Leftover temp files are removed once this old (or older than the retention, if shorter). */
const STALE_TMP_MS = 60 * 60 * 1000;
const SNAPSHOT_FILE = /^pr[0-9a-f]{64}\.json$/;
const TMP_FILE = /^pr[0-9a-f]{64}\.json\.tmp-/;
/** Files examined at once by the GC. */
const GC_BATCH = 64;

function errCode(e: unknown): string | undefined {
  return (e as { code?: string } | null)?.code;
}

export class FileArtifactStore implements ArtifactStore {
  private readonly retentionMs: number;
  private readonly now: () => number;
  /** Temp files of puts in progress in this process: never collected. */
  private readonly writing = new Set<string>();
  private readonly timer: GcTimer;

  private constructor(
    readonly dir: string,
    opts: StoreOptions,
  ) {
    this.retentionMs = opts.retentionSecs * 1000;
    this.now = opts.now ?? Date.now;
    this.timer = new GcTimer(opts.gcIntervalSecs, {
      store: 'file',
      run: async () => ({ removed: await this.gc() }),
      describe: (e) => (e as NodeJS.ErrnoException)?.code ?? String(e),
      ...(opts.logger ? { logger: opts.logger } : {}),
    });
  }

  /** Open (and create, mode 0700, when missing) the store directory `dir` (absolute). */
  static async open(dir: string, opts: StoreOptions): Promise<FileArtifactStore> {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    return new FileArtifactStore(dir, opts);
  }

  private file(id: string): string {
    return join(this.dir, `${id}.json`);
  }

  put(s: RunSnapshot): Promise<string> {
    return putByWrite(this, s);
  }

  async write(id: string, json: string): Promise<void> {
    if (await this.read(id)) return; // content-addressed: already there and intact
    const name = `${id}.json.tmp-${process.pid}-${randomBytes(6).toString('hex')}`;
    const tmp = join(this.dir, name);
    this.writing.add(name);
    try {
      const fh = await open(tmp, 'wx', 0o600);
      try {
        await fh.writeFile(json, 'utf8');
        await fh.sync();
      } finally {
        await fh.close();
      }
      const t = this.now() / 1000;
      await utimes(tmp, t, t);
      await rename(tmp, this.file(id));
    } catch (e) {
      await rm(tmp, { force: true });
      throw e;
    } finally {
      this.writing.delete(name);
    }
  }

  async get(id: string): Promise<RunSnapshot | undefined> {
    if (!isArtifactId(id)) return undefined;
    return this.read(id);
  }

  /**
   * The verified snapshot stored under `id`; undefined when absent, corrupt or not a regular file
   * (a FIFO under a snapshot's name is never waited on; a write renames a snapshot over it).
   */
  private async read(id: string): Promise<RunSnapshot | undefined> {
    let bytes: Buffer;
    try {
      bytes = await readRegularFile(this.file(id));
    } catch (e) {
      if (errCode(e) === 'ENOENT' || e instanceof NotRegularFileError) return undefined;
      throw e;
    }
    return verifiedSnapshot(id, bytes);
  }

  async delete(id: string): Promise<boolean> {
    if (!isArtifactId(id)) return false;
    try {
      await unlink(this.file(id));
      return true;
    } catch (e) {
      if (errCode(e) === 'ENOENT') return false;
      throw e;
    }
  }

  async gc(now: number = this.now()): Promise<number> {
    const names = await readdir(this.dir);
    const tmpAge = Math.min(this.retentionMs, STALE_TMP_MS);
    let removed = 0;
    for (let i = 0; i < names.length; i += GC_BATCH) {
      const done = await Promise.all(
        names.slice(i, i + GC_BATCH).map(async (name) => {
          const snapshot = SNAPSHOT_FILE.test(name);
          if (!snapshot && (!TMP_FILE.test(name) || this.writing.has(name))) return false;
          return (await this.removeIfOlder(name, now - (snapshot ? this.retentionMs : tmpAge))) && snapshot;
        }),
      );
      removed += done.filter(Boolean).length;
    }
    return removed;
  }

  /** Remove `name` when its mtime is at or before `cutoff`; true when removed by this call. */
  private async removeIfOlder(name: string, cutoff: number): Promise<boolean> {
    const path = join(this.dir, name);
    try {
      const st = await lstat(path);
      if (!st.isFile() && !st.isSymbolicLink()) return false;
      if (st.mtimeMs > cutoff) return false;
      await unlink(path);
      return true;
    } catch (e) {
      if (errCode(e) === 'ENOENT') return false; // removed concurrently
      throw e;
    }
  }

  stats(): StoreStats {
    return { kind: 'file' };
  }

  async close(): Promise<void> {
    this.timer.stop();
  }
}
