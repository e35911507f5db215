/**
 * The session repository: every read and change of execute-session state goes through this async
 * interface, so state can live in this process (MemorySessionRepository, the default) or in a
 * shared store (Redis) without touching a caller. Both hand out read-only snapshots
 * (session-draft.ts). Changes are atomic per session: `update` runs a function on a draft of the
 * stored snapshot and stores the result as one step (a compare-and-set on the stored version in a
 * shared store, where the function may run again on a conflict, so it must change nothing but the
 * draft it is given), and resolves only once that step has landed. One-shot tokens are consumed
 * atomically; counters never hand out the same number twice.
 */
import { svcError, SvcFailure, type SvcError } from '../../common/errors.js';
import type { Counter, PlanToken, SessionKey, SessionState } from './state.js';

/** Plan commit TTL: a pcN can be used for 10 minutes (SPEC). */
export const PLAN_TOKEN_TTL_MS = 10 * 60 * 1000;

export interface NewSessionInit {
  entry_id: string;
  cgs_hash: string;
  intent: string;
  tenant: string;
}

export interface SessionRepository {
  /**
   * A new session with a fresh random address. A tenant at its cap loses its least recently used
   * session that runs no operation, and so does the repository at its global cap; when every
   * candidate runs an operation: `too_many_sessions`.
   */
  create(init: NewSessionInit): Promise<SessionState>;
  /**
   * The session at `key` (its idle time restarts), or undefined when there is none or it idled
   * out. The state is a read-only snapshot: later changes make new ones, this one never changes.
   */
  get(key: SessionKey): Promise<SessionState | undefined>;
  /**
   * Apply `change` to a draft of the session as one atomic step and return what it returns, once
   * the new version is stored; fails with `unknown_session` when the session is gone. `change`
   * must be synchronous and change nothing but the draft it is given (a shared store may run it
   * again on a draft of a newer version). When it throws, nothing is stored: the session stays as
   * it was, and snapshots handed out before never change.
   */
  update<T>(key: SessionKey, change: (s: SessionState) => T): Promise<T>;
  /** The next number of a kind of handle (pc from 0, pg and o from 1), never handed out twice. */
  next(key: SessionKey, counter: Counter): Promise<number>;
  /**
   * Check `ref` for a live run of `commit_id` and, when its plan has writes, consume it, as one
   * atomic step: of two concurrent spends of one write token exactly one succeeds. Fails with
   * `plan_token_unknown`, `plan_token_expired`, `plan_token_mismatch` or `plan_token_consumed`.
   */
  spendToken(key: SessionKey, ref: string, commit_id: string, now: number): Promise<PlanToken>;
  /**
   * Bind a logical session ref (`l_<token>`, MCP) to the session at `key`: it is listed in the
   * session's `logical` and found by `findLogical` until the session is dropped.
   */
  bindLogical(key: SessionKey, ref: string): Promise<void>;
  /** The session a logical ref is bound to (undefined when none is, or its session is gone). */
  findLogical(ref: string): Promise<SessionKey | undefined>;
  /** Sessions held. */
  size(): Promise<number>;
  /** Resolves once every write in flight has landed or failed. */
  settled?(): Promise<void>;
  /**
   * A shared store's: since when (ms, the repository's clock) this process has reached it without a
   * break. After an outage no owner could renew its leases; they are judged from a lease after this.
   */
  reachableSince?(): number;
  /** Drop idle sessions now (a session with a running operation is not idle). */
  sweep(): Promise<void>;
}

/** Caps and timing of a repository. */
export interface RepositoryLimits {
  /** A session unused this long is dropped (one with a running operation is kept). */
  idleMs: number;
  /** Most sessions held in all (`SVC_MAX_SESSIONS`). */
  maxSessions: number;
  /** Most sessions one tenant holds (`SVC_MAX_SESSIONS_PER_TENANT`). */
  maxSessionsPerTenant: number;
}

export const REPOSITORY_LIMITS: RepositoryLimits = {
  idleMs: 60 * 60 * 1000,
  maxSessions: 10_000,
  maxSessionsPerTenant: 1_000,
};

/** What is wrong with spending `token` (named `ref`) on `commit_id` at `now`; undefined when it may be spent. */
export function tokenProblem(
  ref: string,
  token: PlanToken | undefined,
  commit_id: string,
  now: number,
): SvcError | undefined {
  if (!token)
    return svcError('plan_token_unknown', `\`${ref}\` is not a plan token of this session`, {
      hint: 'dry-run the program to get a pcN',
    });
  if (now - token.minted_at > PLAN_TOKEN_TTL_MS)
    return svcError('plan_token_expired', `\`${ref}\` expired (plan tokens live 10 minutes)`, {
      hint: 'dry-run the program again',
    });
  if (token.commit_id !== commit_id)
    return svcError(
      'plan_token_mismatch',
      `\`${ref}\` was minted for another plan (${token.commit_id.slice(0, 12)}, this program is ${commit_id.slice(0, 12)})`,
      { hint: 'send the program exactly as it was dry-run, or dry-run this one' },
    );
  if (token.consumed_at !== undefined)
    return svcError('plan_token_consumed', `\`${ref}\` was already used for a live run`, {
      hint: 'a token of a plan with writes runs once; dry-run again to run it again',
    });
  return undefined;
}

/** The `unknown_session` failure of an address. */
export function unknownSession(key: SessionKey): SvcFailure {
  const short = (s: string) => (s.length > 40 ? `${s.slice(0, 40)}…` : s);
  return new SvcFailure([
    svcError('unknown_session', `no execute session ${short(key.prompt_hash)}/${short(key.session)}`, {
      hint: 'open a new session (an entry_id and its seeds); sessions idle for an hour are dropped',
    }),
  ]);
}

/** The `too_many_sessions` failure. */
export function tooManySessions(why: string): SvcFailure {
  return new SvcFailure([
    svcError('too_many_sessions', `no new session: ${why}, and each of them runs a background operation`, {
      hint: 'reuse an open session, or wait for (or cancel) background operations first',
    }),
  ]);
}
