/**
 * Which files an OpenAPI document may pull in through `$ref`: only files inside the document's
 * own folder or a folder the user allowed (`--allow-ref-dir`), never a URL. Without this, a
 * `$ref: ../../.config/credentials.yaml#/token` copies a secret into the imported catalog (an
 * enum, a description) and from there into every packed CGS. Checked over the document and,
 * recursively, every file it admits, before the resolver reads anything; the file reads are
 * injected (`RefIo`), so this module does no I/O of its own.
 */
import { basename, dirname, join, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { svcError, SvcFailure, type SvcError } from '../../common/errors.js';

/**
 * Where a `$ref` leads: the same file, a file on disk (its path, without the fragment), a URL of
 * another scheme, or nothing svc can read (a file URL with a host, an encoded `/`, a broken URL).
 */
export type RefTarget =
  { kind: 'local' } | { kind: 'file'; path: string } | { kind: 'url'; scheme: string } | { kind: 'unreadable' };

/** A `$ref` string as written and the JSON pointer of the object holding it. */
export interface RefSite {
  ref: string;
  pointer: string;
}

/** The file reads the check needs, injected by the I/O edge (read-openapi.ts). */
export interface RefIo {
  /** The real path (symlinks followed), or undefined when the path does not exist. */
  realpath(path: string): Promise<string | undefined>;
  /** The parsed content of a file (YAML or JSON), or undefined when it cannot be parsed. */
  load(path: string): Promise<unknown>;
}

/** At most this many refused `$ref`s are reported; the walk stops there. */
const MAX_REPORTED = 10;

const escapePointer = (key: string) =>
  key.includes('~') || key.includes('/') ? key.replace(/~/g, '~0').replace(/\//g, '~1') : key;

/**
 * Every `$ref` string in `doc`, with where it is, in document order. Visits a shared object once
 * (YAML aliases: no cycles, no exponential walk) and recurses as deep as the resolver's own crawl
 * does; the pointer is joined only where a `$ref` is found, so the walk costs little beside
 * parsing (a 13 MB document is over a million nodes).
 */
export function refsIn(doc: unknown): RefSite[] {
  const sites: RefSite[] = [];
  const seen = new Set<object>();
  const path: string[] = [];
  const visit = (v: unknown): void => {
    if (v === null || typeof v !== 'object' || seen.has(v)) return;
    seen.add(v);
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const x: unknown = v[i];
        if (x === null || typeof x !== 'object') continue;
        path.push(String(i));
        visit(x);
        path.pop();
      }
      return;
    }
    const o = v as Record<string, unknown>;
    if (typeof o.$ref === 'string')
      sites.push({ ref: o.$ref, pointer: path.length === 0 ? '' : '/' + path.map(escapePointer).join('/') });
    for (const key in o) {
      const x = o[key];
      if (x === null || typeof x !== 'object') continue;
      path.push(key);
      visit(x);
      path.pop();
    }
  };
  visit(doc);
  return sites;
}

/**
 * Where `ref`, written in `fromFile`, leads. Resolved as a URL against the file (as the resolver
 * does), so `%2e%2e/` and `./a/../../` are `..` here too. A scheme other than `file:` (http,
 * https, ftp, or `x:` that the resolver would take for a relative path) is a URL: never read.
 */
export function refTarget(ref: string, fromFile: string): RefTarget {
  if (ref.startsWith('#')) return { kind: 'local' };
  let url: URL;
  try {
    url = new URL(ref, pathToFileURL(fromFile));
  } catch {
    return { kind: 'unreadable' };
  }
  if (url.protocol !== 'file:') return { kind: 'url', scheme: url.protocol.slice(0, -1) };
  url.hash = '';
  try {
    return { kind: 'file', path: fileURLToPath(url) };
  } catch {
    return { kind: 'unreadable' };
  }
}

