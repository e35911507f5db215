/**
 * A read of a session by the Redis repository: one round trip to the touch script (redis-scripts.ts)
 * told the version this process holds. Redis answers nothing more when that version is current,
 * the journal of the writes since when it moved (applied to a copy of the held version,
 * redis-items.ts), or the whole session when this process holds none or one too old. Writes of
 * this process may land while the answer travels: when the entry held by then is as new as the
 * answer, it stands.
 */
import type { Held, SessionCache } from './redis-cache.js';
import { loaded, replayed } from './redis-items.js';
import type { TouchReply } from './redis-scripts.js';

/**
 * Read and touch session `k` at `now`; undefined when it is gone or idled out (dropped then).
 * `touch(from)` runs the touch script told version `from` ('' for none).
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
