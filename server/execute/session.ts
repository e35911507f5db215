/**
 * Execute sessions: addressed by (prompt_hash, session), keyed by tenant, holding the pinned
 * catalogs, the symbol table, the cumulative teaching text, plan tokens (pcN), page handles
 * (pgN) and the runs made. Idle sessions expire; the store is bounded.
 */
import { randomBytes } from 'node:crypto';
import { canonicalHash } from '../../common/canonical.js';
import { svcError, SvcFailure } from '../../common/errors.js';
import { SymbolTable } from '../../compiler/symbols.js';
import type { Plan, Review } from '../../compiler/plan.js';
import type { Registry } from '../../pack/registry.js';
import type { PageState } from '../../runtime/fetch-rows.js';
import type { Operation } from './operations.js';

/** A dry-run's acceptance token. */
export interface PlanToken {
  commit_id: string;
  plan: Plan;
  review: Review;
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
  /** pgN -> where the result continues; `used` once continued (a handle continues once). */
  pages: Map<string, PageState & { entity: string; used?: boolean }>;
  nextPage: number;
  runs: RunRecord[];
  /** Background operations oN (running and recently ended). */
  ops: Map<string, Operation>;
  nextOp: number;
  /**
   * Plans compiled in this session, by program text, valid for one registry and domain revision
   * (a wave or a reload empties it). A dry-run and its live run, a poll or a retry compile once.
   */
  compiled?: { registry: Registry; revision: number; plans: Map<string, CompiledPlan> };
}

/** A compiled plan as the session caches it. */
export interface CompiledPlan {
  plan: Plan;
  commit_id: string;
  review: Review;
}

export const SESSION_LIMITS = {
  /** A session unused this long is dropped. */
  idleMs: 60 * 60 * 1000,
  /** Most sessions held; the least recently used goes first. */
  maxSessions: 10_000,
  /** Page handles kept per session (oldest dropped first). */
  maxPages: 256,
  /** Plan tokens kept per session (oldest dropped first). */
  maxTokens: 256,
  /** Runs listed per session. */
  maxRuns: 100,
  /** Compiled plans cached per session (oldest dropped first). */
  maxCompiled: 32,
} as const;

/** `prompt_hash` of a session: 16 hex of the sha256 of the entry and the intent. */
export function promptHash(entryId: string, intent: string): string {
  return canonicalHash({ entry_id: entryId, intent }).slice(0, 16);
}

export class SessionStore {
  private readonly sessions = new Map<string, ExecuteSession>();

  constructor(private readonly now: () => number = Date.now, private readonly limits = SESSION_LIMITS) {}

  create(entryId: string, intent: string, tenant: string, registry: Registry): ExecuteSession {
    this.sweep();
    const entry = registry.get(entryId)!;
    const s: ExecuteSession = {
      prompt_hash: promptHash(entryId, intent), session: randomBytes(8).toString('hex'), tenant, intent,
      created_at: this.now(), last_used: this.now(), pins: new Map([[entryId, entry.cgs_hash]]), symbols: new SymbolTable(),
      teaching: '', tokens: new Map(), nextToken: 0, pages: new Map(), nextPage: 1, runs: [], ops: new Map(), nextOp: 1,
    };
    this.sessions.set(key(s.prompt_hash, s.session), s);
    while (this.sessions.size > this.limits.maxSessions) this.sessions.delete(this.sessions.keys().next().value!);
    return s;
  }

  /**
   * The session at this address for this tenant. Unknown -> `unknown_session`; another tenant's ->
   * `forbidden`; a pinned catalog changed since -> `session_stale`.
   */
  get(promptHash: string, session: string, tenant: string, registry: Registry): ExecuteSession {
    const k = key(promptHash, session);
    const s = this.sessions.get(k);
    if (!s || this.now() - s.last_used > this.limits.idleMs) {
      if (s) this.sessions.delete(k);
      throw new SvcFailure([svcError('unknown_session', `no execute session ${promptHash}/${session}`, { hint: 'open one with POST /execute {"entry_id": "...", "seeds": ["api:Entity"]}' })]);
    }
    if (s.tenant !== tenant) throw new SvcFailure([svcError('forbidden', 'this execute session belongs to another tenant', { hint: 'open your own session with POST /execute' })]);
    for (const [entryId, hash] of s.pins) {
      const e = registry.get(entryId);
      if (!e || e.cgs_hash !== hash) {
        throw new SvcFailure([svcError('session_stale', `catalog \`${entryId}\` changed since this session pinned it (${hash.slice(0, 12)} -> ${e ? e.cgs_hash.slice(0, 12) : 'removed'})`, { hint: 'open a new session with POST /execute and learn its symbols again; old symbols may mean something else' })]);
      }
    }
    s.last_used = this.now();
    // Re-insert: the Map's order is the eviction order (least recently used first).
    this.sessions.delete(k);
    this.sessions.set(k, s);
    return s;
  }

  get size(): number {
    return this.sessions.size;
  }

  /** Drop idle sessions. */
  sweep(): void {
    const now = this.now();
    for (const [k, s] of this.sessions) if (now - s.last_used > this.limits.idleMs) this.sessions.delete(k);
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
    // A continued state carries the server fields of the handle it came from (`used`, `entity`):
    // a fresh handle is never used.
    const { used: _used, entity: _entity, ...page } = state as PageState & { used?: boolean; entity?: string };
    s.pages.set(name, { ...page, entity });
    trim(s.pages, this.limits.maxPages);
    return name;
  }

  /** The plan compiled earlier from `program` in this session, when the registry and revision still hold. */
  cachedPlan(s: ExecuteSession, program: string, registry: Registry): CompiledPlan | undefined {
    const c = s.compiled;
    return c && c.registry === registry && c.revision === s.symbols.domainRevision ? c.plans.get(program) : undefined;
  }

  cachePlan(s: ExecuteSession, program: string, registry: Registry, plan: CompiledPlan): void {
    const revision = s.symbols.domainRevision;
    if (!s.compiled || s.compiled.registry !== registry || s.compiled.revision !== revision) s.compiled = { registry, revision, plans: new Map() };
    s.compiled.plans.set(program, plan);
    trim(s.compiled.plans, this.limits.maxCompiled);
  }

  recordRun(s: ExecuteSession, r: RunRecord): void {
    s.runs.push(r);
    if (s.runs.length > this.limits.maxRuns) s.runs.splice(0, s.runs.length - this.limits.maxRuns);
  }
}

function key(ph: string, sid: string): string {
  return `${ph}/${sid}`;
}

function trim<K, V>(m: Map<K, V>, max: number): void {
  while (m.size > max) m.delete(m.keys().next().value as K);
}
