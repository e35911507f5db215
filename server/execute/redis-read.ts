/**
 * A read of a session by the Redis repository: one round trip to the touch script (redis-scripts.ts)
 * told the version this process holds. Redis answers nothing more when that version is current,
 * the journal of the writes since when it moved (applied to the held state in place,
 * redis-items.ts), or the whole session when this process holds none or one too old. Writes of
 * this process may land while the answer travels: a version held that is as new as the answer is
 * kept as it is, and an answer that cannot apply (the entry changed under it) is asked again.
 *
 * Claims: a peek (`peekHeld`) runs a clean read on the version held while the touch checks it, and
 * that touch, when the version is current, claims the session for this process (`P w:<m>`, CLAIM_MS).
 * The touch goes out once the read's vendor request is on its way (`confirm`), so it does not
 * delay it; the read's write goes out after the answer, and Redis confirms it later still, so the
 * client's next request can reach another replica first. That replica's touch sees the claim and
 * waits until the write (which ends it) has landed, and its compare-and-set fails while the claim
 * is someone else's: it never reads a version without the page handle just answered, nor writes
 * between. A claim the program did not use for a write is released at once; one whose process
 * died lapses after CLAIM_MS, and only a claim with CLAIM_MARGIN_MS left is used to answer early.
 */
import type { Logger } from '../../common/log.js';
import type { Peeked } from './repository.js';
import type { Claim, Held, SessionCache } from './redis-cache.js';
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
  for (let tries = 1, waits = 0; ; tries++) {
    const now = clock();
    const held = recent.entry(k);
    const from = held?.version ?? '';
    const got = await touch(now, tries > TRIES ? '' : from);
    if (!got) {
      recent.drop(k);
      return undefined;
    }
    if (got[1] === 'w') {
      // Another process answered an early read whose write has not landed: read after it.
      if (held) held.quiet = false;
      await claimWait(waits++, Number(got[2]));
      tries--;
      continue;
    }
    const h = recent.entry(k);
    if (got.length === 1 || got[1] === 'j' || got[1] === 'u') {
      const told = got.length === 1 || got[1] === 'u'; // the version told ('u' only answers a claim asked for)
      // Based on `from`: `h` may have moved on since (by its own writes), or be pending a change.
      if (!h || h !== held || Number(h.version) < Number(from)) continue;
      if (Number(h.version) >= Number(got[0])) {
        // Journal entries up to a version this entry reached by its own writes: no other writer.
        if (told) h.quiet = true;
        return recent.touch(h, now);
      }
      h.quiet = false;
      if (told) continue; // {v} answers the version held: not reached
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

/** How long a peek claims a session: other processes wait that long at most (ms). */
export const CLAIM_MS = 2_000;
/** A claim is used to answer before the write lands only while this much of it is left (ms). */
export const CLAIM_MARGIN_MS = 500;
/** A peek asks Redis by itself after this long when its caller did not `confirm` (ms). */
export const CONFIRM_FALLBACK_MS = 20;

/** What `peekHeld` needs of the repository. */
export interface PeekCalls {
  /** The touch script told version `from`, claiming the session for CLAIM_MS when it is current. */
  touch(from: string): Promise<TouchReply | null>;
  /** End this process's claim of the session in Redis (a claim no write ended). */
  release(): void;
}

/**
 * The entry of `k` at once, when the last read found no other writer (`quiet`), it holds no claim
 * and it is not idle at `now`. With `current`: once the caller confirmed (or CONFIRM_FALLBACK_MS
 * passed) and a change of it in flight settled, `touch(version held)` answered that version, which
 * claims the session for this process (it is touched then); false otherwise (then it is no longer
 * quiet; dropped when gone). Every other process reads and writes the session only once the claim
 * is gone: the early read's write ends it (the repository's `update` with `early`), `release` ends
 * it otherwise, and it lapses after CLAIM_MS (the backstop for a process that died).
 */
export function peekHeld(
  recent: SessionCache,
  k: string,
  now: number,
  idleMs: number,
  calls: PeekCalls,
): Peeked | undefined {
  const h = recent.entry(k);
  if (!h?.quiet || h.claim || now - h.touched > idleMs) return undefined;
  const claim: Claim = (h.claim = { until: Infinity });
  let go!: (ask: boolean) => void;
  const asked = new Promise<boolean>((r) => (go = r));
  // The caller confirms once its vendor request is on its way; the timer covers one that never does
  // (unref'd: it never holds a stopping process up on its own).
  const fallback = setTimeout(() => go(true), CONFIRM_FALLBACK_MS).unref();
  const confirm = (ask = true) => {
    clearTimeout(fallback);
    go(ask);
  };
  const ask = async (): Promise<boolean> => {
    if (!(await asked)) return false; // released before it was asked
    // A write of this process in flight (the last early read's, typically): its version, once settled.
    while (h.pending) await h.pending;
    if (recent.entry(k) !== h || !h.quiet) return false;
    const base = h.version;
    const sent = performance.now();
    const got = await calls.touch(base);
    const same = got !== null && got[0] === base && (got.length === 1 || got[1] === 'u');
    // Not claimed when another process touched the session last: its write is awaited as usual.
    claim.until = same && got.length === 1 ? sent + CLAIM_MS : -Infinity;
    if (recent.entry(k) !== h) return same;
    if (!got) recent.drop(k);
    else if (same) recent.touch(h, now);
    h.quiet = same;
    return same;
  };
  const current = ask().catch(() => {
    h.quiet = false;
    return false;
  });
  let answered: boolean | undefined;
  const end = (ok: boolean) => {
    if (h.claim !== claim) return; // used by the early read's write, or ended already
    delete h.claim;
    if (ok && claim.until > 0) calls.release(); // granted (not {v, 'u'})
  };
  void current.then((ok) => {
    answered = ok;
    if (!ok) end(false);
  });
  // At once when the touch has answered (the next peek may follow right away), else once it has.
  const release = () => {
    confirm(false); // not asked yet: no need to
    if (answered === undefined) void current.then(end);
    else end(answered);
  };
  return { state: h.state, current, release, confirm: () => confirm() };
}

/** The claim of `h` when it still has CLAIM_MARGIN_MS left: an update may answer before its write lands. */
export function usableClaim(h: Held): Claim | undefined {
  const c = h.claim;
  return c && performance.now() < c.until - CLAIM_MARGIN_MS ? c : undefined;
}

/** After the immediates queued now: past the answer's write, which `answer` of an early update set off. */
export const afterAnswer = () => new Promise((r) => setImmediate(r));

/** How long to wait before asking again for a session another process claimed (`left`: ms of the claim). */
export function claimWait(waits: number, left: number): Promise<void> {
  const ms = Math.max(1, Math.min(left, 2 ** Math.min(waits, 4)));
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * What `write(answer)` resolves to, or what it passes to `answer` first: a write answered before it
 * landed that then fails is logged (its run and page handles are not recorded), not thrown.
 */
export function answeredEarly<T>(
  logger: Logger,
  k: string,
  write: (answer: (out: T) => void) => Promise<T>,
): Promise<T> {
  let answered = false;
  let answer!: (out: T) => void;
  const early = new Promise<T>((r) => (answer = r));
  const landed = write((out) => {
    answered = true;
    answer(out);
  });
  landed.catch((e: unknown) => {
    if (answered)
      logger.error(
        `session ${k}: the write of a read answered early failed or went unconfirmed: its run and page handles may be missing`,
        {
          error: (e as Error)?.message ?? String(e),
        },
      );
  });
  return Promise.race([early, landed]);
}
