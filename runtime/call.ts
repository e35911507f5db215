/**
 * One vendor call with everything around it: auth, per-request timeout, bounded retries for
 * idempotent reads, one token refresh on 401, and vendor failures turned into structured errors.
 * Never throws for a vendor failure; the error it returns carries no secret and no query string.
 */
import { svcError, type ErrorCode, type SvcError } from '../common/errors.js';
import type { Capability } from '../pack/cgs.js';
import type { RegistryEntry } from '../pack/registry.js';
import { type AuthResolver, TokenError } from './auth.js';
import type { Caller } from './credentials/types.js';
import {
  BodyTooLarge,
  headerOf,
  RequestTimeout,
  type HttpClient,
  type HttpRequest,
  type HttpResponse,
} from './http-client.js';
import { backoffMs, isResetError, retryAfterMs, RETRY_STATUSES, sleep, type RetryPolicy } from './retry.js';
import type { CancelSignal } from './signal.js';

export interface CallContext {
  http: HttpClient;
  auth: AuthResolver;
  /** Who the run's vendor calls are made for (their credentials are resolved for it). */
  caller: Caller;
  requestTimeoutMs: number;
  maxBodyBytes: number;
  retry: RetryPolicy;
  now: () => number;
  random: () => number;
}

/** The hint of a waited run's `deadline_exceeded`. */
export const DEADLINE_HINT = 'narrow the program, or run it in the background';
/** The hint of a background run's `deadline_exceeded`: it is in the background already. */
export const BACKGROUND_DEADLINE_HINT =
  'narrow the program (filters, a smaller limit=, fewer statements), or split it into several runs';

/**
 * Why a run's signal was aborted: the caller cancelled, or the overall deadline passed (`hint`
 * says what to do about it, which depends on how the run was started).
 */
export class RunAbort extends Error {
  constructor(
    readonly code: 'cancelled' | 'deadline_exceeded',
    readonly hint = DEADLINE_HINT,
  ) {
    super(code);
  }
}

/** `sent` counts the HTTP requests made (retries and a token-refresh resend included). */
export type CallResult = { ok: true; res: HttpResponse; sent: number } | { ok: false; error: SvcError; sent: number };

