/** The process-local half of a background operation, and what a surface watching one gets. */
import type { OpEvent } from './operations.js';
import type { Follow } from './request.js';
import { svcError, SvcFailure } from '../../common/errors.js';
import type { Limits } from '../limits.js';
import { keyText, type SessionKey, type SessionState } from './state.js';

/** What a surface watching an operation gets: its line now, and (while it runs) its events. */
export interface Watch {
  line: string;
  terminal: boolean;
  /** Listen until the terminal event; returns the function that stops listening. */
  subscribe(listener: (e: OpEvent) => void): () => void;
}

/** The process-local half of a running operation. */
export interface LiveOp {
  key: SessionKey;
  handle: string;
  controller: AbortController;
  listeners: Set<(e: OpEvent) => void>;
  /** Counts of the last progress event pushed (an event that changes nothing is not pushed). */
  notified: { counts?: string };
  /** Progress writes, in order; the terminal write waits for them. */
  chain: Promise<void>;
  /** Set once the run ended: the terminal line its listeners got. */
  terminal?: string;
  /** Settles when the run has ended and what it did is stored. */
  done: Promise<void>;
  /** Its progress and lease writes (op-writer.ts). */
  writer?: { renew(): void; settle(): Promise<void> };
}

/** The key of a live operation: its session and handle. */
export function liveKey(key: SessionKey, handle: string): string {
  return `${keyText(key)}#${handle}`;
}

/** Tell every listener. */
export function notify(op: LiveOp, e: OpEvent): void {
  for (const l of [...op.listeners]) l(e);
}

/**
 * `too_many_operations` when the session already runs its cap of operations, or the process
 * (`running` operations live here) runs the server's cap.
 */
export function checkOperationCaps(
  s: SessionState,
  running: number,
  limits: Pick<Limits, 'maxRunningOpsPerSession' | 'maxRunningOps'>,
): void {
  const mine = [...s.ops.values()].filter((o) => o.state === 'running');
  const cap = limits.maxRunningOpsPerSession;
  if (mine.length >= cap)
    throw new SvcFailure([
      svcError(
        'too_many_operations',
        `this session already runs ${mine.length} operations (the cap is ${cap}): ${mine.map((o) => o.handle).join(', ')}`,
        {
          hint: `wait for them with wait(oN) or stop them with cancel(oN) first: ${mine.map((o) => `wait(${o.handle})`).join(', ')}`,
        },
      ),
    ]);
  if (running >= limits.maxRunningOps)
    throw new SvcFailure([
      svcError(
        'too_many_operations',
        `the server already runs ${running} background operations (the cap is ${limits.maxRunningOps})`,
        {
          hint: mine.length
            ? `wait for or cancel this session's own: ${mine.map((o) => `wait(${o.handle})`).join(', ')}`
            : 'run it as a waited run, or try again when operations have ended',
        },
      ),
    ]);
}

/**
 * Pass each line of a running operation to `follow.onLine` until its terminal one (at once when it
 * already ended); an abort of `follow.signal` cancels it.
 */
export async function followToEnd(op: LiveOp, follow: Follow): Promise<void> {
  const handle = op.handle;
  if (op.terminal !== undefined) return follow.onLine?.({ line: op.terminal, handle });
  // Checked and subscribed in one synchronous step: the terminal event cannot slip in between.
  await new Promise<void>((resolve) => {
    const cancel = () => op.controller.abort();
    const listener = (e: OpEvent) => {
      follow.onLine?.({ line: e.line, handle });
      if (e.kind !== 'terminal') return;
      op.listeners.delete(listener);
      follow.signal?.removeEventListener('abort', cancel);
      resolve();
    };
    op.listeners.add(listener);
    if (follow.signal?.aborted) cancel();
    else follow.signal?.addEventListener('abort', cancel, { once: true });
  });
}
