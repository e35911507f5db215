/**
 * The check of the program while it is typed (editor/live-check.ts runs it): compiled and
 * reviewed by the server, never run (api/svc.ts `checkProgram`), and a line saying what came of it.
 */
import { errorLine } from '../api/client.js';
import * as svc from '../api/svc.js';
import type { ExecError } from '../api/types.js';

export interface CheckResult {
  /** Diagnostics to show inline; null: leave what is shown. */
  errors: ExecError[] | null;
  /** What the check found, in words ('' for a blank program). */
  note: string;
  /** The program has problems. */
  bad: boolean;
}

export async function checkText(ref: svc.SessionRef, text: string, signal: AbortSignal): Promise<CheckResult> {
  if (!text.trim()) return { errors: [], note: '', bad: false };
  const a = await svc.checkProgram(ref, text, signal);
  const errors = a.body.errors ?? [];
  if (a.status === 400 && errors.length > 0) return { errors, note: problems(errors), bad: true };
  if (a.status === 200) return { errors: [], note: 'checked while typing: no problem found', bad: false };
  // A write of a read-only caller: refused for the whole program, not at a place in it.
  if (a.status === 403 && errors[0]?.code === 'read_only') return { errors: [], note: problems(errors), bad: true };
  return { errors: null, note: `not checked: ${errorLine(a)}`, bad: false };
}

/** `2 problems: projection_unknown_field at 1:12, unknown_argument at 2:4`. */
function problems(errors: ExecError[]): string {
  const where = (e: ExecError) =>
    e.line !== undefined ? `${e.code} at ${e.line}:${e.col}` : `${e.code}: ${e.message}`;
  const shown = errors.slice(0, 3).map(where).join(', ');
  const n = errors.length;
  return `${n} problem${n === 1 ? '' : 's'}: ${shown}${n > 3 ? ', …' : ''}`;
}
