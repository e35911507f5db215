/**
 * The process-local session repository (the default): sessions in a Map kept in least-recently-used
 * order, with a second index by tenant so the per-tenant cap evicts within a tenant. Each session
 * is held as a read-only snapshot (session-draft.ts): a change runs synchronously on a draft, which
 * replaces the snapshot when the change returns, so each change is atomic in this process and one
 * that throws changes nothing.
 */
import { randomBytes } from 'node:crypto';
import { SvcFailure } from '../../common/errors.js';
import {
  REPOSITORY_LIMITS,
  tokenProblem,
  tooManySessions,
  unknownSession,
  type NewSessionInit,
  type RepositoryLimits,
  type SessionRepository,
} from './repository.js';
import { SessionDraft, snapshotOf, usedAt } from './session-draft.js';
import {
  keyText,
  newSession,
  promptHash,
  runsOperations,
  type Counter,
  type PlanToken,
  type SessionKey,
  type SessionState,
} from './state.js';

export class MemorySessionRepository implements SessionRepository {
  /** Every session, least recently used first. */
  private readonly sessions = new Map<string, SessionState>();
  /** The same sessions by tenant, least recently used first. */
  private readonly byTenant = new Map<string, Map<string, SessionState>>();
  /** Logical session refs -> the key text of their session. */
  private readonly logical = new Map<string, string>();
  /** The key text of the session created or used last: already last in both LRU orders. */
  private newest: string | undefined;
  private readonly limits: RepositoryLimits;

  constructor(
    limits: Partial<RepositoryLimits> = {},
    private readonly now: () => number = Date.now,
  ) {
    this.limits = { ...REPOSITORY_LIMITS, ...limits };
  }

  async create(init: NewSessionInit): Promise<SessionState> {
    this.sweepNow();
    const mine = this.byTenant.get(init.tenant);
    if (mine && mine.size >= this.limits.maxSessionsPerTenant)
      this.evictOne(mine, `this tenant holds ${mine.size} sessions (the cap is ${this.limits.maxSessionsPerTenant})`);
    if (this.sessions.size >= this.limits.maxSessions)
      this.evictOne(
        this.sessions,
        `the server holds ${this.sessions.size} sessions (the cap is ${this.limits.maxSessions})`,
      );
    const s = snapshotOf(
      newSession(
        { prompt_hash: promptHash(init.entry_id, init.intent), session: randomBytes(8).toString('hex') },
        { ...init, now: this.now() },
      ),
    );
    const k = keyText(s);
    this.sessions.set(k, s);
    let t = this.byTenant.get(s.tenant);
    if (!t) this.byTenant.set(s.tenant, (t = new Map<string, SessionState>()));
    t.set(k, s);
    this.newest = k;
    return s;
  }

  async get(key: SessionKey): Promise<SessionState | undefined> {
    return this.live(key);
  }

  async update<T>(key: SessionKey, change: (s: SessionState) => T): Promise<T> {
    const s = this.live(key);
    if (!s) throw unknownSession(key);
    const draft = new SessionDraft(s);
    const out = change(draft.state);
    this.replace(keyText(key), draft.seal().snapshot);
    return out;
  }

  async next(key: SessionKey, counter: Counter): Promise<number> {
    return this.update(key, (s) => ++s.counters[counter]);
  }

  async spendToken(key: SessionKey, ref: string, commit_id: string, now: number): Promise<PlanToken> {
    return this.update(key, (s) => {
      const token = s.tokens.get(ref);
      const problem = tokenProblem(ref, token, commit_id, now);
      if (problem) throw new SvcFailure([problem]);
      if (token!.mutations > 0) token!.consumed_at = now;
      return { ...token! };
    });
  }

  async bindLogical(key: SessionKey, ref: string): Promise<void> {
    await this.update(key, (s) => {
      if (!s.logical.includes(ref)) s.logical.push(ref);
    });
    this.logical.set(ref, keyText(key));
  }

  async findLogical(ref: string): Promise<SessionKey | undefined> {
    const k = this.logical.get(ref);
    const s = k === undefined ? undefined : this.sessions.get(k);
    return s ? { prompt_hash: s.prompt_hash, session: s.session } : undefined;
  }

  async size(): Promise<number> {
    return this.sessions.size;
  }

  async sweep(): Promise<void> {
    this.sweepNow();
  }

  /**
   * The session at `key` unless it idled out (dropped then); touched: a snapshot used now replaces
   * it, at the end of both LRU orders.
   */
  private live(key: SessionKey): SessionState | undefined {
    const k = keyText(key);
    const held = this.sessions.get(k);
    if (!held) return undefined;
    const now = this.now();
    if (now - held.last_used > this.limits.idleMs && !runsOperations(held)) {
      this.drop(k, held);
      return undefined;
    }
    const s = usedAt(held, now);
    if (k !== this.newest) {
      // Moved to the end of both LRU orders (a session used again in a row is there already).
      this.newest = k;
      this.sessions.delete(k);
      this.byTenant.get(s.tenant)!.delete(k);
    }
    this.replace(k, s);
    return s;
  }

  /** `s` as the snapshot of session `k` (in place in both LRU orders, or last when new there). */
  private replace(k: string, s: SessionState): void {
    this.sessions.set(k, s);
    this.byTenant.get(s.tenant)!.set(k, s);
  }

  /** Drop the least recently used session of `from` that runs no operation, or refuse. */
  private evictOne(from: Map<string, SessionState>, why: string): void {
    for (const [k, s] of from) {
      if (runsOperations(s)) continue;
      this.drop(k, s);
      return;
    }
    throw tooManySessions(why);
  }

  private drop(k: string, s: SessionState): void {
    if (k === this.newest) this.newest = undefined;
    this.sessions.delete(k);
    for (const ref of s.logical) this.logical.delete(ref);
    const t = this.byTenant.get(s.tenant);
    t?.delete(k);
    if (t?.size === 0) this.byTenant.delete(s.tenant);
  }

  private sweepNow(): void {
    const now = this.now();
    for (const [k, s] of this.sessions) {
      // Least recently used first: the first session still in use ends the sweep.
      if (now - s.last_used <= this.limits.idleMs) break;
      if (!runsOperations(s)) this.drop(k, s);
    }
  }
}
