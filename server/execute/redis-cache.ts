/**
 * What the Redis session repository keeps of the sessions this process used: each one's last
 * version, as a read-only snapshot (session-draft.ts) with the stored text of its core and of each
 * of its page handles and plan tokens. With it a read of a session whose version did not move is
 * not sent by Redis nor decoded again, a version that moved by a few writes is caught up from the
 * session's journal (what those writes changed, redis-items.ts), and an update right after a read
 * is one round trip (a compare-and-set on the version held). A held version is never changed: a
 * newer one replaces it. Bounded: least recently used first out.
 */
import { usedAt } from './session-draft.js';
import type { SessionState } from './state.js';

/** A version read this long ago may be the base of the next compare-and-set without a read (ms). */
export const RECENT_MS = 1_000;
/** Sessions whose last version is kept. */
export const RECENT_MAX = 1_024;

/** The stored text of each page handle and plan token held (what an unchanged one encodes to). */
export interface ItemTexts {
  readonly pages: ReadonlyMap<string, string>;
  readonly tokens: ReadonlyMap<string, string>;
}

/** One version of a session as this process holds it. */
export interface Held {
  readonly version: string;
  /** The stored text of that version's core (what an unchanged core encodes to). */
  readonly text: string;
  /** The snapshot (its `last_used` moves with each touch: a new snapshot then). */
  state: SessionState;
  readonly items: ItemTexts;
  /** When it was last read from Redis (real time, for RECENT_MS). */
  at: number;
  /** When it was last touched, by the repository clock (idle time). */
  touched: number;
}

export class SessionCache {
  private readonly held = new Map<string, Held>();
  private readonly clock = performance.now.bind(performance);

  entry(k: string): Held | undefined {
    return this.held.get(k);
  }

  /** `h` was just read from (or written to) Redis as of `now` (repository clock). */
  touch(h: Held, now: number): Held {
    h.at = this.clock();
    h.touched = now;
    h.state = usedAt(h.state, now);
    return h;
  }

  /** Keep `h` as the entry of `k`, read or written just now (or created). */
  keep(k: string, h: Held, now: number): Held {
    this.held.delete(k);
    this.held.set(k, h);
    if (this.held.size > RECENT_MAX) this.held.delete(this.held.keys().next().value!);
    return this.touch(h, now);
  }

  /** The entry of `k` read within RECENT_MS, unless it is idle by the repository clock. */
  fresh(k: string, now: number, idleMs: number): Held | undefined {
    const h = this.held.get(k);
    if (!h || this.clock() - h.at > RECENT_MS || now - h.touched > idleMs) return undefined;
    return h;
  }

  drop(k: string): void {
    this.held.delete(k);
  }
}
