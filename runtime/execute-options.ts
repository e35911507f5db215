/**
 * What a run (or a page continuation) is configured with, and what is built from it: the call
 * context of its vendor calls (HTTP client, auth, timeouts, retries, clock) and its call budget.
 */
import type { SvcError } from '../common/errors.js';
import type { RegistryEntry } from '../pack/registry.js';
import { AuthResolver, type Env } from './auth.js';
import type { CallContext } from './call.js';
import type { CancelSignal } from './signal.js';
import { NO_CALLER, type Caller } from './credentials/types.js';
import type { GraphView } from './graph.js';
import type { CallBudget } from './fetch-rows.js';
import { PooledHttpClient, type HttpClient } from './http-client.js';
import type { ProgressEvent } from './progress.js';
import { DEFAULT_RETRY, type RetryPolicy } from './retry.js';

export interface ExecuteOptions {
  /** Writes run only when the caller says the plan was accepted (review is the server's job). */
  accepted?: boolean;
  /** Cancels the run (the caller's: a client gone, a cancel). */
  signal?: CancelSignal;
  /** Cancels the run too (the server's shutdown): a second signal, without `AbortSignal.any` per run. */
  stop?: CancelSignal;
  /** Overall deadline of the run in ms (default 60 000). */
  deadlineMs?: number;
  /** A background run (wait=false): its `deadline_exceeded` does not suggest running in the background. */
  background?: boolean;
  /** Timeout of one vendor request in ms (default 15 000). */
  requestTimeoutMs?: number;
  /** Largest vendor response body in bytes (default 10 MiB). */
  maxBodyBytes?: number;
  /** Steps (and fan-out calls) in flight at once (default 8). */
  concurrency?: number;
  /**
   * Most vendor calls the run may send, across all its steps (one per page request and per
   * fan-out call; retries do not count). The call that would exceed it is not sent and its step
   * fails with `call_budget_exceeded`. Unset: no cap.
   */
  maxCalls?: number;
  retry?: RetryPolicy;
  /** Environment holding the secrets named by catalogs (default process.env). */
  env?: Env;
  http?: HttpClient;
  /** Reuse one resolver to keep OAuth2 tokens across runs (and to use a credentials file). */
  auth?: AuthResolver;
  /** Who the vendor calls are made for: credentials are resolved for this tenant and subject. */
  caller?: Caller;
  /**
   * The session graph (rows seen before, graph.ts); default: the run shares rows between its own
   * steps only; `false`: not even that (every get is sent, as a bare client would).
   */
  graph?: GraphView | false;
  onProgress?: (e: ProgressEvent) => void;
  /** Coalescing interval of running updates (default 2000 ms). */
  progressIntervalMs?: number;
  now?: () => number;
  random?: () => number;
}

export const RUNTIME_DEFAULTS = {
  deadlineMs: 60_000,
  requestTimeoutMs: 15_000,
  maxBodyBytes: 10 * 1024 * 1024,
  concurrency: 8,
} as const;

/** The call context of a run's vendor calls: the options' parts, or the defaults. */
export function callContext(opts: ExecuteOptions, env: Env): CallContext {
  const http = opts.http ?? defaultHttpClient();
  const now = opts.now ?? Date.now;
  return {
    http,
    auth: opts.auth ?? new AuthResolver(env, http, now),
    caller: opts.caller ?? NO_CALLER,
    requestTimeoutMs: opts.requestTimeoutMs ?? RUNTIME_DEFAULTS.requestTimeoutMs,
    maxBodyBytes: opts.maxBodyBytes ?? RUNTIME_DEFAULTS.maxBodyBytes,
    retry: opts.retry ?? DEFAULT_RETRY,
    now,
    random: opts.random ?? Math.random,
  };
}

let sharedHttp: HttpClient | undefined;
/** The process-wide keep-alive client used when none is passed. */
export function defaultHttpClient(): HttpClient {
  return (sharedHttp ??= new PooledHttpClient());
}

/** The call budget of a run (or a continuation), when `maxCalls` is set. */
export function budgetOf(opts: ExecuteOptions): CallBudget | undefined {
  return opts.maxCalls === undefined ? undefined : { max: Math.max(0, opts.maxCalls), used: 0 };
}

/** The problem of a caller without a credential for `entry` (checked before any request), if any. */
export function credentialProblem(ctx: CallContext, entry: RegistryEntry): SvcError | undefined {
  const s = ctx.auth.source(entry.entry_id, entry.cgs.auth, ctx.caller);
  return s && 'code' in s ? s : undefined;
}
