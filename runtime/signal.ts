/**
 * The runtime's abort signals: what it reads of one (`CancelSignal`, which an `AbortSignal` has)
 * and its own light kind (`Cancel`). A leaf module: no runtime import.
 */
/** Called when a signal aborts: a function, or an object with `handleEvent` (as `EventTarget` takes). */
export type AbortListener = (() => void) | { handleEvent(): void };

/**
 * What the runtime reads of a signal that cancels its work: an `AbortSignal` has it, and so has
 * `Cancel`. A listener added after the abort is not called (as with `AbortSignal`).
 */
export interface CancelSignal {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: AbortListener, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: AbortListener): void;
}

/** The reason a signal aborted, as an Error (a RunAbort, a DOMException, or one made for it). */
export function abortReason(signal: CancelSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason));
}

/**
 * An abort controller and its signal in one object, for what the runtime cancels itself (a run,
 * a page fetch, the server's shutdown). Node's `AbortSignal` is an `EventTarget`: making one
 * costs about 1.6 µs and adding and removing a listener another 1.5 µs (Node 20), on every read.
 * Listeners are called once, in the order added, with no event argument.
 */
export class Cancel implements CancelSignal {
  aborted = false;
  reason: unknown = undefined;
  /**
   * In the order added; a removed listener leaves a hole, and the holes are dropped when they
   * are most of it. An array, not a Set: the server's shutdown signal gets a listener from every
   * run and loses it again (common/slot-set.ts says what a Set under such churn costs).
   */
  private listeners: Array<AbortListener | undefined> | undefined;
  private count = 0;

  addEventListener(_type: 'abort', listener: AbortListener): void {
    if (this.aborted) return;
    const ls = (this.listeners ??= []);
    if (ls.includes(listener)) return;
    ls.push(listener);
    this.count++;
  }

  removeEventListener(_type: 'abort', listener: AbortListener): void {
    const ls = this.listeners;
    const i = ls ? ls.indexOf(listener) : -1;
    if (!ls || i < 0) return;
    ls[i] = undefined;
    if (--this.count === 0) this.listeners = undefined;
    else if (ls.length >= 64 && this.count * 4 < ls.length) this.listeners = ls.filter((l) => l !== undefined);
  }

  /** Abort with `reason` (the first abort wins) and call every listener; one that throws does not stop the rest. */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.listeners;
    this.listeners = undefined;
    this.count = 0;
    if (!listeners) return;
    let failed: { error: unknown } | undefined;
    for (const l of listeners) {
      if (l === undefined) continue;
      try {
        if (typeof l === 'function') l();
        else l.handleEvent();
      } catch (error) {
        failed ??= { error };
      }
    }
    if (failed) throw failed.error;
  }
}
