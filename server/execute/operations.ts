/**
 * Background operations as data: folding runtime progress into an operation's descriptor, its
 * progress line for each sign (SPEC: `+ ~ = ! x ?`), the event to push to listeners, and trimming
 * ended operations. Pure: the live run is in background.ts, the descriptors in session state.
 */
import type { ProgressEvent } from '../../runtime/progress.js';
import { SESSION_HOLDS, type OpDescriptor, type OpState } from './state.js';
import type { OpMeta } from './outcome.js';

export type Sign = '+' | '~' | '=' | '!' | 'x' | '?';

/** Terminal operations kept per session (oldest dropped first). */
export const TERMINAL_OPS_KEPT = SESSION_HOLDS.maxTerminalOps;
/** A terminal operation is kept at most this long after it ended. */
export const TERMINAL_OP_TTL_MS = SESSION_HOLDS.terminalOpTtlMs;

/** What listeners (SSE, MCP notifications) get: a progress line, or the terminal one. */
export interface OpEvent {
  kind: 'progress' | 'terminal';
  line: string;
}

/** Fold a runtime progress event into the operation; true when something changed. */
export function applyProgress(op: OpDescriptor, e: ProgressEvent): boolean {
  if (e.kind !== 'step' || !e.step) return false;
  const prev = op.progress[e.step];
  if (prev && prev.phase === e.phase && prev.pages === e.pages && prev.rows === e.rows && prev.calls === e.calls)
    return false;
  op.progress[e.step] = { phase: e.phase, pages: e.pages, rows: e.rows, calls: e.calls };
  op.version++;
  return true;
}

/** What an operation's progress says now: its counts and its running line. */
export interface ProgressNow {
  counts: string;
  line: string;
}

/** The counts and running line of an operation. */
export function progressNow(op: OpDescriptor, now: number): ProgressNow {
  return { counts: counts(op), line: opLine(op, '~', now) };
}

/** The `progress` event for `p` unless its counts are those last pushed (`notified`, updated). */
export function newCounts(p: ProgressNow, notified: { counts?: string }): OpEvent | undefined {
  if (p.counts === notified.counts) return undefined;
  notified.counts = p.counts;
  return { kind: 'progress', line: p.line };
}

/** Steps done, pages fetched, and rows of the returned steps (not of steps that feed others). */
function counts(op: OpDescriptor): string {
  let done = 0,
    rows = 0,
    pages = 0;
  const returned = new Set(op.returns);
  for (const [id, p] of Object.entries(op.progress)) {
    if (p.phase === 'done') done++;
    pages += p.pages;
    if (returned.has(id)) rows += p.rows;
  }
  return `${done}/${op.steps} steps, ${pages} page${pages === 1 ? '' : 's'}, ${rows} row${rows === 1 ? '' : 's'}`;
}

function secs(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** The plain progress line of an operation with a sign (SPEC: `+ ~ = ! x ?`). */
export function opLine(op: OpDescriptor, sign: Sign, now: number): string {
  const h = op.handle;
  if (op.awaited && sign === '+')
    return `+ ${h} started: ${op.steps} step${op.steps === 1 ? '' : 's'}; the answer comes when it ends`;
  if (op.awaited && (sign === '~' || sign === '=')) return `~ ${h} running: ${counts(op)}, ${secs(now - op.started)}`;
  switch (sign) {
    case '+':
      return `+ ${h} started: ${op.steps} step${op.steps === 1 ? '' : 's'} in the background; poll wait(${h}) every 3-5 s, or cancel(${h})`;
    case '~':
      return `~ ${h} running: ${counts(op)}, ${secs(now - op.started)}; poll wait(${h}) again in 3-5 s`;
    case '=':
      return `= ${h} running, unchanged since the last poll: ${counts(op)}, ${secs(now - op.started)}; poll wait(${h}) again in 3-5 s`;
    case '!':
      return `! ${h} succeeded: ${counts(op)} in ${secs((op.ended ?? now) - op.started)}`;
    case 'x':
      return `x ${h} cancelled after ${counts(op)}`;
    case '?':
      return `? ${h} failed: ${op.errors[0] ? `${op.errors[0].code}: ${op.errors[0].message}` : 'unknown error'}`;
  }
}

/** The sign of a terminal state. */
export function terminalSign(state: OpState): Sign {
  return state === 'succeeded' ? '!' : state === 'cancelled' ? 'x' : state === 'failed' ? '?' : '~';
}

/** `_meta.svc.op` of an operation (outcome.ts OpMeta). */
export function opMeta(op: OpDescriptor, sign: Sign, line: string): OpMeta {
  return { n: op.handle, '~': sign, s: op.state, l: line, ...(op.run_id ? { r: op.run_id } : {}) };
}

/**
 * Drop terminal operations beyond the kept count (those that ended first go first, so an operation
 * that just ended is never dropped for older ones) or older than their TTL.
 */
export function trimOperations(ops: Map<string, OpDescriptor>, now: number): void {
  const terminal = [...ops.values()]
    .filter((o) => o.state !== 'running')
    .sort((a, b) => (a.ended ?? 0) - (b.ended ?? 0));
  const excess = terminal.length - TERMINAL_OPS_KEPT;
  terminal.forEach((o, i) => {
    if (i < excess || (o.ended !== undefined && now - o.ended > TERMINAL_OP_TTL_MS)) ops.delete(o.handle);
  });
}
