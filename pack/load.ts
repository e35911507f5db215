/**
 * Loading packed catalogs (I/O edge): `--catalog-dir <dir>` reads every manifest and its CGS,
 * `--schema <path>` reads one CGS. Bad artifacts are rejected one by one with a problem naming the
 * file; the highest valid version per entry_id wins; on a reload (`previous`), an entry whose
 * artifacts now have a problem keeps the version in force; backend overrides apply last. Only
 * regular files are read (read-regular.ts): a FIFO or device named like an artifact is a problem
 * of its own, never a read that blocks start-up or a reload.
 */
import { readdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { Type } from '@sinclair/typebox';
import type { SvcError } from '../common/errors.js';
import { svcError } from '../common/errors.js';
import { ManifestSchema, type Manifest } from './artifact.js';
import { conforms } from './ajv.js';
import { errnoCode } from './errno.js';
import { NotRegularFileError, readRegularFile } from './read-regular.js';
import type { CgsCheck } from './compile-source.js';
import { Registry, registryEntry, type RegistryEntry } from './registry.js';
import { displayUrl, hasUserinfo, withoutUserinfo } from './urls.js';
import { parseManifest, verifyCgs } from './verify.js';

export interface LoadOptions {
  /** entry_id -> backend URL, e.g. from `--backend brewery=http://127.0.0.1:3000`. */
  backendOverrides?: Record<string, string>;
  /** Environment for `SVC_BACKEND_URL_<ENTRY_ID>` overrides (default: process.env). */
  env?: Record<string, string | undefined>;
  /** Extra checks per CGS (the compiler's teachability check). */
  extraChecks?: CgsCheck[];
  /**
   * The registry in force, when reloading: an entry of it whose artifacts now have a problem
   * (unreadable, hash mismatch, invalid, version conflict) and no valid version at least as high
   * is kept as it is, and named in `kept`. A directory that yields no catalog at all keeps nothing:
   * the result is empty and the caller keeps its registry as a whole.
   */
  previous?: Registry;
}

export interface LoadResult {
  registry: Registry;
  /** Rejected artifacts, ignored overrides and ignored URL userinfo; the registry holds everything else. */
  problems: SvcError[];
  /** Entries of `previous` kept in force because their artifacts now have problems, sorted. */
  kept: string[];
}

/** Load every catalog of a directory. */
export async function loadCatalogDir(dir: string, opts: LoadOptions = {}): Promise<LoadResult> {
  const problems: SvcError[] = [];
  let names: string[];
  try {
    names = (await readdir(dir)).sort();
  } catch (e) {
    const code = errnoCode(e);
    return {
      registry: new Registry([]),
      problems: [
        svcError('artifact_unreadable', `cannot read catalog directory (${code})`, {
          file: dir,
          hint: 'pass a directory written by `svc pack --out <dir>`',
        }),
      ],
      kept: [],
    };
  }
  const candidates: RegistryEntry[] = [];
  /** entry_ids some problem belongs to. */
  const troubled = new Set<string>();
  for (const name of names.filter((n) => n.endsWith('.manifest.json'))) {
    const file = join(dir, name);
    const owners = ownersOfManifest(name, opts.previous);
    let text: string;
    try {
      text = await readRegularFile(file, 'utf8');
    } catch (e) {
      problems.push(
        svcError('artifact_unreadable', `cannot read the manifest (${readProblem(e)})`, {
          file,
          hint: 'remove or repack it; the other catalogs still load',
        }),
      );
      owners.forEach((id) => troubled.add(id));
      continue;
    }
    const { manifest, problem } = parseManifest(text, file);
    if (!manifest) {
      problems.push(problem!);
      [...owners, ...namedIn(text)].forEach((id) => troubled.add(id));
      continue;
    }
    const entry = await loadArtifact(dir, manifest, opts, problems);
    if (entry) candidates.push(entry);
    else troubled.add(manifest.entry_id);
  }
  const fresh = pickHighest(candidates, problems, troubled);
  if (fresh.length === 0 && problems.length === 0) {
    problems.push(
      svcError('catalog_dir_empty', 'no catalog manifest in the directory', {
        file: dir,
        hint: 'pack catalogs into it: `svc pack <source-dir> --out ' + dir + '`',
      }),
    );
  }
  const { entries, kept } = keepPrevious(fresh, troubled, opts.previous);
  return { registry: applyOverrides(new Registry(entries), opts, problems), problems, kept };
}

const MANIFEST_NAME = /^([a-z][a-z0-9_-]*)\.v\d+\.[0-9a-f]{12}\.manifest\.json$/;

/**
 * The entries a manifest file belongs to before its content is known: the entry_id of a name of
 * the packed form `<entry_id>.v<version>.<hash12>.manifest.json`, and the entry of `previous`
 * loaded from the CGS next to it (same stem), whatever the name.
 */
function ownersOfManifest(name: string, previous?: Registry): string[] {
  const out = new Set<string>();
  const m = MANIFEST_NAME.exec(name);
  if (m) out.add(m[1]!);
  const stem = name.slice(0, -'.manifest.json'.length);
  for (const e of previous?.list() ?? []) if (e.artifact === `${stem}.cgs.json`) out.add(e.entry_id);
  return [...out];
}

const NamesEntry = Type.Pick(ManifestSchema, ['entry_id'], { $id: 'svc:manifest-entry-id' });

/** The entry_id a manifest that failed to decode still names, if its JSON gets that far. */
function namedIn(text: string): string[] {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return [];
  }
  return conforms(NamesEntry, data) ? [data.entry_id] : [];
}

