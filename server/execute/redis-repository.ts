/**
 * The session repository in Redis, shared by every replica of a deployment; it behaves like
 * MemorySessionRepository (the shared case suite runs against both). Key layout and scripts:
 * redis-scripts.ts. One ioredis connection carries every command (no WATCH: it is per connection,
 * and concurrent flows on one connection would clobber each other's).
 *
 * - `get` is one round trip: a script reads the state and its version and touches the session
 *   (last used, both LRU scores, TTLs). Last used is a hash field, so a touch never rewrites the
 *   state JSON (which holds 0 there).
 * - `update` is optimistic: read and touch, run the change on a freshly decoded state, then a
 *   compare-and-set on the version (two round trips; one when the change changed nothing). When
 *   another process wrote first, it reads again and runs the change again on the fresh state (at
 *   most 50 attempts with a small jittered backoff). Updates of one session from this process are
 *   queued, so they never conflict with each other. Counters and token spends go through it,
 *   which makes them atomic across processes.
 * - Idle expiry follows the injected clock, as in memory. Redis's own expiry (idleMs + 5 minutes,
 *   refreshed on each touch) only collects what nobody touches any more. A session with a running
 *   operation is kept past idleMs by the clock; its owner writes progress and renews the
 *   operation's lease through `update` every few seconds, which touches it and so refreshes the
 *   TTL: only a session whose owner stopped (and nobody read since) expires in Redis.
 * - Caps: `create` runs one script that sweeps, then evicts least recently used sessions that run
 *   no operation (per tenant, then in all) or refuses with `too_many_sessions`. Each session's
 *   hash has a run flag, so eviction never decodes a state. The script is atomic, so replicas
 *   creating sessions at once never exceed a cap; what is approximate across replicas is which
 *   session goes: LRU scores come from each replica's clock, ties within one millisecond are broken
 *   by key text, and a session whose operation is being started elsewhere (not yet written) may
 *   be evicted, that start then failing with `unknown_session`.
 * - Unlike memory: a change that throws writes nothing; dropping a session deletes only those of
 *   its logical refs still bound to it; `size` counts index entries of sessions Redis expired
 *   until the next sweep meets them.
 * - While Redis cannot be reached every call fails fast with `store_unavailable` (redis-client.ts).
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { SvcFailure } from '../../common/errors.js';
import { SILENT, type Logger } from '../../common/log.js';
import type { SharedKv } from '../kv.js';
import { KeyQueue } from './key-queue.js';
import { connectRedis, storeFailure } from './redis-client.js';
import { SCRIPTS, type ScriptCommands } from './redis-scripts.js';
import {
  REPOSITORY_LIMITS,
  tokenProblem,
  tooManySessions,
  unknownSession,
  type NewSessionInit,
  type RepositoryLimits,
  type SessionRepository,
} from './repository.js';
import { decodeSession, encodeSession } from './session-codec.js';
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

export interface RedisRepositoryOptions {
  limits?: Partial<RepositoryLimits>;
  /** The clock of idle time and LRU order (default `Date.now`). */
  now?: () => number;
  /** Prefix of every key (default `svc:`). */
  keyPrefix?: string;
  logger?: Logger;
}

/** How much longer than the idle limit Redis keeps an untouched session (a backstop, see above). */
export const TTL_MARGIN_MS = 5 * 60 * 1000;
/** Compare-and-set attempts of one update before it gives up. */
export const MAX_ATTEMPTS = 50;

type Client = Redis & ScriptCommands;

/** A session as read: its version and stored text (to compare-and-set against) and a fresh state. */
interface Read {
  version: string;
  text: string;
  state: SessionState;
}

/** Wait a little before attempt `n` (1, 2, ...): up to 0.5, 1, 2, ... 10 ms, at random. */
const backoff = (n: number) => new Promise((r) => setTimeout(r, Math.random() * Math.min(2 ** (n - 2), 10)));

