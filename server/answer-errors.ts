/**
 * The one place where failures become answers: errors in the shape of the route (the negotiated
 * format under /execute, JSON elsewhere), and a thrown value turned into one, with a request id;
 * an unexpected failure is logged for the operator and never shown to the client (no stack trace,
 * no secret), and a client that went away gets no answer at all.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestUrl } from '../common/request-target.js';
import { svcError, SvcFailure, type SvcError } from '../common/errors.js';
import type { Logger } from '../common/log.js';
import { negotiate } from './http/negotiate.js';
import { canonicalPath } from './http/router.js';
import { sendErrors, sendFormattedErrors } from './http/respond.js';

/** Execute routes answer errors in the negotiated format; decided on the canonical path. */
function isExecutePath(pathname: string): boolean {
  const p = canonicalPath(pathname);
  return p !== undefined && (p === '/execute' || p.startsWith('/execute/'));
}

/** Errors in the shape of the route: the negotiated format under /execute (JSON when none fits), JSON elsewhere. */
export function answerErrors(
  req: IncomingMessage,
  res: ServerResponse,
  url: RequestUrl,
  errors: SvcError[],
  headers: Record<string, string> = {},
): void {
  if (isExecutePath(url.pathname)) sendFormattedErrors(res, errors, negotiate(req.headers.accept) ?? 'json', headers);
  else sendErrors(res, errors, headers);
}

/**
 * The answer to a value thrown while handling a request: a SvcFailure's errors, or `internal_error`
 * (the details go to the log). `n` numbers the request id when the client sent none.
 */
export function answerFailure(
  req: IncomingMessage,
  res: ServerResponse,
  url: RequestUrl,
  e: unknown,
  n: number,
  logger: Logger,
): void {
  const where = { req: requestId(req, n), method: req.method, path: shortPath(url.pathname) };
  if (!(e instanceof SvcFailure) && clientGone(req, res, e)) {
    // Not a failure of ours: the client hung up or node's request timeout ended the upload.
    logger.info(
      `client closed the connection during ${req.method} ${where.path} (${(e as NodeJS.ErrnoException)?.code ?? 'aborted'})`,
      where,
    );
    return;
  }
  const errors: SvcError[] =
    e instanceof SvcFailure
      ? e.errors
      : [
          svcError('internal_error', 'the server failed on this request', {
            hint: `this is a bug in svc; the server log has the details (request ${where.req})`,
          }),
        ];
  if (!(e instanceof SvcFailure))
    logger.error(`internal error on ${req.method} ${where.path}: ${(e as Error)?.stack ?? String(e)}`, where);
  // The rest of a body over the limit is never read: the connection cannot be reused.
  const headers: Record<string, string> = {
    'x-request-id': where.req,
    ...(errors[0]?.code === 'body_too_large' ? { connection: 'close' } : {}),
    // A shared store that is away usually comes back within seconds.
    ...(errors[0]?.code === 'store_unavailable' ? { 'retry-after': '2' } : {}),
  };
  answerErrors(req, res, url, errors, headers);
}

/**
 * True when a failure only means the client went away (hang-up, reset, node's request timeout).
 * Not `req.destroyed` alone: node destroys a request once its whole body is read, so a throw
 * after that (while running or rendering) would be taken for a hang-up and never answered.
 */
function clientGone(req: IncomingMessage, res: ServerResponse, e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException | null)?.code;
  const socket = req.socket as IncomingMessage['socket'] | null;
  return (
    (req.destroyed && !req.complete) ||
    !socket ||
    socket.destroyed ||
    res.destroyed ||
    code === 'ECONNRESET' ||
    code === 'ERR_STREAM_PREMATURE_CLOSE' ||
    (e as Error | null)?.message === 'aborted'
  );
}

/** The id of a request in log lines and error answers: the client's `x-request-id` when it is a short token, else `r<n>`. */
function requestId(req: IncomingMessage, n: number): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && /^[A-Za-z0-9._-]{1,64}$/.test(given) ? given : `r${n}`;
}

/** A request path as a log line shows it: at most 200 characters. */
function shortPath(p: string): string {
  return p.length > 200 ? `${p.slice(0, 200)}…` : p;
}
