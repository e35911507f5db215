/**
 * The writes that end a background operation (its run record and page handles, then its terminal
 * descriptor) are facts the process that ran it alone holds: dropped while the session store is
 * away, the operation would come back as `operation_lost` once its lease lapsed, and a client would
 * run again writes that landed. So they are retried while the store answers `store_unavailable`
 * (a capped backoff) and land once it is back; any other failure (the session is gone, a bug)
 * passes. What waits is held by the operation's own promise: the operation stays in its process's
 * running set until its end lands, so these are bounded by `SVC_MAX_RUNNING_OPS`, and the process
 * keeps renewing its lease meanwhile.
 *
 * A write whose answer the outage cut off may have landed: it is run again on the state read then,
 * so a change that is not idempotent may apply twice (a run record listed twice); the terminal
 * write is idempotent (background.ts).
 */
import { SvcFailure } from '../../common/errors.js';
import type { Logger } from '../../common/log.js';
import type { SessionRepository } from './repository.js';

/** The first wait before an attempt again; it doubles up to `MAX_WAIT_MS`. */
const FIRST_WAIT_MS = 100;
/** The longest wait between attempts (the Redis client reconnects every second at most). */
const MAX_WAIT_MS = 1_000;

export interface WriteBackOptions {
  logger: Logger;
  /** What is being written, for the log: `the end of o3 of session <key>`. */
  what: string;
}

/** True when `e` says the session store cannot be reached now. */
export function storeAway(e: unknown): boolean {
  return e instanceof SvcFailure && e.errors[0]?.code === 'store_unavailable';
}

/**
 * Run `write` until it does not fail with `store_unavailable`; its result, or its other failure.
 * Logs once when it starts waiting for the store and once when the write landed.
 *
 * @example
 * await untilStored(() => repo.update(key, end), { logger, what: 'the end of o3' });
 */
export async function untilStored<T>(write: () => Promise<T>, opts: WriteBackOptions): Promise<T> {
  for (let attempt = 0, wait = FIRST_WAIT_MS; ; attempt++) {
    try {
      const out = await write();
      if (attempt > 0) opts.logger.info(`${opts.what} was written back once the session store was reachable again`);
      return out;
    } catch (e) {
      if (!storeAway(e)) throw e;
      if (attempt === 0)
        opts.logger.warn(`${opts.what} waits for the session store (Redis); it is written once the store is back`);
    }
    await new Promise((r) => setTimeout(r, wait).unref());
    wait = Math.min(wait * 2, MAX_WAIT_MS);
  }
}

/** `repo`'s update, each retried while the store is away (`untilStored`). */
export function patientUpdates(
  repo: Pick<SessionRepository, 'update'>,
  logger: Logger,
  what: string,
): Pick<SessionRepository, 'update'> {
  return { update: (key, change) => untilStored(() => repo.update(key, change), { logger, what }) };
}