/** A version read or written this long ago may be the base of the next compare-and-set (ms). */
const RECENT_MS = 1_000;
/** Sessions whose last version is kept for that. */
const RECENT_MAX = 1_024;

export class RedisSessionRepository implements SessionRepository {
  private readonly queue = new KeyQueue();
  /** The last version of a session this process read or wrote, and when it last read it (real time, clock). */
  private readonly recent = new Map<string, { version: string; text: string; at: number; touched: number }>();
  private readonly clock = performance.now.bind(performance);
  private readonly limits: RepositoryLimits;
  private readonly ttlMs: number;

  private constructor(
    private readonly redis: Client,
    private readonly now: () => number,
    private readonly prefix: string,
    limits: Partial<RepositoryLimits>,
  ) {
    this.limits = { ...REPOSITORY_LIMITS, ...limits };
    this.ttlMs = this.limits.idleMs + TTL_MARGIN_MS;
  }

  /**
   * A repository on the Redis at `url` (`redis://host:port/db`, `rediss://` for TLS). Fails with
   * `store_unavailable` naming SVC_MCP_TRANSPORT_KV_URL when Redis cannot be reached.
   *
   * @example
   * const repo = await RedisSessionRepository.connect('redis://127.0.0.1:6379/0', { logger });
   */
  static async connect(url: string, opts: RedisRepositoryOptions = {}): Promise<RedisSessionRepository> {
    const redis = await connectRedis(url, opts.logger ?? SILENT);
    for (const [name, s] of Object.entries(SCRIPTS)) redis.defineCommand(name, s);
    return new RedisSessionRepository(
      redis as Client,
      opts.now ?? Date.now,
      opts.keyPrefix ?? 'svc:',
      opts.limits ?? {},
    );
  }

  /** Close the connection (it does not reconnect afterwards). */
  async close(): Promise<void> {
    try {
      await this.redis.quit();
    } catch {
      // Not connected: nothing to say goodbye to.
    } finally {
      this.redis.disconnect();
    }
  }

  async create(init: NewSessionInit): Promise<SessionState> {
    for (let i = 0; i < 3; i++) {
      const now = this.now();
      const key = { prompt_hash: promptHash(init.entry_id, init.intent), session: randomBytes(8).toString('hex') };
      const s = newSession(key, { ...init, now });
      const { maxSessions, maxSessionsPerTenant } = this.limits;
      const [kind, held] = await this.call(() =>
        this.redis.svcCreate(
          ...this.base(now),
          keyText(s),
          s.tenant,
          this.stored(s),
          maxSessions,
          maxSessionsPerTenant,
        ),
      );
      if (kind === 'ok') return s;
      if (kind === 'tenant')
        throw tooManySessions(`this tenant holds ${held} sessions (the cap is ${maxSessionsPerTenant})`);
      if (kind === 'all') throw tooManySessions(`the server holds ${held} sessions (the cap is ${maxSessions})`);
    }
    throw new Error('three random session ids in a row were taken');
  }

  async get(key: SessionKey): Promise<SessionState | undefined> {
    return (await this.read(key))?.state;
  }

  async update<T>(key: SessionKey, change: (s: SessionState) => T): Promise<T> {
    return this.queue.run(keyText(key), () => this.apply(key, change));
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
    await this.call(() => this.redis.set(this.refKey(ref), keyText(key), 'PX', this.ttlMs));
  }

  async findLogical(ref: string): Promise<SessionKey | undefined> {
    const m = await this.call(() => this.redis.svcFindLogical(this.refKey(ref), this.prefix));
    if (!m) return undefined;
    const at = m.indexOf('/');
    return { prompt_hash: m.slice(0, at), session: m.slice(at + 1) };
  }

  async size(): Promise<number> {
    return this.call(() => this.redis.zcard(`${this.prefix}lru`));
  }

  async sweep(): Promise<void> {
    await this.call(() => this.redis.svcSweep(...this.base(this.now())));
  }

