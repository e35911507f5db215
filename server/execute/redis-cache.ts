/**
 * What the Redis session repository keeps of the sessions this process used: each one's last
 * version, its stored text and its decoded state. With it a read of a session whose version did not
 * move is not sent by Redis nor decoded again, and an update right after a read is one round trip
 * (a compare-and-set on the version held). `state` is the object `get` hands out and `update`
 * changes in place, as the memory repository's is; an entry is `dirty` while a change of it is not
 * yet written (a read then goes to Redis in full). Bounded: least recently used first out.
 */
import type { SessionState } from './state.js';

/** A version read this long ago may be the base of the next compare-and-set without a read (ms). */
export const RECENT_MS = 1_000;
/** Sessions whose last version is kept. */
export const RECENT_MAX = 1_024;

export interface Held {
  version: string;
  /** The stored text of that version (what an unchanged state encodes to). */
  text: string;
  state: SessionState;
  /** When it was last read from Redis (real time, for RECENT_MS). */
  at: number;
  /** When it was last touched, by the repository clock (idle time). */
  touched: number;
  dirty: boolean;
}

export class SessionCache {
  private readonly held = new Map<string, Held>();
  private readonly clock = performance.now.bind(performance);

  /** The version to tell Redis this process holds ('' for none, or while a change is unwritten). */
  version(k: string): string {
    const h = this.held.get(k);
    return h && !h.dirty ? h.version : '';
  }

  /** The entry of `k` when it still is version `v` and clean: touched again (read as of now). */
  confirm(k: string, v: string, now: number): Held | undefined {
    const h = this.held.get(k);
    if (!h || h.dirty || h.version !== v) return undefined;
    h.at = this.clock();
    h.touched = now;
    h.state.last_used = now;
    return h;
  }

  /** Keep version `v` of `k` just read from Redis. */
  keep(k: string, v: string, text: string, state: SessionState, now: number): Held {
    const h: Held = { version: v, text, state, at: this.clock(), touched: now, dirty: false };
    this.held.delete(k);
    this.held.set(k, h);
    if (this.held.size > RECENT_MAX) this.held.delete(this.held.keys().next().value!);
    return h;
  }

  /** The entry of `k` read within RECENT_MS, unless it is dirty or idle by the repository clock. */
  fresh(k: string, now: number, idleMs: number): Held | undefined {
    const h = this.held.get(k);
    if (!h || h.dirty || this.clock() - h.at > RECENT_MS || now - h.touched > idleMs) return undefined;
    h.state.last_used = now;
    return h;
  }

  drop(k: string): void {
    this.held.delete(k);
  }
}