/** Whether the real path `path` is `root` or under it (both already real and absolute). */
export function within(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

/** The hint of every refusal: what the user can do. */
export const REF_HINT =
  "a $ref may read only files inside the document's folder; pass --allow-ref-dir <dir> (repeatable) to admit another folder; URLs are never fetched";

/** The error for a `$ref` the policy refuses. */
export function refOutside(file: string, site: RefSite, why: string): SvcError {
  return svcError('openapi_ref_outside', `$ref \`${site.ref}\` ${why}`, {
    file,
    path: site.pointer,
    hint: REF_HINT,
  });
}

/** The real path of `path`; for a missing file, its real folder joined with its name. */
async function realTarget(io: RefIo, path: string): Promise<{ real: string; exists: boolean }> {
  const real = await io.realpath(path);
  if (real !== undefined) return { real, exists: true };
  const dir = await io.realpath(dirname(path));
  return { real: dir !== undefined ? join(dir, basename(path)) : path, exists: false };
}

/** Why the policy refuses `target`, or undefined when it admits it (with the real path to read). */
async function judge(
  io: RefIo,
  target: RefTarget,
  admits: (real: string) => boolean,
): Promise<{ why: string } | { path: string; real: string; exists: boolean } | undefined> {
  if (target.kind === 'local') return undefined;
  if (target.kind === 'unreadable') return { why: 'names no file svc can read (a host, an encoded `/`)' };
  if (target.kind === 'url')
    return target.scheme === 'http' || target.scheme === 'https'
      ? { why: 'is a URL: svc never fetches URLs (not even with --allow-ref-dir)' }
      : { why: `has the scheme \`${target.scheme}:\`, which svc does not read` };
  const t = await realTarget(io, target.path);
  if (admits(t.real)) return { path: target.path, ...t };
  const via = t.real !== target.path ? ` (really \`${t.real}\`)` : '';
  return { why: `reads \`${target.path}\`${via}, outside the document's folder and every --allow-ref-dir` };
}

/**
 * What the policy admits: the document itself wherever it really is (the user named it), and any
 * real path inside one of `roots` (real, absolute folders: the document's own and each
 * `--allow-ref-dir`). The one predicate both the walk and the resolver's guard use.
 */
export function admitter(rootReal: string, roots: readonly string[]): (real: string) => boolean {
  return (real) => real === rootReal || roots.some((r) => within(real, r));
}

/**
 * Check every `$ref` of the document `rootDoc` (read from `rootFile`) and, recursively, of every
 * file it admits. Throws a `SvcFailure` of `openapi_ref_outside` errors (the first ten) naming
 * each refused `$ref` as written, the file it is in and its JSON pointer; returns when every
 * `$ref` stays inside. A file the walk cannot parse is not walked: the resolver's own guard
 * (read-openapi.ts) still refuses any read `admits` refuses.
 *
 * @example await checkRefs('/api/openapi.yaml', doc, admitter('/api/openapi.yaml', ['/api']), io)
 * // a `$ref: ../secret.yaml#/token` in doc throws openapi_ref_outside
 */
export async function checkRefs(
  rootFile: string,
  rootDoc: unknown,
  admits: (real: string) => boolean,
  fileIo: RefIo,
): Promise<void> {
  // A split document names the same few files thousands of times: each real path is asked once.
  const reals = new Map<string, Promise<string | undefined>>();
  const io: RefIo = {
    realpath: (p) => {
      let real = reals.get(p);
      if (real === undefined) reals.set(p, (real = fileIo.realpath(p)));
      return real;
    },
    load: (p) => fileIo.load(p),
  };
  const errors: SvcError[] = [];
  const queue: Array<{ file: string; doc: unknown }> = [{ file: rootFile, doc: rootDoc }];
  const walked = new Set<string>([(await io.realpath(rootFile)) ?? rootFile]);
  for (let next = queue.shift(); next && errors.length < MAX_REPORTED; next = queue.shift()) {
    for (const site of refsIn(next.doc)) {
      const verdict = await judge(io, refTarget(site.ref, next.file), admits);
      if (verdict === undefined) continue;
      if ('why' in verdict) {
        errors.push(refOutside(next.file, site, verdict.why));
        if (errors.length >= MAX_REPORTED) break;
        continue;
      }
      if (!verdict.exists || walked.has(verdict.real)) continue;
      walked.add(verdict.real);
      // Its own `$ref`s resolve against the path reached (as the resolver does), not the real one.
      queue.push({ file: verdict.path, doc: await io.load(verdict.real) });
    }
  }
  if (errors.length > 0) throw new SvcFailure(errors);
}