  /** The compare-and-set loop of `update` (this process's updates of the session queued before it). */
  private async apply<T>(key: SessionKey, change: (s: SessionState) => T): Promise<T> {
    const k = keyText(key);
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      if (attempt > 1) await backoff(attempt);
      // First from what this process read a moment ago (it touched the session then): a
      // compare-and-set against it saves the read, and a stale one only fails the set.
      const got = (attempt === 1 && this.recentRead(k)) || (await this.read(key));
      if (!got) throw unknownSession(key);
      const out = change(got.state);
      const text = this.stored(got.state);
      if (text === got.text) return out;
      const flag = runsOperations(got.state) ? '1' : '0';
      const refs = JSON.stringify(got.state.logical);
      const written = await this.call(() => this.redis.svcWrite(this.sessionKey(key), got.version, text, flag, refs));
      if (written === 1) {
        // The new version, as of the last read (which touched the session; a write does not).
        const r = this.recent.get(k);
        if (r) this.recent.set(k, { ...r, version: String(Number(got.version) + 1), text });
        return out;
      }
      this.recent.delete(k);
      // 0: another process wrote first; -1: the session went (the next read says so).
    }
    throw new Error(`session ${keyText(key)}: ${MAX_ATTEMPTS} writes in a row lost to concurrent writers`);
  }

  /** Read and touch the session (one round trip); undefined when it is gone or idled out (dropped then). */
  private async read(key: SessionKey): Promise<Read | undefined> {
    const now = this.now();
    const got = await this.call(() => this.redis.svcTouch(...this.base(now), keyText(key)));
    if (!got) return undefined;
    const [version, text] = got;
    this.remember(keyText(key), version, text);
    const state = decodeSession(text);
    state.last_used = now;
    return { version, text, state };
  }

  /** Keep the text of a version just read (`RECENT_MS`, at most `RECENT_MAX` sessions). */
  private remember(k: string, version: string, text: string): void {
    this.recent.delete(k);
    this.recent.set(k, { version, text, at: this.clock(), touched: this.now() });
    if (this.recent.size > RECENT_MAX) this.recent.delete(this.recent.keys().next().value!);
  }

  /** What `read` would give from the version kept for `k`, when it is recent enough; a fresh state. */
  private recentRead(k: string): Read | undefined {
    const r = this.recent.get(k);
    // Idle time follows the injected clock: a session idle by it is read (and dropped) for real.
    if (!r || this.clock() - r.at > RECENT_MS || this.now() - r.touched > this.limits.idleMs) return undefined;
    const state = decodeSession(r.text);
    state.last_used = this.now();
    return { version: r.version, text: r.text, state };
  }

  /** The state's stored text: last used lives in its own hash field, so the JSON holds 0. */
  private stored(s: SessionState): string {
    return encodeSession({ ...s, last_used: 0 });
  }

  /** ARGV 1-4 of the scripts that sweep or touch: prefix, now, idleMs, ttlMs. */
  private base(now: number): [string, number, number, number] {
    return [this.prefix, now, this.limits.idleMs, this.ttlMs];
  }

  private sessionKey(key: SessionKey): string {
    return `${this.prefix}s:${keyText(key)}`;
  }

  private refKey(ref: string): string {
    return `${this.prefix}l:${ref}`;
  }

  /** A key-value store with expiry on the same connection, under `<prefix>kv:` (MCP transport sessions). */
  kv(): SharedKv {
    const key = (k: string) => `${this.prefix}kv:${k}`;
    return {
      get: async (k) => (await this.call(() => this.redis.get(key(k)))) ?? undefined,
      set: async (k, v, ttlMs) => void (await this.call(() => this.redis.set(key(k), v, 'PX', Math.max(1, ttlMs)))),
      del: async (k) => void (await this.call(() => this.redis.del(key(k)))),
    };
  }

  /** Run a command; a failure to reach Redis becomes `store_unavailable`. */
  private async call<T>(command: () => Promise<T>): Promise<T> {
    try {
      return await command();
    } catch (e) {
      throw storeFailure(e);
    }
  }
}