/** Send `req` (built from `cap`) to the vendor of `entry`. `idempotent` enables retries. */
export async function callVendor(
  ctx: CallContext,
  entry: RegistryEntry,
  cap: Capability,
  req: HttpRequest,
  idempotent: boolean,
  signal: CancelSignal,
): Promise<CallResult> {
  const what = `${cap.http.method} ${cap.http.path}`;
  let attempts = 0;
  let sent = 0;
  let refreshed = false;
  let waited = 0;
  const auth = entry.cgs.auth;
  const resolved = auth.scheme === 'none' ? undefined : ctx.auth.source(entry.entry_id, auth, ctx.caller);
  if (resolved && 'code' in resolved) return { ok: false, sent: 0, error: resolved };
  const source = resolved;
  const tls = ctx.auth.tls(entry.entry_id);
  for (;;) {
    attempts++;
    sent++;
    // A client that times requests out itself needs no signal of its own per attempt; a token
    // fetch (OAuth2, no valid token cached) is bounded by the attempt's signal, so it gets one.
    const own = ctx.http.timeouts === true && !(source && ctx.auth.mayFetch(source));
    const attempt = own ? undefined : attemptSignal(signal, ctx.requestTimeoutMs);
    const both = attempt?.signal ?? signal;
    let res: HttpResponse | undefined;
    let failure: CallResult | undefined;
    let usedToken: string | undefined;
    let timedOut = false;
    try {
      // Without vendor auth the request goes as built (auth writes into a copy, never into `req`).
      const outgoing: HttpRequest = source ? { ...req, headers: { ...req.headers } } : req;
      if (source)
        usedToken = await ctx.auth.apply(source, auth as Exclude<typeof auth, { scheme: 'none' }>, outgoing, both);
      res = await ctx.http.request(outgoing, {
        signal: both,
        maxBodyBytes: ctx.maxBodyBytes,
        ...(own ? { timeoutMs: ctx.requestTimeoutMs } : {}),
        ...(tls ? { tls } : {}),
      });
    } catch (e) {
      if (signal.aborted) return { ok: false, sent, error: abortError(signal, what) };
      timedOut = attempt ? attempt.timedOut() : e instanceof RequestTimeout;
      if (timedOut)
        failure = fail(
          'vendor_timeout',
          `${what} got no answer within ${ctx.requestTimeoutMs} ms`,
          'the vendor is slow; narrow the request (filters, limit) or try again later',
        );
      else if (e instanceof BodyTooLarge)
        return fail(
          'vendor_body_too_large',
          `${what} answered with more than ${e.limit} bytes`,
          'narrow the request with filters or a smaller limit',
        );
      else if (e instanceof TokenError)
        return fail(
          'vendor_auth_failed',
          `the OAuth2 token endpoint of \`${entry.entry_id}\` answered ${e.status}`,
          `check the client credentials in ${source?.from ?? 'the credentials'}`,
        );
      // Agent-facing: the entry, never its URL (which may carry a credential, and is the operator's business).
      else
        failure = fail(
          'vendor_unreachable',
          `${what} failed: ${connectionProblem(e)}`,
          `check that the backend of \`${entry.entry_id}\` is up; the operator can point it elsewhere with --backend ${entry.entry_id}=<url>`,
        );
      if (!idempotent || !(isResetError(e) || timedOut)) return failure;
    } finally {
      attempt?.done();
    }
    if (res) {
      if (res.status === 401 && source && ctx.auth.refreshable(source) && !refreshed) {
        refreshed = true;
        ctx.auth.invalidate(source, usedToken);
        attempts--;
        continue;
      }
      if (res.status < 300) return { ok: true, res, sent };
      failure = {
        ok: false,
        sent,
        error: vendorError(entry, cap, res, ctx.auth.secretValues(source), source?.from),
      };
      if (!idempotent || !RETRY_STATUSES.has(res.status)) return failure;
    }
    if (attempts > ctx.retry.retries) return failure!;
    const wait = backoffMs(
      ctx.retry,
      attempts - 1,
      retryAfterMs(res && headerOf(res, 'retry-after'), ctx.now()),
      ctx.random,
    );
    if (waited + wait > ctx.retry.budgetMs) return failure!;
    waited += wait;
    try {
      await sleep(wait, signal);
    } catch {
      return { ok: false, sent, error: abortError(signal, what) };
    }
  }

  function fail(code: ErrorCode, message: string, hint: string): CallResult {
    return { ok: false, sent, error: svcError(code, message, { hint }) };
  }
}

/**
 * The signal of one attempt: aborted by the run's signal or after `timeoutMs`. One controller and
 * one timer, released by `done()` (cheaper than AbortSignal.timeout + AbortSignal.any per call).
 */
function attemptSignal(
  parent: CancelSignal,
  timeoutMs: number,
): { signal: AbortSignal; timedOut(): boolean; done(): void } {
  const c = new AbortController();
  let timedOut = false;
  const onParent = () => c.abort(parent.reason);
  if (parent.aborted) onParent();
  else parent.addEventListener('abort', onParent, { once: true });
  const timer = setTimeout(() => {
    timedOut = true;
    c.abort(new DOMException('the vendor request timed out', 'TimeoutError'));
  }, timeoutMs);
  return {
    signal: c.signal,
    timedOut: () => timedOut,
    done: () => {
      clearTimeout(timer);
      parent.removeEventListener('abort', onParent);
    },
  };
}

function abortError(signal: CancelSignal, what: string): SvcError {
  const reason = signal.reason instanceof RunAbort ? signal.reason : undefined;
  return reason?.code === 'deadline_exceeded'
    ? svcError('deadline_exceeded', `the run passed its deadline during ${what}`, { hint: reason.hint })
    : svcError('cancelled', `cancelled during ${what}`, { hint: 'nothing more was sent after the cancel' });
}

function connectionProblem(e: unknown): string {
  const code = (e as { code?: string } | null)?.code;
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'UND_ERR_CLOSED') return 'connection reset';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host not found';
  return code ? code.toLowerCase().replace(/^und_err_/, '') : 'network error';
}

/** Bytes of a vendor error body an excerpt is taken from, and characters of the excerpt. */
export const EXCERPT_WINDOW_BYTES = 4096;
export const EXCERPT_CHARS = 200;

