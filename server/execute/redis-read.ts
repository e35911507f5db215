/**
 * A read of a session by the Redis repository: one round trip to the touch script (redis-scripts.ts)
 * told the version this process holds. Redis answers nothing more when that version is current,
 * the journal of the writes since when it moved (applied to the held state in place,
 * redis-items.ts), or the whole session when this process holds none or one too old. Writes of
 * this process may land while the answer travels: a version held that is as new as the answer is
 * kept as it is, and an answer that cannot apply (the entry changed under it) is asked again.
 */
import type { Peeked } from './repository.js';
import type { Held, SessionCache } from './redis-cache.js';
import { loaded, replay } from './redis-items.js';
import type { TouchReply } from './redis-scripts.js';

/** Answers based on the version held that could not apply before the whole session is asked for. */
const TRIES = 3;

/**
 * Read and touch session `k`; undefined when it is gone or idled out (dropped then). `touch(now,
 * from)` runs the touch script told version `from` ('' for none).
 */
export async function readHeld(
  recent: SessionCache,
  k: string,
  clock: () => number,
  touch: (now: number, from: string) => Promise<TouchReply | null>,
): Promise<Held | undefined> {
  for (let tries = 1; ; tries++) {
    const now = clock();
    const held = recent.entry(k);
    const from = held?.version ?? '';
    const got = await touch(now, tries > TRIES ? '' : from);
    if (!got) {
      recent.drop(k);
      return undefined;
    }
    const h = recent.entry(k);
    if (got.length === 1 || got[1] === 'j') {
      // Based on `from`: `h` may have moved on since (by its own writes), or be pending a change.
      if (!h || h !== held || Number(h.version) < Number(from)) continue;
      h.quiet = got.length === 1;
      if (Number(h.version) >= Number(got[0])) return recent.touch(h, now);
      if (got.length === 1) continue; // {v} answers the version held: not reached
      if (h.pending) {
        await h.pending;
        continue;
      }
      const [v, , st, pc, pg, o, entries] = got;
      replay(h, Number(from), v, st, [pc, pg, o], entries);
      return recent.touch(h, now);
    }
    const [v, , st, pc, pg, o, pages, tokens, runs] = got;
    const fresh = loaded(v, st, [pc, pg, o], pages, tokens, runs);
    // A pending change of the entry held is written on its base: that entry stays until it settles.
    if (h?.pending) return recent.touch(fresh, now);
    return recent.keep(k, fresh, now);
  }
}

/**
 * The entry of `k` at once, when the last read found no other writer (`quiet`), nothing of it is
 * in flight and it is not idle at `now`; with `current`: `touch(version held)` answered that
 * version (it is touched then), false otherwise (then it is no longer quiet; dropped when gone).
 */
export function peekHeld(
  recent: SessionCache,
  k: string,
  now: number,
  idleMs: number,
  touch: (from: string) => Promise<TouchReply | null>,
): Peeked | undefined {
  const h = recent.entry(k);
  if (!h?.quiet || h.pending || now - h.touched > idleMs) return undefined;
  const base = h.version;
  const current = touch(base).then(
    (got) => {
      const same = got?.length === 1 && got[0] === base;
      if (recent.entry(k) !== h) return same;
      if (!got) recent.drop(k);
      else if (same) recent.touch(h, now);
      h.quiet = same;
      return same;
    },
    () => {
      h.quiet = false;
      return false;
    },
  );
  return { state: h.state, current };
}
