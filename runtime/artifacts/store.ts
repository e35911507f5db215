/**
 * Run artifact stores: the small interface every implementation (memory-store.ts, file-store.ts,
 * s3-store.ts) satisfies, and the settings that choose one (`SVC_RUN_ARTIFACTS_URL`, retention,
 * GC interval, memory budget, the `SVC_S3_*` settings of an S3 store). The factory that opens a store from its URL is store-from-url.ts, so the
 * implementations can import this module without a cycle.
 */
import { SvcFailure, svcError, type SvcError } from '../../common/errors.js';
import type { RunSnapshot } from './snapshot.js';
import type { Logger } from '../../common/log.js';
import { s3SettingsFromEnv, type S3Settings } from './s3-settings.js';

/**
 * Where run snapshots live. Ids of `put` are content-addressed (`pr` + 64 hex), so `put` of the
 * same snapshot twice yields the same id and stores it once. Lookups of a string that is not an
 * artifact id answer `undefined`/`false` without touching the backend.
 */
export interface ArtifactStore {
  /**
   * True when `get` answers what was written under an id without checking it against the bytes
   * (the memory store): `WriteBehindStore.putLater` then mints the id and serializes after the
   * answer. Unset: `get` checks that the bytes hash to the id (file, S3), so ids are hashes.
   */
  readonly mintsIds?: boolean;
  /**
   * `write`, done before it returns (the memory store): `WriteBehindStore` then writes a minted
   * snapshot without a promise. A store whose writes wait for anything leaves it unset.
   */
  writeNow?(id: string, json: string, owner?: string): void;
  /** Store `s` and return its id. */
  put(s: RunSnapshot): Promise<string>;
  /**
   * Store `json`, the `snapshotJson` of a snapshot, under `id` (`pr` + its sha256, or minted when
   * `mintsIds`): what `put` does once it has serialized, for a caller that took the id already
   * (`WriteBehindStore`).
   * `owner` (`ownerOf` the snapshot) names the session that made it: the memory store keeps at
   * most `memoryPerSession` snapshots per owner; the other stores ignore it.
   */
  write(id: string, json: string, owner?: string): Promise<void>;
  /** The snapshot with this id; undefined when unknown, malformed, removed or corrupt. */
  get(id: string): Promise<RunSnapshot | undefined>;
  /** Remove one snapshot; true when it was there. */
  delete(id: string): Promise<boolean>;
  /** Remove snapshots older than the retention (as of `now`, ms since the epoch); returns how many. */
  gc(now?: number): Promise<number>;
  /** Stop the GC timer. The stored data stays. */
  close(): Promise<void>;
  /** What the store holds, as far as it knows without I/O (for /v1/health). */
  stats(): StoreStats;
}

export interface StoreStats {
  kind: 'memory' | 'file' | 's3';
  /** Snapshots and their bytes held (memory store). */
  count?: number;
  bytes?: number;
  /** The byte budget: past it, the oldest snapshots are dropped (memory store). */
  max_bytes?: number;
  /** Snapshots kept per session: past it, that session's oldest is dropped (memory store). */
  per_session?: number;
  /** Writes not stored yet (`WriteBehindStore`): started after their answer, or held and retried. */
  pending_writes?: number;
  /** Snapshots of background runs held in memory after a failed write, written again with backoff. */
  retrying_writes?: number;
  /** Their bytes, and the budget past which the oldest is lost (`SVC_RUN_ARTIFACTS_PENDING_BYTES`). */
  pending_bytes?: number;
  pending_max_bytes?: number;
  /**
   * Writes that failed since the start, retries included (each logged): a clean read's run then
   * answers `unknown_run`; a background run's snapshot is held and retried.
   */
  failed_writes?: number;
  /** Held snapshots dropped before they could be stored (`run_artifact_lost`). */
  lost_writes?: number;
}

export interface StoreOptions {
  /** A snapshot is removed by the first GC after it is this many seconds old. */
  retentionSecs: number;
  /** Seconds between two GC runs of the store's own timer. */
  gcIntervalSecs: number;
  /** Clock in ms since the epoch (tests); default `Date.now`. */
  now?: () => number;
  /** Memory store only: bytes of snapshots held at most (default `DEFAULT_MEMORY_MAX_BYTES`). */
  memoryMaxBytes?: number;
  /** Memory store only: snapshots kept per session at most (default `DEFAULT_MEMORY_PER_SESSION`). */
  memoryPerSession?: number;
  /** Where GC passes are logged (default: nowhere). */
  logger?: Logger;
}

