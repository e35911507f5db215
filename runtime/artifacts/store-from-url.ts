/**
 * Opening the run artifact store named by `SVC_RUN_ARTIFACTS_URL`: `memory:` (or unset), a
 * `file:///abs/dir` directory or an `s3://bucket/prefix` object store. The one module that knows
 * every implementation. The S3 store is imported only when the URL names it, so a server without
 * one never loads the AWS SDK.
 */
import { fileURLToPath } from 'node:url';
import { isAbsolute, parse } from 'node:path';
import { SvcFailure, svcError } from '../../common/errors.js';
import { FileArtifactStore } from './file-store.js';
import { MemoryArtifactStore } from './memory-store.js';
import type { S3Settings } from './s3-settings.js';
import type { ArtifactStore, StoreOptions } from './store.js';

const SUPPORTED = 'memory: (the default when unset), file:///absolute/dir or s3://bucket/prefix';
// Messages never echo the URL: object-store URLs can carry credentials.

/**
 * The store named by `url`: unset or `memory:` → memory store; `file:///abs/dir` → file store
 * (the directory is created); `s3://bucket/prefix` → S3 store, reached with `opts.s3` (the
 * bucket must exist and answer). Other schemes (`gs://`, ...) fail with `unsupported_store`.
 * @example const store = await storeFromUrl(settings.url, settings);
 */
export async function storeFromUrl(
  url: string | undefined,
  opts: StoreOptions & { s3?: S3Settings },
): Promise<ArtifactStore> {
  const u = url?.trim();
  if (!u) return new MemoryArtifactStore(opts);
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(u)?.[1]?.toLowerCase();
  if (scheme === 'memory') {
    if (!/^memory:(\/\/)?$/i.test(u))
      throw failure(
        'bad_arguments',
        'SVC_RUN_ARTIFACTS_URL: a memory store takes no path or host',
        'write memory: (or leave the variable unset)',
      );
    return new MemoryArtifactStore(opts);
  }
  if (scheme === 'file') return FileArtifactStore.open(fileDir(u), opts);
  if (scheme === 's3') {
    const { S3ArtifactStore } = await import('./s3-store.js');
    return S3ArtifactStore.open(u, { ...opts, ...opts.s3 });
  }
  throw failure(
    'unsupported_store',
    scheme
      ? `SVC_RUN_ARTIFACTS_URL uses the scheme \`${scheme}:\`, which this build does not support`
      : 'SVC_RUN_ARTIFACTS_URL is not a URL with a scheme',
    `use ${SUPPORTED}`,
  );
}

/** The absolute directory of a `file:///abs/dir` URL (`setting` names the variable in errors). */
export function fileDir(u: string, setting = 'SVC_RUN_ARTIFACTS_URL'): string {
  let dir: string | undefined;
  try {
    if (u.toLowerCase().startsWith('file://')) dir = fileURLToPath(u);
  } catch {
    /* reported below */
  }
  if (!dir || !isAbsolute(dir) || parse(dir).root === dir) {
    throw failure(
      'bad_arguments',
      `${setting}: the file URL does not name an absolute local directory`,
      'write file:///absolute/dir (three slashes; no host, no relative path, not the filesystem root)',
    );
  }
  return dir;
}

function failure(code: 'bad_arguments' | 'unsupported_store', message: string, hint: string): SvcFailure {
  return new SvcFailure([svcError(code, message, { hint })]);
}
