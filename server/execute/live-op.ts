/** The process-local half of a background operation, and what a surface watching one gets. */
import type { OpEvent } from './operations.js';
import { keyText, type SessionKey } from './state.js';

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
}

/** The key of a live operation: its session and handle. */
export function liveKey(key: SessionKey, handle: string): string {
  return `${keyText(key)}#${handle}`;
}

/** Tell every listener. */
export function notify(op: LiveOp, e: OpEvent): void {
  for (const l of [...op.listeners]) l(e);
}