export interface ArtifactSettings extends StoreOptions {
  /** `SVC_RUN_ARTIFACTS_URL`; undefined = process-local memory store. */
  url: string | undefined;
  /** How to reach the store (`SVC_S3_*`, defaults filled in); present when `url` is an `s3://` URL. */
  s3?: S3Settings;
}

export const DEFAULT_RETENTION_SECS = 7 * 24 * 60 * 60;
export const DEFAULT_GC_INTERVAL_SECS = 300;
/** Byte budget of the memory store (`SVC_RUN_ARTIFACTS_MEMORY_MAX_BYTES`): 256 MiB. */
export const DEFAULT_MEMORY_MAX_BYTES = 256 * 1024 * 1024;
/**
 * Snapshots the memory store keeps per session (`SVC_RUN_ARTIFACTS_MEMORY_PER_SESSION`): 256, more
 * than a session lists (its last 100 runs) plus its terminal operations (32), so every run a
 * session can still name stays readable, and memory grows with sessions, not with reads.
 */
export const DEFAULT_MEMORY_PER_SESSION = 256;

/**
 * The artifact settings of an environment: `SVC_RUN_ARTIFACTS_URL`,
 * `SVC_RUN_ARTIFACTS_RETENTION_SECS` (default 604800 = 7 days),
 * `SVC_RUN_ARTIFACTS_GC_INTERVAL_SECS` (default 300), `SVC_RUN_ARTIFACTS_MEMORY_MAX_BYTES`
 * (default 256 MiB, the memory store's budget) and `SVC_RUN_ARTIFACTS_MEMORY_PER_SESSION` (default
 * 256 snapshots per session in the memory store), and for an `s3://` URL the `SVC_S3_*` settings
 * (`s3SettingsFromEnv`). Throws `bad_arguments` for a value that is not a positive whole number, or
 * a bad `SVC_S3_*` value (checked even when the URL is not `s3://`). Empty values count as unset.
 */
export function artifactSettingsFromEnv(env: Record<string, string | undefined>): ArtifactSettings {
  const errors: SvcError[] = [];
  const retentionSecs = positive(env, 'SVC_RUN_ARTIFACTS_RETENTION_SECS', DEFAULT_RETENTION_SECS, 'seconds', errors);
  const gcIntervalSecs = positive(
    env,
    'SVC_RUN_ARTIFACTS_GC_INTERVAL_SECS',
    DEFAULT_GC_INTERVAL_SECS,
    'seconds',
    errors,
  );
  const memoryMaxBytes = positive(env, 'SVC_RUN_ARTIFACTS_MEMORY_MAX_BYTES', DEFAULT_MEMORY_MAX_BYTES, 'bytes', errors);
  const memoryPerSession = positive(
    env,
    'SVC_RUN_ARTIFACTS_MEMORY_PER_SESSION',
    DEFAULT_MEMORY_PER_SESSION,
    'snapshots',
    errors,
  );
  const s3 = s3SettingsFromEnv(env, errors);
  if (errors.length) throw new SvcFailure(errors);
  const url = env.SVC_RUN_ARTIFACTS_URL?.trim();
  const settings: ArtifactSettings = {
    url: url ? url : undefined,
    retentionSecs,
    gcIntervalSecs,
    memoryMaxBytes,
    memoryPerSession,
  };
  if (url && /^s3:/i.test(url)) settings.s3 = s3;
  return settings;
}

function positive(
  env: Record<string, string | undefined>,
  name: string,
  fallback: number,
  unit: string,
  errors: SvcError[],
): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n <= 0) {
    errors.push(
      svcError(
        'bad_arguments',
        `${name}=${JSON.stringify(raw.slice(0, 40))} is not a positive whole number of ${unit}`,
        { hint: `set ${name} to an integer ≥ 1 (default ${fallback}), or unset it` },
      ),
    );
    return fallback;
  }
  return n;
}
