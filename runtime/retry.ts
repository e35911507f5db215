/** Retry policy for idempotent reads: which failures retry, and how long to wait (pure). */
import { abortReason, type CancelSignal } from './signal.js';

export interface RetryPolicy {
  /** Retries after the first attempt. */
  retries: number;
  /** First backoff in ms; doubled per attempt, with full jitter. */
  baseDelayMs: number;
  /** Cap of one wait, also of a Retry-After the vendor asks for. */
  maxDelayMs: number;
  /** Total time budget for waiting between attempts. */
  budgetMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { retries: 3, baseDelayMs: 100, maxDelayMs: 5_000, budgetMs: 10_000 };

export const RETRY_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504]);

/** Connection-level failures worth a retry (the request may not have reached the vendor). */
export function isResetError(e: unknown): boolean {
  const code = (e as { code?: string } | null)?.code;
  return (
    code === 'ECONNRESET' ||
    code === 'EPIPE' ||
    code === 'UND_ERR_SOCKET' ||
    code === 'UND_ERR_CLOSED' ||
    code === 'ECONNREFUSED' ||
    code === 'ETIMEDOUT'
  );
}

/** Seconds or an HTTP date, as ms from `now`; undefined when absent or unparsable. */
export function retryAfterMs(header: string | undefined, now: number): number | undefined {
  if (!header) return undefined;
  const s = header.trim();
  if (/^\d+(\.\d+)?$/.test(s)) return Math.round(Number(s) * 1000);
  const t = Date.parse(s);
  return Number.isNaN(t) ? undefined : Math.max(0, t - now);
}

/** The wait before retry number `attempt` (0-based), honouring Retry-After when given. */
export function backoffMs(
  policy: RetryPolicy,
  attempt: number,
  retryAfter: number | undefined,
  random: () => number = Math.random,
): number {
  if (retryAfter !== undefined) return Math.min(policy.maxDelayMs, retryAfter);
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  return Math.round(random() * ceiling);
}

/** Sleep that ends early (rejecting) when the signal aborts. */
export function sleep(ms: number, signal?: CancelSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortReason(signal));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal!));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
