/**
 * Loading packed catalogs (I/O edge): `--catalog-dir <dir>` reads every manifest and its CGS,
 * `--schema <path>` reads one CGS. Bad artifacts are rejected one by one with a problem naming the
 * file; the highest valid version per entry_id wins; backend overrides apply last.
 */
import { readdir, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { SvcError } from '../common/errors.js';
import { svcError } from '../common/errors.js';
import type { Manifest } from './artifact.js';
import type { CgsCheck } from './compile-source.js';
import { Registry, type RegistryEntry } from './registry.js';
import { parseManifest, verifyCgs } from './verify.js';

export interface LoadOptions {
  /** entry_id -> backend URL, e.g. from `--backend brewery=http://127.0.0.1:3000`. */
  backendOverrides?: Record<string, string>;
  /** Environment for `SVC_BACKEND_URL_<ENTRY_ID>` overrides (default: process.env). */
  env?: Record<string, string | undefined>;
  /** Extra checks per CGS (the compiler's teachability check). */
  extraChecks?: CgsCheck[];
}

export interface LoadResult {
  registry: Registry;
  /** Rejected artifacts and ignored overrides; the registry holds everything else. */
  problems: SvcError[];
}

/** Load every catalog of a directory. */
export async function loadCatalogDir(dir: string, opts: LoadOptions = {}): Promise<LoadResult> {
  const problems: SvcError[] = [];
  let names: string[];
  try {
    names = (await readdir(dir)).sort();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? 'error';
    return { registry: new Registry([]), problems: [svcError('artifact_unreadable', `cannot read catalog directory (${code})`, { file: dir, hint: 'pass a directory written by `svc pack --out <dir>`' })] };
  }
  const candidates: RegistryEntry[] = [];
  for (const name of names.filter((n) => n.endsWith('.manifest.json'))) {
    const file = join(dir, name);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (e) {
      problems.push(svcError('artifact_unreadable', `cannot read the manifest (${(e as NodeJS.ErrnoException).code ?? 'error'})`, { file, hint: 'remove or repack it; the other catalogs still load' }));
      continue;
    }
    const { manifest, problem } = parseManifest(text, file);
    if (!manifest) { problems.push(problem!); continue; }
    const entry = await loadArtifact(dir, manifest, opts, problems);
    if (entry) candidates.push(entry);
  }
  const registry = new Registry(pickHighest(candidates, problems));
  if (registry.size === 0 && problems.length === 0) {
    problems.push(svcError('catalog_dir_empty', 'no catalog manifest in the directory', { file: dir, hint: 'pack catalogs into it: `svc pack <source-dir> --out ' + dir + '`' }));
  }
  return { registry: applyOverrides(registry, opts, problems), problems };
}

/** Load one CGS file given with `--schema`. */
export async function loadSchemaFile(path: string, opts: LoadOptions = {}): Promise<LoadResult> {
  const problems: SvcError[] = [];
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    problems.push(svcError('artifact_missing', `cannot read the CGS file (${(e as NodeJS.ErrnoException).code ?? 'error'})`, { file: path, hint: 'pass a `*.cgs.json` file written by `svc pack`' }));
    return { registry: new Registry([]), problems };
  }
  const v = verifyCgs(text, path, undefined, opts.extraChecks);
  if (!v.ok) return { registry: new Registry([]), problems: v.problems };
  const entry = toEntry(v.cgs, v.cgs_hash, basename(path));
  return { registry: applyOverrides(new Registry([entry]), opts, problems), problems };
}

async function loadArtifact(dir: string, m: Manifest, opts: LoadOptions, problems: SvcError[]): Promise<RegistryEntry | undefined> {
  const file = join(dir, m.artifact);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    problems.push(svcError('artifact_missing', `manifest of ${m.entry_id} v${m.version} names \`${m.artifact}\`, which is not there`, { file, hint: 'copy the CGS file next to its manifest, or repack' }));
    return undefined;
  }
  const v = verifyCgs(text, file, m, opts.extraChecks);
  if (!v.ok) { problems.push(...v.problems); return undefined; }
  return toEntry(v.cgs, v.cgs_hash, m.artifact);
}

function toEntry(cgs: RegistryEntry['cgs'], hash: string, artifact: string): RegistryEntry {
  return { entry_id: cgs.entry_id, label: cgs.label, tags: cgs.tags, version: cgs.version, cgs, cgs_hash: hash, base_url: cgs.backend.base_url, artifact };
}

/** Highest version per entry_id; two different artifacts with that same version reject the entry. */
function pickHighest(candidates: RegistryEntry[], problems: SvcError[]): RegistryEntry[] {
  const best = new Map<string, RegistryEntry>();
  const conflicted = new Map<string, string>();
  for (const c of candidates) {
    const cur = best.get(c.entry_id);
    if (!cur || c.version > cur.version) { best.set(c.entry_id, c); conflicted.delete(c.entry_id); }
    else if (c.version === cur.version && c.cgs_hash !== cur.cgs_hash) conflicted.set(c.entry_id, c.artifact);
  }
  for (const [id, other] of conflicted) {
    const v = best.get(id)!;
    problems.push(svcError('version_conflict', `two different artifacts claim ${id} v${v.version} (${v.artifact} and ${other}); neither is loaded`, { file: v.artifact, hint: 'remove the stale artifact, or raise the version of the newer catalog' }));
    best.delete(id);
  }
  return [...best.values()];
}

/** `SVC_BACKEND_URL_<ENTRY_ID>` (upper case, `-` as `_`) and explicit overrides (which win). */
export function envOverrideName(entryId: string): string {
  return `SVC_BACKEND_URL_${entryId.toUpperCase().replace(/-/g, '_')}`;
}

function applyOverrides(registry: Registry, opts: LoadOptions, problems: SvcError[]): Registry {
  const env = opts.env ?? process.env;
  const explicit = opts.backendOverrides ?? {};
  for (const id of Object.keys(explicit)) {
    if (!registry.get(id)) problems.push(svcError('bad_backend_override', `backend override names \`${id}\`, which is not loaded`, { hint: `loaded entries: ${registry.list().map((e) => e.entry_id).join(', ') || 'none'}` }));
  }
  const entries = registry.list().map((e) => {
    const url = explicit[e.entry_id] ?? env[envOverrideName(e.entry_id)];
    if (url === undefined) return e;
    if (!/^https?:\/\/[^\s]+$/.test(url)) {
      problems.push(svcError('bad_backend_override', `backend override for \`${e.entry_id}\` is not an http(s) URL`, { hint: 'write for example --backend ' + e.entry_id + '=http://127.0.0.1:3000' }));
      return e;
    }
    return { ...e, base_url: url.replace(/\/+$/, '') };
  });
  return new Registry(entries);
}
