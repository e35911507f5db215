/**
 * The profile `.svc/profiles/default.json`: `{"server": "<url>", "api_key"?: "<key>"}`. Written
 * with mode 0600 when it holds a key. Reading it also removes the legacy `.svc/cgs/` layout.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { usageError } from '../terminal/errors.js';
import { normalizeServer, paths, workspaceRoot } from './paths.js';

export const DEFAULT_SERVER = 'http://127.0.0.1:7311';

export interface Profile {
  server: string;
  api_key?: string;
}

/** Problems of a profile value, one line each (empty when valid). */
export function profileProblems(value: unknown): string[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return ['the profile is not a JSON object'];
  const p = value as Record<string, unknown>;
  const out: string[] = [];
  if (typeof p.server !== 'string') out.push('`server` is missing or not a string');
  else if (!isHttpUrl(p.server)) out.push(`\`server\` is not an http(s) URL: ${p.server}`);
  if (p.api_key !== undefined && (typeof p.api_key !== 'string' || p.api_key.trim() === ''))
    out.push('`api_key` is not a non-empty string');
  for (const k of Object.keys(p)) if (k !== 'server' && k !== 'api_key') out.push(`unknown key \`${k}\``);
  return out;
}

export function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

export function writeProfile(root: string, profile: Profile): string {
  const file = paths.profile(root);
  mkdirSync(dirname(file), { recursive: true });
  const body =
    JSON.stringify(
      { server: normalizeServer(profile.server), ...(profile.api_key ? { api_key: profile.api_key } : {}) },
      null,
      2,
    ) + '\n';
  writeFileSync(file, body, { mode: profile.api_key ? 0o600 : 0o644 });
  // writeFileSync keeps the mode of an existing file: set it explicitly.
  chmodSync(file, profile.api_key ? 0o600 : 0o644);
  return file;
}

/** The raw profile file, or undefined when there is none. Throws a usage error when it is not JSON. */
export function readProfileRaw(root: string): unknown {
  const file = paths.profile(root);
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    throw usageError('bad_profile', `${file} is not valid JSON`, 'run `svc init --server <url>` to write it again');
  }
}

/** The workspace root and its valid profile; usage errors when missing or invalid. */
export function loadProfile(env: NodeJS.ProcessEnv = process.env): { root: string; profile: Profile } {
  const root = workspaceRoot(env);
  removeLegacyLayout(root);
  const raw = readProfileRaw(root);
  if (raw === undefined)
    throw usageError('no_profile', `no profile at ${paths.profile(root)}`, 'run `svc init --server <url>` first');
  const problems = profileProblems(raw);
  if (problems.length)
    throw usageError(
      'bad_profile',
      `${paths.profile(root)}: ${problems.join('; ')}`,
      'run `svc init --server <url>` to write it again',
    );
  return { root, profile: raw as Profile };
}

/** The old `.svc/cgs/` layout has no migration: remove it, with a one-line notice on stderr. */
export function removeLegacyLayout(root: string): void {
  const legacy = paths.legacyCgs(root);
  if (!existsSync(legacy)) return;
  rmSync(legacy, { recursive: true, force: true });
  process.stderr.write(`svc: removed the old workspace layout ${legacy} (no migration; run \`svc context\` again)\n`);
}
