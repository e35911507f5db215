/**
 * Size limits of programs and plans. One constant serves the compiler (statements of a program,
 * steps of the plan it makes) and the resolved-plan route (steps of a plan sent by a client).
 */
import { svcError, type Span, type SvcError } from '../common/errors.js';

/** Most statements in a program, and most steps in a plan (`program_too_large` beyond). */
export const MAX_PROGRAM_STATEMENTS = 1000;

/** Default budget of vendor HTTP calls per program: a plan that may make more needs review. */
export const DEFAULT_MAX_VENDOR_CALLS = 200;

/** `program_too_large` with `message` (which gives the count and the limit). */
export function programTooLarge(message: string, span?: Span): SvcError {
  return svcError('program_too_large', message, {
    hint: `send at most ${MAX_PROGRAM_STATEMENTS} statements per program; split it into several programs, or use bindings and fan-out`,
    ...(span ? { span } : {}),
  });
}
