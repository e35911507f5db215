/**
 * Compiling a program for a session: from the plan cache when it holds the program (same text,
 * registry and symbols), else with the compiler (a compiler bug is logged and answered as
 * `internal_error`, never thrown at a caller); and the checks a compiled plan must pass in its
 * session (every catalog it uses is loaded there). Also what makes a plan a clean read.
 */
import { svcError, SvcFailure } from '../../common/errors.js';
import type { Logger } from '../../common/log.js';
import type { ContinuationStmt } from '../../compiler/ast.js';
import { compileProgram } from '../../compiler/compile.js';
import { parseProgram } from '../../compiler/parse.js';
import { planCatalogs, type Plan, type Review } from '../../compiler/plan.js';
import type { Registry } from '../../pack/registry.js';
import type { PlanCache } from './plan-cache.js';
import type { SessionState } from './state.js';

export type Compiled = ReturnType<typeof compileProgram>;

export interface CompileDeps {
  registry: Registry;
  plans: PlanCache;
  maxCalls: number;
  logger: Logger;
  /** Whether callers of a tenant may only read (their hints name no write). */
  readOnly?: ((tenant: string) => boolean) | undefined;
}

/** A program compiled for a session, from the plan cache when it holds it. */
export function compileInSession(deps: CompileDeps, s: SessionState, program: string): Compiled {
  const hit = deps.plans.get(s, program, deps.registry);
  if (hit) return { kind: 'plan', ...hit, diagnostics: [] };
  const c = compileSafely(deps, s, program);
  if (c.kind === 'plan')
    deps.plans.set(s, program, deps.registry, { plan: c.plan, commit_id: c.commit_id, review: c.review });
  return c;
}

/** compileProgram never throws on user input; should it fail anyway, that is logged and answered as internal_error. */
function compileSafely(deps: CompileDeps, s: SessionState, program: string): Compiled {
  try {
    return compileProgram(program, {
      registry: deps.registry,
      symbols: s.symbols,
      maxCalls: deps.maxCalls,
      ...(deps.readOnly?.(s.tenant) ? { readsOnly: true } : {}),
    });
  } catch (e) {
    deps.logger.error(
      `the compiler failed on a program of ${program.length} characters in session ${s.prompt_hash}/${s.session}: ${(e as Error)?.stack ?? String(e)}`,
    );
    return {
      kind: 'error',
      diagnostics: [
        svcError('internal_error', 'the compiler failed on this program', {
          hint: 'this is a bug in svc; the server log has the details',
        }),
      ],
    };
  }
}

/** `catalog_not_in_session` when the plan uses a catalog the session has not loaded. */
export function checkPins(s: SessionState, plan: Plan): void {
  for (const api of Object.keys(planCatalogs(plan))) {
    if (!s.pins.has(api))
      throw new SvcFailure([
        svcError('catalog_not_in_session', `the program uses catalog \`${api}\`, which this session has not loaded`, {
          hint: `add a seed of it to the session's context first, for example ${api}:<Entity>`,
        }),
      ]);
  }
}

/** A plan that runs with no review at all: verdict proceed, clean flow, no write. */
export function cleanRead(review: Review): boolean {
  return review.verdict === 'proceed' && review.flow === 'clean' && review.mutations === 0;
}

/** The `wait(oN)` or `cancel(oN)` a program consists of alone, if it is one (a stale session still runs those). */
export function pollOnly(program: string): ContinuationStmt | undefined {
  const parsed = parseProgram(program).program;
  const only = parsed?.statements.length === 1 ? parsed.statements[0] : undefined;
  return only && (only.kind === 'wait' || only.kind === 'cancel') ? only : undefined;
}
