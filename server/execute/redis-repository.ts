/**
 * The session repository in Redis, shared by every replica of a deployment; it behaves like
 * MemorySessionRepository (the shared case suite runs against both). Key layout and scripts:
 * redis-scripts.ts. One ioredis connection carries every command (no WATCH: it is per connection,
 * and concurrent flows on one connection would clobber each other's).
 *
 * - A session is stored in parts: its core (teaching text, symbols, pins, operations, logical refs)
 *   as one JSON text, and its page handles, plan tokens and runs item by item under keys of their
 *   own, with the counters as hash fields (redis-items.ts). A write sends what a change changed: a
 *   clean read's (a page handle, a run record, a counter) is a few hundred bytes.
 * - `get` is one round trip: a script checks the version and touches the session (last used, both
 *   LRU scores, TTLs). The last version this process read or wrote of a session is kept as a
 *   read-only snapshot (redis-cache.ts): Redis sends nothing more when the version held is
 *   current, the journal of the writes since (what each changed) when it moved, and the whole
 *   session only to a process that holds none or one more than JOURNAL_MAX writes old.
 * - `update` is a plain read and an atomic compare-and-set: the change runs on a draft of the
 *   version read (session-draft.ts), then one script writes what it changed if the stored version
 *   is still the one read (one round trip when this process read the session within a second: that
 *   version is the base; none when the change changed nothing). It resolves only once the write
 *   landed, so nothing is answered from a write that may fail. When another process wrote first,
 *   the draft is dropped, the session is read again (the journal brings it up to date) and the
 *   change runs again on it (at most 50 attempts with a small jittered backoff). Updates of one
 *   session from this process are queued, so they never conflict with each other. Counters and
 *   token spends go through it, which makes them atomic across processes.
 * - Idle expiry and caps: redis-scripts.ts.
 * - Unlike memory: dropping a session deletes only those of its logical refs still bound to it;
 *   `size` counts index entries of sessions Redis expired until the next sweep meets them; page
 *   handles and plan tokens read back in full are in the order of their numbers (the order they
 *   are minted in).
 * - While Redis cannot be reached every call fails fast with `store_unavailable` (redis-client.ts).
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { SvcFailure } from '../../common/errors.js';
import { SILENT, type Logger } from '../../common/log.js';
import type { SharedKv } from '../kv.js';
import { KeyQueue } from './key-queue.js';
import { SessionCache, type Held } from './redis-cache.js';
import { committed, created, delta, loaded, replayed, storedCore, unchanged } from './redis-items.js';
import { SessionDraft, snapshotOf } from './session-draft.js';
import { closeRedis, connectRedis, redisKv, storeCall } from './redis-client.js';
import { SCRIPTS, type ScriptCommands, type TouchReply } from './redis-scripts.js';
import {
  REPOSITORY_LIMITS,
  tokenProblem,
  tooManySessions,
  unknownSession,
  type NewSessionInit,
  type RepositoryLimits,
  type SessionRepository,
} from './repository.js';
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

/** Wait a little before attempt `n` (1, 2, ...): up to 0.5, 1, 2, ... 10 ms, at random. */
const backoff = (n: number) => new Promise((r) => setTimeout(r, Math.random() * Math.min(2 ** (n - 2), 10)));

export class RedisSessionRepository implements SessionRepository {
  private readonly queue = new KeyQueue();
  /** The last version of each session this process read or wrote, decoded. */
  private readonly recent = new SessionCache();
  private readonly limits: RepositoryLimits;
  private readonly ttlMs: number;
  private readonly now: () => number;
  private readonly prefix: string;
  /** When the connection was last (re)established (`reachableSince`). */
  private upSince: number;

  private constructor(
    private readonly redis: Client,
    opts: RedisRepositoryOptions,
  ) {
    this.limits = { ...REPOSITORY_LIMITS, ...opts.limits };
    this.ttlMs = this.limits.idleMs + TTL_MARGIN_MS;
    this.now = opts.now ?? Date.now;
    this.prefix = opts.keyPrefix ?? 'svc:';
    this.upSince = this.now();
    redis.on('ready', () => (this.upSince = this.now()));
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
    return new RedisSessionRepository(redis as Client, opts);
  }

  /** Close the connection (it does not reconnect afterwards). */
  close(): Promise<void> {
    return closeRedis(this.redis);
  }

  async create(init: NewSessionInit): Promise<SessionState> {
    for (let i = 0; i < 3; i++) {
      const now = this.now();
      const key = { prompt_hash: promptHash(init.entry_id, init.intent), session: randomBytes(8).toString('hex') };
      const s = snapshotOf(newSession(key, { ...init, now }));
      const core = storedCore(s);
      const { maxSessions, maxSessionsPerTenant } = this.limits;
      const [kind, held] = await storeCall(() =>
        this.redis.svcCreate(...this.base(now), keyText(s), s.tenant, core, maxSessions, maxSessionsPerTenant),
      );
      if (kind === 'ok') {
        // Held from now on (its first get is answered without the state), but not as read: the
        // first update still reads (and so touches) it.
        const h = this.recent.keep(keyText(s), created(s, '1', core), now);
        h.at = -Infinity;
        return h.state;
      }
      if (kind === 'tenant')
        throw tooManySessions(`this tenant holds ${held} sessions (the cap is ${maxSessionsPerTenant})`);
      if (kind === 'all') throw tooManySessions(`the server holds ${held} sessions (the cap is ${maxSessions})`);
    }
    throw new Error('three random session ids in a row were taken');
  }

