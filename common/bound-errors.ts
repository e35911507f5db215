/**
 * Bounding a list of errors before anyone renders it: at most `MAX_SHOWN_ERRORS` entries, then
 * one `too_many_errors` entry saying how many more there are, and every message, hint and cause
 * cut to `MAX_ERROR_TEXT` characters. Every surface and the compiler facade go through it, so no
 * input, however bad, makes an answer grow past a fixed size per error.
 */
import { svcError, type SvcError } from './errors.js';

/** Errors shown in full; the rest are counted in one `too_many_errors` entry. */
export const MAX_SHOWN_ERRORS = 20;
/** Longest message, hint or cause of an error, in characters (longer ones end in `…`). */
export const MAX_ERROR_TEXT = 300;

const MORE = /^(\d+) more errors? not shown$/;

/** The `too_many_errors` entry for `n` errors left out (at `at`, the first one left out, when known). */
export function tooManyErrors(n: number, at?: SvcError): SvcError {
  return svcError('too_many_errors', `${n} more error${n === 1 ? '' : 's'} not shown`, {
    hint: 'fix the errors above and compile again',
    ...(at?.span ? { span: at.span } : {}),
  });
}

function clip(s: string): string {
  return s.length > MAX_ERROR_TEXT ? `${s.slice(0, MAX_ERROR_TEXT - 1)}…` : s;
}

function clipped(e: SvcError): SvcError {
  if (
    e.message.length <= MAX_ERROR_TEXT &&
    (e.hint?.length ?? 0) <= MAX_ERROR_TEXT &&
    (e.cause?.length ?? 0) <= MAX_ERROR_TEXT
  )
    return e;
  const out: SvcError = { ...e, message: clip(e.message) };
  if (e.hint !== undefined) out.hint = clip(e.hint);
  if (e.cause !== undefined) out.cause = clip(e.cause);
  return out;
}

/**
 * The first `max` errors (in the order given), each with its texts cut, plus one
 * `too_many_errors` entry when more were given or `hidden` more exist elsewhere (counted, never
 * built). Idempotent: a bounded list comes back the same, its summary count kept.
 *
 * @example boundErrors(fiveThousandDiagnostics) // 20 diagnostics + "4980 more errors not shown"
 */
export function boundErrors(errors: readonly SvcError[], hidden = 0, max = MAX_SHOWN_ERRORS): SvcError[] {
  const shown: SvcError[] = [];
  let more = hidden;
  let firstLeft: SvcError | undefined;
  for (const e of errors) {
    const counted = e.code === 'too_many_errors' ? MORE.exec(e.message) : null;
    if (counted) {
      more += Number(counted[1]);
      firstLeft ??= e;
    } else if (shown.length < max) {
      shown.push(clipped(e));
    } else {
      more++;
      firstLeft ??= e;
    }
  }
  if (more > 0) shown.push(tooManyErrors(more, firstLeft));
  return shown;
}
