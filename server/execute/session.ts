/**
 * Execute sessions: addressed by (prompt_hash, session), keyed by tenant, holding the pinned
 * catalogs, the symbol table, the cumulative teaching text, plan tokens (pcN), page handles
 * (pgN) and the runs made. Idle sessions expire; the store is bounded per tenant and in all.
 */
import { randomBytes } from 'node:crypto';
import { canonicalHash } from '../../common/canonical.js';
import { svcError, SvcFailure, type SvcError } from '../../common/errors.js';
import { SymbolTable } from '../../compiler/symbols.js';
import type { Review } from '../../compiler/plan.js';
import type { Registry } from '../../pack/registry.js';
import type { PageState } from '../../runtime/fetch-rows.js';
import type { Operation } from './operations.js';

/** A dry-run's acceptance token: what the review gate needs, never the plan or the program. */
export interface PlanToken {
  commit_id: string;
  verdict: Review['verdict'];
  /** Remote-mutation steps of the plan (a token of a plan with writes is single use). */
  mutations: number;
  minted_at: number;
  /** Set when a live run consumed it (tokens of plans with writes are single use). */
  consumed_at?: number;
}

export interface RunRecord {
  run_id: string;
  commit_id: string;
  status: string;
  at: string;
  rows: number;
}

/** Where a result continues; `next` is the handle minted when it was first continued. */
export type PageEntry = PageState & { entity: string; used?: boolean; next?: string };

export interface ExecuteSession {
  prompt_hash: string;
  session: string;
  /** Tenant scope ('' when inbound auth is off or the caller is anonymous). */
  tenant: string;
  intent: string;
  created_at: number;
  last_used: number;
  /** entry_id -> cgs_hash pinned when the entry joined the session. */
  pins: Map<string, string>;
  symbols: SymbolTable;
  /** Rules + every wave, as taught so far. */
  teaching: string;
  tokens: Map<string, PlanToken>;
  nextToken: number;
  /**
   * pgN -> where the result continues. A handle can be sent again (a response lost in transit):
   * it fetches the same page and answers the same next handle.
   */
  pages: Map<string, PageEntry>;
  nextPage: number;
  runs: RunRecord[];
  /** Background operations oN (running and recently ended). */
  ops: Map<string, Operation>;
  nextOp: number;
}

export interface SessionLimits {
  /** A session unused this long is dropped. */
  idleMs: number;
  /** Most sessions held in all (`SVC_MAX_SESSIONS`); the least recently used idle one goes first. */
  maxSessions: number;
  /** Most sessions one tenant holds (`SVC_MAX_SESSIONS_PER_TENANT`); its least recently used idle one goes first. */
  maxSessionsPerTenant: number;
  /** Page handles kept per session (oldest dropped first). */
  maxPages: number;
  /** Plan tokens kept per session (oldest dropped first). */
  maxTokens: number;
  /** Runs listed per session. */
  maxRuns: number;
}

export const SESSION_LIMITS: SessionLimits = {
  idleMs: 60 * 60 * 1000,
  maxSessions: 10_000,
  maxSessionsPerTenant: 1_000,
  maxPages: 256,
  maxTokens: 256,
  maxRuns: 100,
};

/** `prompt_hash` of a session: 16 hex of the sha256 of the entry and the intent. */
export function promptHash(entryId: string, intent: string): string {
  return canonicalHash({ entry_id: entryId, intent }).slice(0, 16);
}

/** A session found at an address; `stale` is set when a pinned catalog changed since (a reload). */
export interface Found {
  session: ExecuteSession;
  stale?: SvcError;
}

export class SessionStore {
  /** Every session, least recently used first. */
  private readonly sessions = new Map<string, ExecuteSession>();
  /** The same sessions by tenant, least recently used first: the per-tenant cap evicts within a tenant. */
  private readonly byTenant = new Map<string, Map<string, ExecuteSession>>();
  private readonly limits: SessionLimits;

  constructor(private readonly now: () => number = Date.now, limits: Partial<SessionLimits> = {}) {
    this.limits = { ...SESSION_LIMITS, ...limits };
  }

  /**
   * A new session. A tenant at its cap loses its least recently used session that runs no
   * operation; so does the store at its global cap (a last resort). When every candidate still
   * runs an operation the session is refused with `too_many_sessions`.
   */
  create(entryId: string, intent: string, tenant: string, registry: Registry): ExecuteSession {
    this.sweep();
    const mine = this.byTenant.get(tenant);
    if (mine && mine.size >= this.limits.maxSessionsPerTenant) this.evictOne(mine, `this tenant holds ${mine.size} sessions (the cap is ${this.limits.maxSessionsPerTenant})`);
    if (this.sessions.size >= this.limits.maxSessions) this.evictOne(this.sessions, `the server holds ${this.sessions.size} sessions (the cap is ${this.limits.maxSessions})`);
    const entry = registry.get(entryId)!;
    const s: ExecuteSession = {
      prompt_hash: promptHash(entryId, intent), session: randomBytes(8).toString('hex'), tenant, intent,
      created_at: this.now(), last_used: this.now(), pins: new Map([[entryId, entry.cgs_hash]]), symbols: new SymbolTable(),
      teaching: '', tokens: new Map(), nextToken: 0, pages: new Map(), nextPage: 1, runs: [], ops: new Map(), nextOp: 1,
    };
    const k = key(s.prompt_hash, s.session);
    this.sessions.set(k, s);
    let t = this.byTenant.get(tenant);
    if (!t) this.byTenant.set(tenant, (t = new Map()));
    t.set(k, s);
    return s;
  }

