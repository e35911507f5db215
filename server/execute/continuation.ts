/**
 * A continuation statement of a program: `page(pgN)` fetches the next page of a handle
 * (pages.ts), `wait(oN)` and `cancel(oN)` follow or stop a background operation (background.ts).
 */
import { SvcFailure, type SvcError } from '../../common/errors.js';
import type { ContinuationStmt } from '../../compiler/ast.js';
import type { Registry } from '../../pack/registry.js';
import type { AuthResolver } from '../../runtime/auth.js';
import type { ExecuteOptions } from '../../runtime/execute.js';
import type { Background } from './background.js';
import { callerOf } from './caller.js';
import type { Outcome } from './outcome.js';
import { continuePageHandle } from './pages.js';
import type { SessionRepository } from './repository.js';
import type { ProgramRequest } from './request.js';
import { pollOnly } from './session-compile.js';
import type { SessionState } from './state.js';

export interface ContinueDeps {
  registry: () => Registry;
  repo: SessionRepository;
  runtime: ExecuteOptions & { auth: AuthResolver };
  background: Background;
}

/** What of a program request a continuation reads. */
export type ContinueRequest = Pick<ProgramRequest, 'signal' | 'pageRows' | 'who'>;

/**
 * On a stale session (a reload changed one of its catalogs) only a program that is `wait(oN)` or
 * `cancel(oN)` alone still runs: that statement; anything else fails with the staleness.
 */
export function staleContinuation(req: Pick<ProgramRequest, 'mode' | 'program'>, stale: SvcError): ContinuationStmt {
  const only = req.mode === 'plan' || req.mode === 'check' ? undefined : pollOnly(req.program);
  if (!only) throw new SvcFailure([stale]);
  return only;
}

/** Run continuation `c` of session `s`; a page fetch stops when `req.signal` aborts. */
export function runContinuation(
  deps: ContinueDeps,
  s: SessionState,
  c: ContinuationStmt,
  req: ContinueRequest,
): Promise<Outcome> {
  const { background } = deps;
  if (c.kind === 'wait') return background.wait(s, c.handle.text);
  if (c.kind === 'cancel') return background.cancel(s, c.handle.text);
  const caller = callerOf(deps.runtime.auth, s, req.who);
  return continuePageHandle(s, c, {
    registry: deps.registry(),
    repo: deps.repo,
    runtime: { ...deps.runtime, caller, ...(req.signal ? { signal: req.signal } : {}) },
    ...(req.pageRows !== undefined ? { maxRows: req.pageRows } : {}),
  });
}
