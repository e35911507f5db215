/**
 * Finding a session for a caller: it must exist (`unknown_session`), belong to the caller's tenant
 * (`forbidden`), and for anything new its pinned catalogs must still be the ones loaded
 * (`session_stale`, reported as `stale` so that what the session already ran stays readable).
 */
import { svcError, SvcFailure, type SvcError } from '../../common/errors.js';
import type { Registry } from '../../pack/registry.js';
import { unknownSession, type SessionRepository } from './repository.js';
import type { SessionKey, SessionState } from './state.js';

/** A session found at an address; `stale` is set when a pinned catalog changed since (a reload). */
export interface Found {
  session: SessionState;
  stale?: SvcError;
}

/** The session at `key` for `tenant`. */
export async function findSession(
  repo: SessionRepository,
  key: SessionKey,
  tenant: string,
  registry: Registry,
): Promise<Found> {
  const s = await repo.get(key);
  if (!s) throw unknownSession(key);
  if (s.tenant !== tenant) {
    throw new SvcFailure([
      svcError('forbidden', 'this execute session belongs to another tenant', { hint: 'open a session of your own' }),
    ]);
  }
  const stale = staleness(s, registry);
  return stale ? { session: s, stale } : { session: s };
}

/** `session_stale` when a catalog the session pinned changed or went away. */
export function staleness(s: SessionState, registry: Registry): SvcError | undefined {
  for (const [entryId, hash] of s.pins) {
    const e = registry.get(entryId);
    if (!e || e.cgs_hash !== hash) {
      return svcError(
        'session_stale',
        `catalog \`${entryId}\` changed since this session pinned it (${hash.slice(0, 12)} -> ${e ? e.cgs_hash.slice(0, 12) : 'removed'})`,
        { hint: 'open a new session and learn its symbols again; old symbols may mean something else' },
      );
    }
  }
  return undefined;
}
