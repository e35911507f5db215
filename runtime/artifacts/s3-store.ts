/**
 * The S3 artifact store (`s3://bucket/prefix`): one object `<prefix>/<id>.json` per snapshot
 * holding its JSON (`snapshotJson`), Content-Type application/json, in AWS S3 or an
 * S3-compatible store (MinIO, ...; `SVC_S3_ENDPOINT`). `get` verifies the hash of the bytes, so a
 * corrupt or altered object reads as absent; a `put` rewrites the object (one request, the same
 * bytes), which also repairs it and restarts its age. Retention is by the object's LastModified:
 * a bucket lifecycle rule is the production way to expire objects, and the store's own GC timer
 * does the same in process. Every other object of the bucket is left alone.
 *
 * Only store-from-url.ts imports this module, lazily: the AWS SDK is loaded only by a server
 * whose URL is `s3://`.
 */
import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { SvcFailure } from '../../common/errors.js';
import type { Logger } from '../../common/log.js';
import { isNoSuchBucket, isNoSuchKey, noSuchBucket, s3ErrorName, storeUnavailable } from './s3-errors.js';
import { DEFAULT_S3_REGION, parseS3Url, type S3Location, type S3Settings } from './s3-settings.js';
import { isArtifactId, verifiedSnapshot, type RunSnapshot } from './snapshot.js';
import { GcTimer, putByWrite } from './gc-timer.js';
import type { ArtifactStore, StoreOptions, StoreStats } from './store.js';

/** The most keys one ListObjectsV2 page or one DeleteObjects request takes. */
const S3_BATCH = 1000;
const SNAPSHOT_NAME = /^pr[0-9a-f]{64}\.json$/;
/** Per request: connecting, and the whole request and answer (each of up to 3 attempts). */
const CONNECTION_TIMEOUT_MS = 3_000;
const REQUEST_TIMEOUT_MS = 10_000;

export interface S3OpenOptions extends StoreOptions, S3Settings {
  /** Keys per ListObjectsV2 page in `gc` (tests; default and maximum 1000). */
  listPageSize?: number;
}

export class S3ArtifactStore implements ArtifactStore {
  readonly bucket: string;
  /** Key prefix without slashes at either end; '' = the bucket root. */
  readonly prefix: string;
  private readonly retentionMs: number;
  private readonly pageSize: number;
  private readonly logger: Logger | undefined;
  private readonly now: () => number;
  private readonly timer: GcTimer;

  private constructor(
    private readonly client: S3Client,
    where: S3Location,
    opts: S3OpenOptions,
  ) {
    this.bucket = where.bucket;
    this.prefix = where.prefix;
    this.retentionMs = opts.retentionSecs * 1000;
    this.pageSize = Math.min(S3_BATCH, Math.max(1, opts.listPageSize ?? S3_BATCH));
    this.logger = opts.logger;
    this.now = opts.now ?? Date.now;
    this.timer = new GcTimer(opts.gcIntervalSecs, {
      store: 's3',
      run: async () => ({ removed: await this.gc() }),
      describe: (e) => (e instanceof SvcFailure ? (e.errors[0]?.cause ?? e.errors[0]?.code) : s3ErrorName(e)),
      ...(opts.logger ? { logger: opts.logger } : {}),
    });
  }

  /**
   * Open the store of `url` (`s3://bucket/prefix`), checking once that the bucket is reachable
   * (HeadBucket). Throws `bad_arguments` for a bad URL or a bucket that does not exist (it is
   * never created), `store_unavailable` when the bucket cannot be reached or read.
   * @example const store = await S3ArtifactStore.open('s3://svc-runs/prod', { ...settings, ...settings.s3 });
   */
  static async open(url: string, opts: S3OpenOptions): Promise<S3ArtifactStore> {
    const where = parseS3Url(url);
    const client = new S3Client(clientConfig(opts));
    try {
      await client.send(new HeadBucketCommand({ Bucket: where.bucket }));
    } catch (e) {
      client.destroy();
      throw isNoSuchBucket(e) ? noSuchBucket(where.bucket) : storeUnavailable(where.bucket, 'be reached', e);
    }
    return new S3ArtifactStore(client, where, opts);
  }

  /** The key of a snapshot, `<prefix>/<id>.json`. */
  key(id: string): string {
    return `${this.listPrefix()}${id}.json`;
  }

  private listPrefix(): string {
    return this.prefix ? `${this.prefix}/` : '';
  }

