/**
 * Background operations (`wait=false`): a live run started in the background behind a handle
 * `oN`, its progress folded into one line per poll, cooperative cancel, listeners for SSE, and
 * bounded memory (terminal operations are kept for a while, then dropped).
 */
import type { SvcError } from '../../common/errors.js';
import type { ProgressEvent } from '../../runtime/progress.js';
import type { ResultBlock } from './outcome.js';

export type OpState = 'running' | 'succeeded' | 'failed' | 'cancelled';
export type Sign = '+' | '~' | '=' | '!' | 'x' | '?';

/** Running operations per session unless SVC_MAX_RUNNING_OPS_PER_SESSION says otherwise. */
export const DEFAULT_MAX_RUNNING_OPS = 16;
/** Terminal operations kept per session (oldest dropped first). */
export const TERMINAL_OPS_KEPT = 32;
/** A terminal operation is kept at most this long after it ended. */
export const TERMINAL_OP_TTL_MS = 60 * 60 * 1000;

export interface OpEvent {
  kind: 'progress' | 'terminal';
  line: string;
}

export interface Operation {
  handle: string;
  state: OpState;
  started: number;
  ended?: number;
  /** Steps of the plan. */
  steps: number;
  /** Ids of the steps whose rows the program returns: progress lines count their rows only. */
  returns: Set<string>;
  /** Step id -> latest progress. */
  progress: Map<string, { phase: string; pages: number; rows: number; calls: number }>;
  /** Grows with every progress change; `seen` is the version the last poll reported. */
  version: number;
  seen: number;
  controller: AbortController;
  run_id?: string;
  /** Result blocks (page handles minted) without rows: rows are read back from the run artifact. */
  blocks?: Array<Omit<ResultBlock, 'rows'> & { step: string }>;
  errors: SvcError[];
  listeners: Set<(e: OpEvent) => void>;
  /** The counts of the last progress event sent: an event that changes nothing is not sent. */
  notified?: string;
  /** Settles when the run has ended and its artifact is stored. */
  done: Promise<void>;
}

/**
 * Fold a runtime progress event into the operation; the `progress` event to push to listeners
 * when the line's counts changed (steps done, pages, rows), else undefined.
 */
export function progressOf(op: Operation, e: ProgressEvent, now: number): OpEvent | undefined {
  if (!applyProgress(op, e)) return undefined;
  const c = counts(op);
  if (c === op.notified) return undefined;
  op.notified = c;
  return { kind: 'progress', line: opLine(op, '~', now) };
}

/** Listen to an operation's events until it ends; returns the function that stops listening. */
export function subscribe(op: Operation, listener: (e: OpEvent) => void): () => void {
  op.listeners.add(listener);
  return () => op.listeners.delete(listener);
}

/** Fold a runtime progress event into the operation; true when something changed. */
export function applyProgress(op: Operation, e: ProgressEvent): boolean {
  if (e.kind !== 'step' || !e.step) return false;
  const prev = op.progress.get(e.step);
  if (prev && prev.phase === e.phase && prev.pages === e.pages && prev.rows === e.rows && prev.calls === e.calls) return false;
  op.progress.set(e.step, { phase: e.phase, pages: e.pages, rows: e.rows, calls: e.calls });
  op.version++;
  return true;
}

/** Steps done, pages fetched, and rows of the returned steps (not of steps that feed others). */
function counts(op: Operation): string {
  let done = 0, rows = 0, pages = 0;
  for (const [id, p] of op.progress) {
    if (p.phase === 'done') done++;
    pages += p.pages;
    if (op.returns.has(id)) rows += p.rows;
  }
  return `${done}/${op.steps} steps, ${pages} page${pages === 1 ? '' : 's'}, ${rows} row${rows === 1 ? '' : 's'}`;
}

function secs(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** The plain progress line of an operation with a sign (SPEC: `+ ~ = ! x ?`). */
export function opLine(op: Operation, sign: Sign, now: number): string {
  const h = op.handle;
  switch (sign) {
    case '+': return `+ ${h} started: ${op.steps} step${op.steps === 1 ? '' : 's'} in the background; poll wait(${h}) every 3-5 s, or cancel(${h})`;
    case '~': return `~ ${h} running: ${counts(op)}, ${secs(now - op.started)}; poll wait(${h}) again in 3-5 s`;
    case '=': return `= ${h} running, unchanged since the last poll: ${counts(op)}, ${secs(now - op.started)}; poll wait(${h}) again in 3-5 s`;
    case '!': return `! ${h} succeeded: ${counts(op)} in ${secs((op.ended ?? now) - op.started)}`;
    case 'x': return `x ${h} cancelled after ${counts(op)}`;
    case '?': return `? ${h} failed: ${op.errors[0] ? `${op.errors[0].code}: ${op.errors[0].message}` : 'unknown error'}`;
  }
}

/** The sign of a terminal state. */
export function terminalSign(state: OpState): Sign {
  return state === 'succeeded' ? '!' : state === 'cancelled' ? 'x' : state === 'failed' ? '?' : '~';
}

/** Tell every listener (SSE streams). */
export function notify(op: Operation, e: OpEvent): void {
  for (const l of [...op.listeners]) l(e);
}

/**
 * Drop terminal operations beyond the kept count (those that ended first go first, so an operation
 * that just ended is never dropped for older ones) or older than their TTL.
 */
export function trimOperations(ops: Map<string, Operation>, now: number): void {
  const terminal = [...ops.values()].filter((o) => o.state !== 'running').sort((a, b) => (a.ended ?? 0) - (b.ended ?? 0));
  const excess = terminal.length - TERMINAL_OPS_KEPT;
  terminal.forEach((o, i) => {
    if (i < excess || (o.ended !== undefined && now - o.ended > TERMINAL_OP_TTL_MS)) ops.delete(o.handle);
  });
}
