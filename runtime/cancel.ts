/** Cancelling a run or a page fetch from outside: the caller's signal and the server's shutdown. */
import { RunAbort } from './call.js';
import type { CancelSignal } from './signal.js';

/**
 * Cancel `controller` (a `RunAbort('cancelled')`) when the caller's `signal` or the server's `stop`
 * aborts, at once if one has: two listeners, no `AbortSignal.any` per run. Returns the detach.
 */
export function cancelledBy(
  controller: { abort(reason: unknown): void },
  opts: { signal?: CancelSignal; stop?: CancelSignal },
): () => void {
  const { signal, stop } = opts;
  const onCancel = () => controller.abort(new RunAbort('cancelled'));
  if (signal?.aborted || stop?.aborted) onCancel();
  signal?.addEventListener('abort', onCancel, { once: true });
  stop?.addEventListener('abort', onCancel, { once: true });
  return () => {
    signal?.removeEventListener('abort', onCancel);
    stop?.removeEventListener('abort', onCancel);
  };
}