  put(s: RunSnapshot): Promise<string> {
    return putByWrite(this, s);
  }

  async write(id: string, json: string): Promise<void> {
    // A bug, not a user mistake: ids come from `put`/`putLater`, which compute them.
    if (!isArtifactId(id)) throw new Error('S3ArtifactStore.write: the id is not an artifact id');
    const put = new PutObjectCommand({
      Bucket: this.bucket,
      Key: this.key(id),
      Body: json,
      ContentType: 'application/json',
    });
    await this.call('store a snapshot', () => this.client.send(put));
  }

  async get(id: string): Promise<RunSnapshot | undefined> {
    if (!isArtifactId(id)) return undefined;
    const bytes = await this.lookup('read a snapshot', async () => {
      const got = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.key(id) }));
      return got.Body ? got.Body.transformToByteArray() : new Uint8Array();
    });
    return bytes && verifiedSnapshot(id, bytes);
  }

  async delete(id: string): Promise<boolean> {
    if (!isArtifactId(id)) return false;
    const Key = this.key(id);
    const there = await this.lookup('find a snapshot', () =>
      this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key })),
    );
    if (!there) return false;
    await this.call('delete a snapshot', () => this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key })));
    return true;
  }

  async gc(now: number = this.now()): Promise<number> {
    const cutoff = now - this.retentionMs;
    const prefix = this.listPrefix();
    let removed = 0;
    let token: string | undefined;
    do {
      const list = new ListObjectsV2Command({
        Bucket: this.bucket,
        Prefix: prefix,
        MaxKeys: this.pageSize,
        ContinuationToken: token,
      });
      const page = await this.call('list the snapshots', () => this.client.send(list));
      const expired = (page.Contents ?? [])
        .filter((o) => o.Key !== undefined && SNAPSHOT_NAME.test(o.Key.slice(prefix.length)))
        .filter((o) => o.LastModified !== undefined && o.LastModified.getTime() <= cutoff)
        .map((o) => o.Key!);
      removed += await this.deleteKeys(expired);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return removed;
  }

  /** Delete `keys` (DeleteObjects, at most 1000 a request); how many were deleted. */
  private async deleteKeys(keys: string[]): Promise<number> {
    let deleted = 0;
    for (let i = 0; i < keys.length; i += S3_BATCH) {
      const batch = keys.slice(i, i + S3_BATCH);
      const Delete = { Objects: batch.map((Key) => ({ Key })), Quiet: true };
      const out = await this.call('delete expired snapshots', () =>
        this.client.send(new DeleteObjectsCommand({ Bucket: this.bucket, Delete })),
      );
      const failed = out.Errors ?? [];
      if (failed.length) {
        this.logger?.warn('artifact gc could not delete some objects', {
          store: 's3',
          failed: failed.length,
          error: failed[0]?.Code ?? 'unknown',
        });
      }
      deleted += batch.length - failed.length;
    }
    return deleted;
  }

  /** Run one request of `what`: its answer; any failure is `store_unavailable`. */
  private async call<T>(what: string, request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (e) {
      throw storeUnavailable(this.bucket, what, e);
    }
  }

  /** `call` for a read of one key: undefined when there is no such key (404). */
  private async lookup<T>(what: string, request: () => Promise<T>): Promise<T | undefined> {
    try {
      return await request();
    } catch (e) {
      if (isNoSuchKey(e)) return undefined;
      throw storeUnavailable(this.bucket, what, e);
    }
  }

  stats(): StoreStats {
    return { kind: 's3' };
  }

  /** Stop the GC timer. The client stays usable: a closed store still reads, as the others do. */
  async close(): Promise<void> {
    this.timer.stop();
  }
}

/** The S3 client of `s`: 3 attempts a request, timeouts, path style by default with an endpoint. */
export function clientConfig(s: S3Settings): S3ClientConfig {
  const config: S3ClientConfig = {
    region: s.region ?? DEFAULT_S3_REGION,
    forcePathStyle: s.forcePathStyle ?? s.endpoint !== undefined,
    maxAttempts: 3,
    requestHandler: {
      connectionTimeout: CONNECTION_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
      throwOnRequestTimeout: true,
    },
  };
  if (s.endpoint !== undefined) {
    config.endpoint = s.endpoint;
    // S3-compatible stores do not all know the newer flexible checksums; `get` checks the sha256 itself.
    config.requestChecksumCalculation = 'WHEN_REQUIRED';
    config.responseChecksumValidation = 'WHEN_REQUIRED';
  }
  return config;
}
