/**
 * The Redis connection of a shared store, tuned to fail fast: while Redis cannot be reached every
 * command is refused at once (no offline queue, one retry, a 1.5 s command timeout) with
 * `store_unavailable`, and the client keeps reconnecting in the background (backoff capped at 1 s)
 * so calls succeed again once Redis is back, without restarting the process. Commands a broken
 * connection left unanswered are not sent again after a reconnect (their outcome is unknown, and
 * a compare-and-set sent twice could apply a change twice). Connection errors go to the logger,
 * at most one line per 10 s, and never crash the process. No message echoes the URL's password.
 */
import { Redis, type RedisOptions } from 'ioredis';
import { svcError, SvcFailure } from '../../common/errors.js';
import type { Logger } from '../../common/log.js';
import type { SharedKv } from '../kv.js';

const HINT = 'the session store (Redis) cannot be reached; retry in a few seconds';
const LOG_EVERY_MS = 10_000;

/** The `store_unavailable` failure, with a short cause (never a secret). */
export function storeUnavailable(message: string, cause?: string, hint = HINT): SvcFailure {
  return new SvcFailure([svcError('store_unavailable', message, cause ? { hint, cause } : { hint })]);
}

/** `url` without its user name and password: `redis://host:port/db`. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname}`;
  } catch {
    return '(an unparsable URL)';
  }
}

/** Client options: fail fast while Redis is away, reconnect forever (backoff capped at 1 s). */
export function fastFailOptions(): RedisOptions {
  return {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    autoResendUnfulfilledCommands: false,
    connectTimeout: 2000,
    commandTimeout: 1500,
    retryStrategy: (times: number) => Math.min(50 * times, 1000),
  };
}

/** Redis replies that mean "not available now" rather than a bug in a command. */
const UNAVAILABLE_REPLY = /^(LOADING|BUSY|MASTERDOWN|READONLY|CLUSTERDOWN|TRYAGAIN)\b/;

/**
 * What a failed command becomes: a SvcFailure passes through; a command Redis rejected (a script
 * error: a bug) stays as it is; anything else (no connection, a timeout) is `store_unavailable`.
 */
export function storeFailure(e: unknown): unknown {
  if (e instanceof SvcFailure) return e;
  const message = e instanceof Error ? e.message : String(e);
  if (e instanceof Error && e.name === 'ReplyError' && !UNAVAILABLE_REPLY.test(message)) return e;
  return storeUnavailable('the session store (Redis) cannot be reached', message.slice(0, 200));
}

/**
 * Log a lost connection and failed reconnects (at most one line per 10 s), and the recovery after
 * them, instead of crashing on ioredis 'error' events. 'reconnecting' fires only when a connection
 * broke (never after `quit`), so a clean shutdown logs nothing.
 */
function watch(redis: Redis, logger: Logger, where: string): void {
  let lastLog = -Infinity;
  let failing = false;
  const trouble = (cause: string) => {
    failing = true;
    const now = Date.now();
    if (now - lastLog < LOG_EVERY_MS) return;
    lastLog = now;
    logger.warn('session store (Redis) unreachable; retrying', { at: where, cause: cause.slice(0, 200) });
  };
  redis.on('error', (e: Error) => trouble(e.message));
  redis.on('reconnecting', () => trouble('connection lost'));
  redis.on('ready', () => {
    if (!failing) return;
    failing = false;
    lastLog = -Infinity;
    logger.info('session store (Redis) reachable again', { at: where });
  });
}

/**
 * A connected client for `url` (`redis://host:port/db`, `rediss://` for TLS), pinged once. When
 * Redis cannot be reached at start-up: `store_unavailable` naming SVC_MCP_TRANSPORT_KV_URL (and no
 * client keeps reconnecting in the background).
 */
export async function connectRedis(url: string, logger: Logger): Promise<Redis> {
  const where = redactUrl(url);
  const redis = new Redis(url, fastFailOptions());
  let lastError = '';
  redis.on('error', (e: Error) => (lastError = e.message));
  try {
    await redis.connect();
    await redis.ping();
    watch(redis, logger, where);
    return redis;
  } catch (e) {
    redis.disconnect();
    const cause = (lastError || (e instanceof Error ? e.message : String(e))).slice(0, 200);
    throw storeUnavailable(
      `the session store at ${where} (SVC_MCP_TRANSPORT_KV_URL) cannot be reached`,
      cause,
      'start Redis there, or point SVC_MCP_TRANSPORT_KV_URL at a reachable one (redis://host:6379/0)',
    );
  }
}

/** A key-value store with expiry on `redis` under `prefix` (a failure to reach Redis: `store_unavailable`). */
export function redisKv(redis: Redis, prefix: string): SharedKv {
  return {
    get: async (k) => (await storeCall(() => redis.get(prefix + k))) ?? undefined,
    set: async (k, v, ttlMs) => void (await storeCall(() => redis.set(prefix + k, v, 'PX', Math.max(1, ttlMs)))),
    del: async (k) => void (await storeCall(() => redis.del(prefix + k))),
  };
}

/** Close a connection: QUIT after the commands in flight, then disconnect (it does not reconnect). */
export async function closeRedis(redis: Redis): Promise<void> {
  try {
    await redis.quit();
  } catch {
    // Not connected: nothing to say goodbye to.
  } finally {
    redis.disconnect();
  }
}

/** Run a command; a failure to reach Redis becomes `store_unavailable`. */
export async function storeCall<T>(command: () => Promise<T>): Promise<T> {
  try {
    return await command();
  } catch (e) {
    throw storeFailure(e);
  }
}
