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
 * a page fetch, the server's shutdown). Listeners are called once, in the order added, with no
 * event argument. Kept over Node's `AbortController`: with one in its place svc used 1.13× (TOON)
 * and 1.14× (JSON) the CPU per request of a clean 25-row read, side by side (median of 6 runs).
 */
export class Cancel implements CancelSignal {
  aborted = false;
  reason: unknown = undefined;
  /** In the order added (a Set keeps it); a listener added twice is kept once, as `EventTarget` does. */
  private readonly listeners = new Set<AbortListener>();

  addEventListener(_type: 'abort', listener: AbortListener): void {
    if (!this.aborted) this.listeners.add(listener);
  }

  removeEventListener(_type: 'abort', listener: AbortListener): void {
    this.listeners.delete(listener);
  }

  /** Abort with `reason` (the first abort wins) and call every listener; one that throws does not stop the rest. */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = [...this.listeners];
    this.listeners.clear();
    let failed: { error: unknown } | undefined;
    for (const l of listeners) {
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
