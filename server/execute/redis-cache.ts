/**
 * What the Redis session repository keeps of the sessions this process used: each one's last
 * version, decoded, with the stored text of its core and of each of its page handles and plan
 * tokens. With it a read of a session whose version did not move is not sent by Redis nor decoded
 * again, a version that moved by a few writes is caught up from the session's journal (what those
 * writes changed, redis-items.ts), and an update right after a read is one round trip (a
 * compare-and-set on the version held). `state` is the object `get` hands out and `update` changes
 * in place, as the memory repository's is; an entry is `pending` while a change of it is neither
 * written nor undone. Bounded: least recently used first out.
 */
import type { SessionState } from './state.js';

/** A version read this long ago may be the base of the next compare-and-set without a read (ms). */
export const RECENT_MS = 1_000;
/** Sessions whose last version is kept. */
export const RECENT_MAX = 1_024;

/** The stored text of each page handle and plan token held (what an unchanged one encodes to). */
export interface ItemTexts {
  pages: Map<string, string>;
  tokens: Map<string, string>;
}

export interface Held {
  version: string;
  /** The stored text of that version's core (what an unchanged core encodes to). */
  text: string;
  /** Its page handles and plan tokens are TrackedMaps (redis-tracked.ts). */
  state: SessionState;
  items: ItemTexts;
  /** When it was last read from Redis (real time, for RECENT_MS). */
  at: number;
  /** When it was last touched, by the repository clock (idle time). */
  touched: number;
  /** Set while a change made in place is neither written nor undone; resolves when it is. */
  pending?: Promise<void>;
  /**
   * Set when the last read of it from Redis found the version this process held (no other process
   * wrote in between): the next request may run on it while Redis confirms it (`peek`).
   */
  quiet?: boolean;
  /**
   * Set from a `peek` until its early read is written or released: the claim it asked Redis for
   * (redis-read.ts). `until` is the performance clock's time the claim ends by (Infinity while
   * asked); an entry holds one claim at a time.
   */
  claim?: Claim;
}

/** A claim of a session by this process, for one early read. */
export interface Claim {
  until: number;
}

export class SessionCache {
  private readonly held = new Map<string, Held>();
  private readonly clock = performance.now.bind(performance);

  /** The entry of `k`, pending or not. */
  entry(k: string): Held | undefined {
    return this.held.get(k);
  }

  /** The version to tell Redis this process holds ('' for none). A pending entry's is its base. */
  version(k: string): string {
    return this.held.get(k)?.version ?? '';
  }

  /** `h` was just read from Redis as of `now` (repository clock). */
  touch(h: Held, now: number): Held {
    h.at = this.clock();
    h.touched = now;
    h.state.last_used = now;
    return h;
  }

  /** Keep `h` as the entry of `k`, read just now (or created). */
  keep(k: string, h: Held, now: number): Held {
    this.held.delete(k);
    this.held.set(k, h);
    if (this.held.size > RECENT_MAX) this.held.delete(this.held.keys().next().value!);
    return this.touch(h, now);
  }

  /** The entry of `k` read within RECENT_MS, unless it is pending or idle by the repository clock. */
  fresh(k: string, now: number, idleMs: number): Held | undefined {
    const h = this.held.get(k);
    if (!h || h.pending || this.clock() - h.at > RECENT_MS || now - h.touched > idleMs) return undefined;
    h.state.last_used = now;
    return h;
  }

  drop(k: string): void {
    this.held.delete(k);
  }
}