  /** Drop the least recently used session of `from` that runs no operation, or refuse. */
  private evictOne(from: Map<string, ExecuteSession>, why: string): void {
    for (const [k, s] of from) {
      if (runsOperations(s)) continue;
      this.drop(k, s);
      return;
    }
    throw new SvcFailure([svcError('too_many_sessions', `no new session: ${why}, and each of them runs a background operation`, { hint: 'reuse an open session, or wait for (or cancel) background operations first' })]);
  }

  private drop(k: string, s: ExecuteSession): void {
    this.sessions.delete(k);
    const t = this.byTenant.get(s.tenant);
    t?.delete(k);
    if (t?.size === 0) this.byTenant.delete(s.tenant);
  }

  /**
   * The session at this address for this tenant. Unknown -> `unknown_session`; another tenant's ->
   * `forbidden`; a pinned catalog changed since -> `session_stale`.
   */
  get(promptHash: string, session: string, tenant: string, registry: Registry): ExecuteSession {
    const found = this.lookup(promptHash, session, tenant, registry);
    if (found.stale) throw new SvcFailure([found.stale]);
    return found.session;
  }

  /**
   * Like `get`, but a session whose catalog changed is still found (with `stale` set): what it
   * already ran (operations, runs, artifacts) stays readable; only new programs are refused.
   */
  lookup(promptHash: string, session: string, tenant: string, registry: Registry): Found {
    const k = key(promptHash, session);
    const s = this.sessions.get(k);
    if (!s || (this.now() - s.last_used > this.limits.idleMs && !runsOperations(s))) {
      if (s) this.drop(k, s);
      throw new SvcFailure([svcError('unknown_session', `no execute session ${short(promptHash)}/${short(session)}`, { hint: 'open one with POST /execute {"entry_id": "...", "seeds": ["api:Entity"]}' })]);
    }
    if (s.tenant !== tenant) throw new SvcFailure([svcError('forbidden', 'this execute session belongs to another tenant', { hint: 'open your own session with POST /execute' })]);
    s.last_used = this.now();
    // Re-insert: the Map's order is the eviction order (least recently used first).
    this.sessions.delete(k);
    this.sessions.set(k, s);
    const t = this.byTenant.get(s.tenant)!;
    t.delete(k);
    t.set(k, s);
    return { session: s, ...(staleness(s, registry) ?? {}) };
  }

  get size(): number {
    return this.sessions.size;
  }

  /** Drop idle sessions (a session with a running operation is not idle). */
  sweep(): void {
    const now = this.now();
    for (const [k, s] of this.sessions) {
      // Least recently used first: the first session still in use ends the sweep.
      if (now - s.last_used <= this.limits.idleMs) break;
      if (!runsOperations(s)) this.drop(k, s);
    }
  }

  /** Mint the next `pcN` of a session. */
  mintToken(s: ExecuteSession, t: Omit<PlanToken, 'minted_at'>): string {
    const name = `pc${s.nextToken++}`;
    s.tokens.set(name, { ...t, minted_at: this.now() });
    trim(s.tokens, this.limits.maxTokens);
    return name;
  }

  /** Mint the next `pgN` of a session for a page state. */
  mintPage(s: ExecuteSession, state: PageState, entity: string): string {
    const name = `pg${s.nextPage++}`;
    // A continued state carries the server fields of the handle it came from (`used`, `entity`,
    // `next`): a fresh handle has none of them.
    const { used: _used, entity: _entity, next: _next, ...page } = state as Partial<PageEntry> & PageState;
    s.pages.set(name, { ...page, entity });
    trim(s.pages, this.limits.maxPages);
    return name;
  }

  recordRun(s: ExecuteSession, r: RunRecord): void {
    s.runs.push(r);
    if (s.runs.length > this.limits.maxRuns) s.runs.splice(0, s.runs.length - this.limits.maxRuns);
  }
}

function runsOperations(s: ExecuteSession): boolean {
  for (const o of s.ops.values()) if (o.state === 'running') return true;
  return false;
}

/** `session_stale` when a catalog the session pinned changed or went away. */
function staleness(s: ExecuteSession, registry: Registry): { stale: SvcError } | undefined {
  for (const [entryId, hash] of s.pins) {
    const e = registry.get(entryId);
    if (!e || e.cgs_hash !== hash) {
      return { stale: svcError('session_stale', `catalog \`${entryId}\` changed since this session pinned it (${hash.slice(0, 12)} -> ${e ? e.cgs_hash.slice(0, 12) : 'removed'})`, { hint: 'open a new session with POST /execute and learn its symbols again; old symbols may mean something else' }) };
    }
  }
  return undefined;
}

/** An address segment as quoted in a message: at most 40 characters. */
function short(segment: string): string {
  return segment.length > 40 ? `${segment.slice(0, 40)}…` : segment;
}

function key(ph: string, sid: string): string {
  return `${ph}/${sid}`;
}

function trim<K, V>(m: Map<K, V>, max: number): void {
  while (m.size > max) m.delete(m.keys().next().value as K);
}
