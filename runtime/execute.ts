/**
 * Executing a plan against the vendor APIs: the checks before any call (writes only when
 * accepted, catalogs pinned by hash, secrets present), then one `Run` (run.ts: steps in
 * dependency order, bounded concurrency and fan-out, cooperative cancellation and an overall
 * deadline). Never throws for a vendor failure: errors come back per step. Continuing a
 * paginated result is continue-page.ts.
 */
import { svcError, type SvcError } from '../common/errors.js';
import type { Registry, RegistryEntry } from '../pack/registry.js';
import type { Plan } from '../compiler/plan.js';
import { callContext, credentialProblem, type ExecuteOptions } from './execute-options.js';
import { Run } from './run.js';
import type { RunResult } from './run-result.js';

export { RUNTIME_DEFAULTS, defaultHttpClient } from './execute-options.js';
export type { ExecuteOptions } from './execute-options.js';
export type { StepResult, ReturnedRows, RunResult } from './run-result.js';
export { continuePage } from './continue-page.js';

/**
 * Run a validated plan.
 * @example const run = await executePlan(compiled.plan, registry, { accepted: false });
 */
export async function executePlan(plan: Plan, registry: Registry, opts: ExecuteOptions = {}): Promise<RunResult> {
  const now = opts.now ?? Date.now;
  const started = now();
  const refuse = (e: SvcError): RunResult => ({ status: 'failed', steps: {}, returns: [], errors: [e], elapsed_ms: 0 });
  const writes = plan.steps.filter((s) => s.effect === 'write');
  if (writes.length && !opts.accepted) {
    return refuse(
      svcError(
        'write_not_accepted',
        `the plan changes vendor data (${writes.map((s) => s.capability).join(', ')}) and was not accepted`,
        { hint: 'dry-run it first and run it with its pcN, or with force' },
      ),
    );
  }
  const entries = new Map<string, RegistryEntry>();
  for (const s of plan.steps) {
    const e = registry.get(s.api);
    if (!e || e.cgs_hash !== s.cgs_hash) {
      return refuse(
        svcError(
          'catalog_mismatch',
          `step ${s.id} was compiled against ${s.api} ${s.cgs_hash.slice(0, 12)}, the server holds ${e ? e.cgs_hash.slice(0, 12) : 'no such catalog'}`,
          { hint: 'refresh the context (svc context --new) and compile the program again' },
        ),
      );
    }
    entries.set(s.api, e);
  }
  const ctx = callContext(opts, opts.env ?? process.env);
  for (const e of entries.values()) {
    const missing = credentialProblem(ctx, e);
    if (missing) return refuse(missing);
  }
  const run = new Run(plan, registry, entries, ctx, opts, started);
  return run.execute();
}