/**
 * A short excerpt of the vendor's error message with every secret of `secrets` replaced by `***`.
 * Redaction comes before every cut: the body is decoded past the window by the longest secret
 * form, so a secret straddling the window's end is whole when it is redacted, and what might be
 * the start of a secret cut by the decode is dropped; the 200-character cut comes last.
 */
export function vendorMessage(res: HttpResponse, secrets: string[] = []): string {
  const longest = secretForms(secrets).reduce((n, f) => Math.max(n, Buffer.byteLength(f)), 0);
  const end = Math.min(res.body.length, EXCERPT_WINDOW_BYTES + longest);
  const text = res.body.toString('utf8', 0, end);
  let msg: unknown;
  try {
    const j = JSON.parse(text) as Record<string, unknown>;
    const err = j.error as Record<string, unknown> | string | undefined;
    const errs = Array.isArray(j.errors) ? (j.errors[0] as Record<string, unknown> | undefined) : undefined;
    msg = j.message ?? (typeof err === 'string' ? err : err?.message) ?? j.detail ?? j.title ?? errs?.message;
  } catch {
    const whole = redact(text, secrets);
    // A secret cut by the decode is not redacted: drop the tail it could be in.
    msg = end < res.body.length && longest > 0 ? whole.slice(0, Math.max(0, whole.length - longest)) : whole;
  }
  const s = typeof msg === 'string' ? redact(msg, secrets) : '';
  // eslint-disable-next-line no-control-regex -- control characters are what is replaced
  const clean = s.replace(/[\u0000-\u001f]+/g, ' ').trim();
  return clean.length > EXCERPT_CHARS ? clean.slice(0, EXCERPT_CHARS - 3) + '...' : clean;
}

/** The forms a secret may take in a vendor's answer: as is, URL-encoded, JSON-escaped. Longest first. */
function secretForms(secrets: string[]): string[] {
  const forms = new Set<string>();
  for (const s of secrets) {
    if (s.length < 4) continue;
    forms.add(s).add(encodeURIComponent(s)).add(JSON.stringify(s).slice(1, -1));
  }
  return [...forms].sort((a, b) => b.length - a.length);
}

/** Replace every secret (as is, URL-encoded or JSON-escaped) by `***`. */
export function redact(text: string, secrets: string[]): string {
  let out = text;
  for (const form of secretForms(secrets)) out = out.split(form).join('***');
  return out;
}

function vendorError(
  entry: RegistryEntry,
  cap: Capability,
  res: HttpResponse,
  secrets: string[],
  from: string | undefined,
): SvcError {
  const excerpt = vendorMessage(res, secrets);
  const message = `${entry.entry_id} answered ${res.status} to ${cap.name} (${cap.http.method} ${cap.http.path})${excerpt ? `: ${excerpt}` : ''}`;
  return svcError('vendor_error', message, {
    hint: vendorHint(entry, cap, res.status, excerpt, from),
    cause: String(res.status),
  });
}

function vendorHint(
  entry: RegistryEntry,
  cap: Capability,
  status: number,
  excerpt: string,
  from: string | undefined,
): string {
  if (status === 400 || status === 422) {
    const named = cap.params.find((p) => new RegExp(`\\b${p.name}\\b`).test(excerpt));
    if (named?.type === 'enum')
      return `the vendor rejected \`${named.name}\`: allowed values ${named.values.join(', ')}`;
    if (named) return `the vendor rejected \`${named.name}\`; check its value against the teaching table`;
    return 'the vendor rejected the arguments; check them against the teaching table';
  }
  if (status === 401 || status === 403) {
    return from
      ? `the vendor refused the credentials from ${from}`
      : 'the vendor wants credentials the catalog does not declare';
  }
  if (status >= 300 && status < 400)
    return `the vendor redirected (not followed); point the backend of ${entry.entry_id} at the final address`;
  if (status === 404)
    return cap.id_param ? `no such row: check the \`${cap.id_param}\` value` : 'the vendor has no such resource';
  if (status === 409) return 'the vendor reports a conflict with its current state; read the row again';
  if (status === 429) return 'the vendor is rate limiting; try again later';
  if (status >= 500) return 'the vendor failed; try again later';
  return 'see the vendor message';
}
