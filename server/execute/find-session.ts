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
  /**
   * Set when `session` is the version this process held, found with `early` (a shared store's
   * `peek`): resolves true once the store said it was current, false when it was not.
   */
  current?: Promise<boolean>;
  /** With `current`: call once the program is done with `session` (Peeked.release). */
  release?: () => void;
  /** With `current`: ask the store now (Peeked.confirm). */
  confirm?: () => void;
}

/** The session at `key` for `tenant`; `early`: the version this process holds, when the store can peek. */
export async function findSession(
  repo: SessionRepository,
  key: SessionKey,
  tenant: string,
  registry: Registry,
  early = false,
): Promise<Found> {
  const peeked = early ? repo.peek?.(key) : undefined;
  const s = peeked ? peeked.state : await repo.get(key);
  if (!s) throw unknownSession(key);
  if (s.tenant !== tenant) {
    peeked?.release();
    throw new SvcFailure([
      svcError('forbidden', 'this execute session belongs to another tenant', { hint: 'open a session of your own' }),
    ]);
  }
  const stale = staleness(s, registry);
  const found: Found = stale ? { session: s, stale } : { session: s };
  if (peeked) {
    found.current = peeked.current;
    found.release = () => peeked.release();
    found.confirm = () => peeked.confirm();
  }
  return found;
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
