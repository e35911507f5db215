/**
 * A program on a session found early (`ExecuteService.find(key, tenant, true)` on a store that can
 * `peek`): `s` is the version this process holds and `current` says, a moment later, whether it
 * was still the stored one (asked by `confirm`, once the run's vendor request is on its way). A
 * waited clean read runs on it at once, and its run is written (and answered) only once `current`
 * resolved true; anything else asks at once and waits for `current` first. When it
 * resolves false the run is stopped, its answer dropped, and the program runs on the session read
 * again: a read never answers from a version older than the request, and nothing is done twice.
 */
import type { SvcError } from '../../common/errors.js';
import { defaultHttpClient } from '../../runtime/execute.js';
import type { HttpClient } from '../../runtime/http-client.js';
import type { Found } from './find-session.js';
import type { Outcome } from './outcome.js';
import type { ProgramRequest, RunRequest } from './request.js';
import { checkPins, cleanRead, type Compiled } from './session-compile.js';
import type { SessionState } from './state.js';

/** Thrown by a run whose early-found session turned out not current (the program runs again). */
export const NOT_CURRENT = new Error('the session version this run used was not current');

/** The steps of the execute core a program on an early-found session goes through. */
export interface EarlySteps {
  compiled(s: SessionState, program: string): Compiled;
  /** A compiled plan through `read_only`, the gate and the run, as `programOn` sends it. */
  run(s: SessionState, c: Extract<Compiled, { kind: 'plan' }>, req: ProgramRequest & RunRequest): Promise<Outcome>;
  /** The program on `s` as found (no early read). */
  programOn(s: SessionState, req: ProgramRequest, stale?: SvcError): Promise<Outcome>;
  /** The program on the session read again. */
  again(s: SessionState, req: ProgramRequest): Promise<Outcome>;
}

export async function programEarly(
  steps: EarlySteps,
  s: SessionState,
  req: ProgramRequest,
  found: Omit<Found, 'session'>,
): Promise<Outcome> {
  const { stale, current, release = noop, confirm = noop } = found;
  if (!current) return steps.programOn(s, req, stale); // found as the store holds it
  // However the program ends, the claim a current version came with is not held past it (release is idempotent).
  try {
    const c = stale ? undefined : steps.compiled(s, req.program);
    const early = c?.kind === 'plan' && cleanRead(c.review) && req.plan_commit_ref === undefined;
    if (!early || !(req.mode === 'auto' || (req.mode === 'live' && req.wait))) {
      // Not run early: ask now, and release before running (the claim is not needed).
      confirm();
      const ok = await current;
      release();
      return ok ? await steps.programOn(s, req, stale) : await steps.again(s, req);
    }
    // A version found not current stops the run at once: its answer would be dropped.
    const dropped = new AbortController();
    void current.then((ok) => ok || dropped.abort());
    const signal = req.signal ? AbortSignal.any([req.signal, dropped.signal]) : dropped.signal;
    try {
      checkPins(s, c.plan);
      return await steps.run(s, c, { ...req, signal, current, confirm });
    } catch (e) {
      confirm();
      if (e !== NOT_CURRENT && (await current)) throw e;
      return await steps.again(s, req);
    }
  } finally {
    release();
  }
}

const noop = () => {};

/**
 * With `confirm`: the run's HTTP client (`http`, or the default), calling `confirm` once it
 * dispatched a request, after the immediates already queued: so after the request's write (undici
 * writes on a reused connection from an immediate).
 */
export function confirmingHttp(http: HttpClient | undefined, confirm?: () => void): { http?: HttpClient } {
  if (!confirm) return {};
  const inner = http ?? defaultHttpClient();
  return {
    http: {
      timeouts: inner.timeouts,
      request(r, o) {
        const p = inner.request(r, o);
        setImmediate(confirm);
        return p;
      },
      close: () => inner.close(),
    },
  };
}
