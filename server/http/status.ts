/**
 * The HTTP status of every answer, in one place: the status of each error code, and of each kind
 * of outcome of the execute core (which knows no protocol).
 */
import { CODES, type ErrorCode, type SvcError } from '../../common/errors.js';
import type { Outcome } from '../execute/outcome.js';

/** The status of an error code. */
export function codeStatus(code: ErrorCode): number {
  return CODES[code].status;
}

/** The status of an error answer: the first error's. */
export function errorsStatus(errors: readonly SvcError[]): number {
  return codeStatus(errors[0]?.code ?? 'internal_error');
}

/**
 * The status of an execute outcome: a new session 201, a background run accepted 202, a report on
 * an operation 200 (its errors are what it reports), anything else 200, or the status of its
 * first error when it carries errors (a compile error, a failed run).
 */
export function outcomeStatus(o: Outcome): number {
  switch (o.kind) {
    case 'created': return 201;
    case 'started': return 202;
    case 'report': return 200;
    case 'result': return o.errors.length ? errorsStatus(o.errors) : 200;
  }
}