  async get(key: SessionKey): Promise<SessionState | undefined> {
    return (await this.read(key))?.state;
  }

  update<T>(key: SessionKey, change: (s: SessionState) => T): Promise<T> {
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
    await storeCall(() => this.redis.set(this.refKey(ref), keyText(key), 'PX', this.ttlMs));
  }

  async findLogical(ref: string): Promise<SessionKey | undefined> {
    const m = await storeCall(() => this.redis.svcFindLogical(this.refKey(ref), this.prefix));
    if (!m) return undefined;
    const at = m.indexOf('/');
    return { prompt_hash: m.slice(0, at), session: m.slice(at + 1) };
  }

  settled(): Promise<void> {
    return this.queue.idle();
  }

  reachableSince(): number {
    return this.upSince;
  }

  async size(): Promise<number> {
    return storeCall(() => this.redis.zcard(`${this.prefix}lru`));
  }

  async sweep(): Promise<void> {
    await storeCall(() => this.redis.svcSweep(...this.base(this.now())));
  }

  /** The compare-and-set loop of `update` (this process's updates of the session queued before it). */
  private async apply<T>(key: SessionKey, change: (s: SessionState) => T): Promise<T> {
    const k = keyText(key);
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      if (attempt > 1) await backoff(attempt);
      // First the version this process read a moment ago (it touched the session then): a
      // compare-and-set against it saves the read, and a stale one only fails the set.
      const base = (attempt === 1 && this.recent.fresh(k, this.now(), this.limits.idleMs)) || (await this.read(key));
      if (!base) throw unknownSession(key);
      const draft = new SessionDraft(base.state);
      const out = change(draft.state);
      const { snapshot: s, reached } = draft.seal();
      const d = delta(base, s, reached);
      if (unchanged(d)) return out;
      const written = await storeCall(() =>
        this.redis.svcWrite(
          ...this.itemKeys(k),
          base.version,
          d.coreChanged ? d.core : '',
          runsOperations(s) ? '1' : '0',
          JSON.stringify(s.logical),
          s.counters.pc,
          s.counters.pg,
          s.counters.o,
          this.ttlMs,
          ...d.ops,
        ),
      );
      if (written === 1) {
        this.recent.keep(k, committed(base, s, d), this.now());
        return out;
      }
      // 0: another process wrote first (the next read catches up); -1: the session went (the read says so).
    }
    throw new Error(`session ${keyText(key)}: ${MAX_ATTEMPTS} writes in a row lost to concurrent writers`);
  }

  /** Read and touch the session (one round trip, readHeld); undefined when it is gone or idled out. */
  private read(key: SessionKey): Promise<Held | undefined> {
    const k = keyText(key);
    const now = this.now();
    return readHeld(this.recent, k, now, (from) => storeCall(() => this.redis.svcTouch(...this.base(now), k, from)));
  }

  /** KEYS of the write script: the session hash, its page handles, tokens, runs and journal. */
  private itemKeys(k: string): [string, string, string, string, string] {
    const p = this.prefix;
    return [`${p}s:${k}`, `${p}pg:${k}`, `${p}pc:${k}`, `${p}ru:${k}`, `${p}j:${k}`];
  }

  /** ARGV 1-4 of the scripts that sweep or touch: prefix, now, idleMs, ttlMs. */
  private base(now: number): [string, number, number, number] {
    return [this.prefix, now, this.limits.idleMs, this.ttlMs];
  }

  private refKey(ref: string): string {
    return `${this.prefix}l:${ref}`;
  }

  /** A key-value store with expiry on the same connection, under `<prefix>kv:` (MCP transport sessions). */
  kv(): SharedKv {
    return redisKv(this.redis, `${this.prefix}kv:`);
  }
}

/**
 * Read and touch session `k` at `now`; undefined when it is gone or idled out (dropped then).
 * `touch(from)` runs the touch script told version `from` ('' for none): Redis answers nothing
 * more when that version is current, the journal of the writes since when it moved (applied to a
 * copy of the held version, redis-items.ts), or the whole session when this process holds none or
 * one too old. Writes of this process may land while the answer travels: when the entry held by
 * then is as new as the answer, it stands.
 */
export async function readHeld(
  recent: SessionCache,
  k: string,
  now: number,
  touch: (from: string) => Promise<TouchReply | null>,
): Promise<Held | undefined> {
  const held = recent.entry(k);
  const got = await touch(held?.version ?? '');
  if (!got) {
    recent.drop(k);
    return undefined;
  }
  let read: Held;
  if (got.length === 1)
    read = held!; // the version held is current
  else if (got[1] === 'j') {
    const [v, , st, pc, pg, o, entries] = got;
    read = replayed(held!, v, st, [pc, pg, o], entries);
  } else {
    const [v, , st, pc, pg, o, pages, tokens, runs] = got;
    read = loaded(v, st, [pc, pg, o], pages, tokens, runs);
  }
  const latest = recent.entry(k);
  if (latest && Number(latest.version) >= Number(read.version)) return recent.touch(latest, now);
  return recent.keep(k, read, now);
}
