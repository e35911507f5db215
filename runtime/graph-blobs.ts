/**
 * Where the session graph persists (`SVC_GRAPH_CACHE_URL`): small JSON objects under keys
 * `<session path>/<name>.json` in a directory (`file:///abs/dir`) or an S3 bucket
 * (`s3://bucket/prefix`, reached with the `SVC_S3_*` settings; the SDK loaded only then).
 */
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { SvcFailure, svcError } from '../common/errors.js';
import { readRegularFile } from '../pack/read-regular.js';
import type { S3Settings } from './artifacts/s3-settings.js';
import { fileDir } from './artifacts/store-from-url.js';

export interface Blobs {
  /** Object names under `dir` (one level), sorted. */
  list(dir: string): Promise<string[]>;
  get(key: string): Promise<string | undefined>;
  put(key: string, body: string): Promise<void>;
  delete(keys: readonly string[]): Promise<void>;
  close(): void;
}

const SETTING = 'SVC_GRAPH_CACHE_URL';

/** The blob store of `url` (`file:///abs/dir` or `s3://bucket/prefix`). */
export async function blobsFromUrl(url: string, s3: S3Settings): Promise<Blobs> {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(url)?.[1]?.toLowerCase();
  if (scheme === 'file') {
    const root = fileDir(url, SETTING);
    await mkdir(root, { recursive: true });
    return new FileBlobs(root);
  }
  if (scheme === 's3') {
    const { S3Blobs } = await import('./graph-blobs-s3.js');
    return S3Blobs.open(url, s3);
  }
  throw new SvcFailure([
    svcError('unsupported_store', `${SETTING} is not a file:/// or s3:// URL`, {
      hint: 'write file:///absolute/dir or s3://bucket/prefix, or unset it for an in-memory graph only',
    }),
  ]);
}

class FileBlobs implements Blobs {
  constructor(private readonly root: string) {}

  async list(dir: string): Promise<string[]> {
    const names = await readdir(join(this.root, dir)).catch(() => [] as string[]);
    return names.filter((n) => n.endsWith('.json')).sort();
  }

  /** Undefined when absent, unreadable or not a regular file (a FIFO is never waited on). */
  get(key: string): Promise<string | undefined> {
    return readRegularFile(join(this.root, key), 'utf8').catch(() => undefined);
  }

  async put(key: string, body: string): Promise<void> {
    const path = join(this.root, key);
    await mkdir(dirname(path), { recursive: true });
    const tmp = `${path}.${process.pid}.tmp`;
    await writeFile(tmp, body);
    await rename(tmp, path);
  }

  async delete(keys: readonly string[]): Promise<void> {
    await Promise.all(keys.map((k) => rm(join(this.root, k), { force: true })));
  }

  close(): void {}
}
