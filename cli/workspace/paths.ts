/**
 * Where the terminal keeps its state: `.svc/` under the working directory, or the directory
 * `SVC_WORKSPACE` names. Hosts are keyed by a slug of the server URL, client sessions by a
 * random 8-hex id. See docs/cli.md "The workspace".
 */
import { createHash, randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';

/** The `.svc` directory of this process. */
export function workspaceRoot(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string {
  const base = env.SVC_WORKSPACE ? resolve(env.SVC_WORKSPACE) : cwd;
  return join(base, '.svc');
}

/** First 8 hex digits of the sha256 of the server URL (as written in the profile, trailing `/` dropped). */
export function hostSlug(server: string): string {
  return createHash('sha256').update(normalizeServer(server), 'utf8').digest('hex').slice(0, 8);
}

export function normalizeServer(server: string): string {
  return server.replace(/\/+$/, '');
}

/** A fresh client session id: 8 hex digits. */
export function newSessionId(): string {
  return randomBytes(4).toString('hex');
}

export const SESSION_ID = /^[0-9a-f]{8}$/;

export const paths = {
  profile: (root: string) => join(root, 'profiles', 'default.json'),
  host: (root: string, slug: string) => join(root, 'hosts', slug),
  current: (root: string, slug: string) => join(root, 'hosts', slug, 'current'),
  discovery: (root: string, slug: string) => join(root, 'hosts', slug, 'discovery.tsv'),
  session: (root: string, id: string) => join(root, 's', id),
  legacyCgs: (root: string) => join(root, 'cgs'),
};