/**
 * Reload: an entry of `previous` with a problem now and no valid version at least as high is kept
 * as it is (sessions pinned to it keep working). Nothing is kept when the directory yields no
 * catalog at all: that reload fails as a whole.
 */
function keepPrevious(
  fresh: RegistryEntry[],
  troubled: Set<string>,
  previous?: Registry,
): { entries: RegistryEntry[]; kept: string[] } {
  if (!previous || fresh.length === 0) return { entries: fresh, kept: [] };
  const byId = new Map(fresh.map((e) => [e.entry_id, e]));
  const kept: string[] = [];
  for (const id of [...troubled].sort()) {
    const before = previous.get(id);
    const now = byId.get(id);
    if (before && (!now || now.version < before.version)) {
      byId.set(id, before);
      kept.push(id);
    }
  }
  return { entries: [...byId.values()], kept };
}

/** Load one CGS file given with `--schema`. */
export async function loadSchemaFile(path: string, opts: LoadOptions = {}): Promise<LoadResult> {
  const problems: SvcError[] = [];
  let text: string;
  try {
    text = await readRegularFile(path, 'utf8');
  } catch (e) {
    problems.push(
      svcError('artifact_missing', `cannot read the CGS file (${readProblem(e)})`, {
        file: path,
        hint: 'pass a `*.cgs.json` file written by `svc pack`',
      }),
    );
    return { registry: new Registry([]), problems, kept: [] };
  }
  const v = verifyCgs(text, path, undefined, opts.extraChecks);
  if (!v.ok) return { registry: new Registry([]), problems: v.problems, kept: [] };
  const entry = registryEntry(v.cgs, v.cgs_hash, basename(path));
  return { registry: applyOverrides(new Registry([entry]), opts, problems), problems, kept: [] };
}

async function loadArtifact(
  dir: string,
  m: Manifest,
  opts: LoadOptions,
  problems: SvcError[],
): Promise<RegistryEntry | undefined> {
  const file = join(dir, m.artifact);
  let text: string;
  try {
    text = await readRegularFile(file, 'utf8');
  } catch (e) {
    if (e instanceof NotRegularFileError) {
      problems.push(
        svcError(
          'artifact_unreadable',
          `manifest of ${m.entry_id} v${m.version} names \`${m.artifact}\`, which is ${e.kind}`,
          {
            file,
            hint: 'put the CGS file written by `svc pack` there, or repack',
          },
        ),
      );
      return undefined;
    }
    problems.push(
      svcError(
        'artifact_missing',
        `manifest of ${m.entry_id} v${m.version} names \`${m.artifact}\`, which is not there`,
        { file, hint: 'copy the CGS file next to its manifest, or repack' },
      ),
    );
    return undefined;
  }
  const v = verifyCgs(text, file, m, opts.extraChecks);
  if (!v.ok) {
    problems.push(...v.problems);
    return undefined;
  }
  return registryEntry(v.cgs, v.cgs_hash, m.artifact);
}

/** Why a file could not be read: its errno code, or what it is when it is not a regular file. */
function readProblem(e: unknown): string {
  return e instanceof NotRegularFileError ? `not a regular file: ${e.kind}` : errnoCode(e);
}

/** Highest version per entry_id; two different artifacts with that same version reject the entry. */
function pickHighest(candidates: RegistryEntry[], problems: SvcError[], troubled: Set<string>): RegistryEntry[] {
  const best = new Map<string, RegistryEntry>();
  const conflicted = new Map<string, string>();
  for (const c of candidates) {
    const cur = best.get(c.entry_id);
    if (!cur || c.version > cur.version) {
      best.set(c.entry_id, c);
      conflicted.delete(c.entry_id);
    } else if (c.version === cur.version && c.cgs_hash !== cur.cgs_hash) conflicted.set(c.entry_id, c.artifact);
  }
  for (const [id, other] of conflicted) {
    const v = best.get(id)!;
    problems.push(
      svcError(
        'version_conflict',
        `two different artifacts claim ${id} v${v.version} (${v.artifact} and ${other}); neither is loaded`,
        { file: v.artifact, hint: 'remove the stale artifact, or raise the version of the newer catalog' },
      ),
    );
    best.delete(id);
    troubled.add(id);
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
    if (!registry.get(id))
      problems.push(
        svcError('bad_backend_override', `backend override names \`${displayUrl(id)}\`, which is not loaded`, {
          hint: `loaded entries: ${
            registry
              .list()
              .map((e) => e.entry_id)
              .join(', ') || 'none'
          }`,
        }),
      );
  }
  const entries = registry.list().map((e) => {
    const override = explicit[e.entry_id] ?? env[envOverrideName(e.entry_id)];
    let url = e.cgs.backend.base_url;
    if (override !== undefined && !/^https?:\/\/[^\s]+$/.test(override)) {
      problems.push(
        svcError('bad_backend_override', `backend override for \`${e.entry_id}\` is not an http(s) URL`, {
          hint: 'write for example --backend ' + e.entry_id + '=http://127.0.0.1:3000',
        }),
      );
    } else if (override !== undefined) {
      url = override.replace(/\/+$/, '');
    }
    // undici pools by origin and never sends userinfo: say so once, and keep it out of every display.
    if (hasUserinfo(url)) {
      problems.push(
        svcError(
          'backend_userinfo_ignored',
          `backend of ${e.entry_id} carries user:password in its URL; svc does not send it — declare the catalog's auth instead`,
        ),
      );
      url = withoutUserinfo(url);
    }
    return url === e.base_url ? e : { ...e, base_url: url };
  });
  return new Registry(entries);
}
