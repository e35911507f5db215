/** Writing answers: JSON, problem+json, negotiated execute formats, and errors (one mapping). */
import type { ServerResponse } from 'node:http';
import { boundErrors } from '../../common/bound-errors.js';
import { CODES, type SvcError } from '../../common/errors.js';
import { CONTENT_TYPES, render, renderErrors, type Format } from './format.js';
import type { Outcome } from '../execute/outcome.js';
import { httpHints } from './hints.js';
import { errorJson } from '../execute/outcome-json.js';
import { errorsStatus, outcomeStatus } from './status.js';

/** The fixed namespace of problem types (RFC 9457); `.invalid` never resolves. */
export const PROBLEM_BASE = 'https://svc.invalid/problems';

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(body) + '\n', headers);
}

export function send(
  res: ServerResponse,
  status: number,
  type: string,
  body: string,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(status, {
    'content-type': type,
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

/**
 * The JSON error body: `{code, message, hint}` plus `errors` when there are several; bounded like
 * every rendered error list (`boundErrors`: 20 in full, then a `too_many_errors` count).
 */
export function errorBody(all: SvcError[]): Record<string, unknown> {
  const errors = boundErrors(all);
  const first = errors[0]!;
  const body: Record<string, unknown> = { code: first.code, message: first.message };
  if (first.hint) body.hint = first.hint;
  if (errors.length > 1) body.errors = errors.map(errorJson);
  return body;
}

/** An error answer on a JSON route. */
export function sendErrors(res: ServerResponse, errors: SvcError[], headers: Record<string, string> = {}): void {
  sendJson(res, errorsStatus(errors), errorBody(errors), headers);
}

/** An RFC 9457 problem document that also carries `code`, `message` and `hint`. */
export function sendProblem(res: ServerResponse, status: number, type: string, problem: SvcError): void {
  const e = boundErrors([problem])[0]!;
  const body = {
    type: `${PROBLEM_BASE}/${type}`,
    title: CODES[e.code].about,
    status,
    detail: e.message,
    code: e.code,
    message: e.message,
    ...(e.hint ? { hint: e.hint } : {}),
  };
  send(res, status, 'application/problem+json; charset=utf-8', JSON.stringify(body) + '\n');
}

/** An execute answer in the negotiated format. */
export function sendOutcome(res: ServerResponse, o: Outcome, format: Format, source?: string): void {
  const worded = o.errors.length ? { ...o, errors: httpHints(o.errors) } : o;
  send(res, outcomeStatus(o), CONTENT_TYPES[format], render(worded, format, source), idHeaders(o));
}

/** `svc-run-id` and `svc-commit-id` of a run, in every format (TOON and plain leave them out of a clean read's body). */
function idHeaders(o: Outcome): Record<string, string> {
  const h: Record<string, string> = {};
  if (typeof o.meta.run_id === 'string') h['svc-run-id'] = o.meta.run_id;
  if (typeof o.meta.commit_id === 'string') h['svc-commit-id'] = o.meta.commit_id;
  return h;
}

export function sendFormattedErrors(
  res: ServerResponse,
  errors: SvcError[],
  format: Format,
  headers: Record<string, string> = {},
): void {
  send(res, errorsStatus(errors), CONTENT_TYPES[format], renderErrors(httpHints(errors), format), headers);
}
