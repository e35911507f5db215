/**
 * Continuing a paginated result (what a `pgN` handle holds): rows buffered beyond the program's
 * limit first, then the next vendor page from the stored cursor. Never throws for a vendor failure.
 */
import { svcError, type SvcError } from '../common/errors.js';
import type { Entity } from '../pack/cgs.js';
import type { Registry } from '../pack/registry.js';
import { RunAbort } from './call.js';
import { cancelledBy } from './cancel.js';
import { Cancel } from './signal.js';
import { project, type Row } from './decode.js';
import { budgetOf, callContext, credentialProblem, RUNTIME_DEFAULTS, type ExecuteOptions } from './execute-options.js';
import { fetchRows, type Fetched, type PageState } from './fetch-rows.js';
import { limiter } from './limiter.js';
import { attachNests } from './nest.js';

type Continued = { rows: Row[]; total?: number; page?: PageState; error?: SvcError };

/** Continue a paginated result: fetch the next page described by `state`. */
export async function continuePage(
  state: PageState,
  registry: Registry,
  opts: ExecuteOptions = {},
): Promise<Continued> {
  const entry = registry.get(state.api);
  const cap = registry.capability(state.api, state.capability);
  if (!entry || !cap || entry.cgs_hash !== state.cgs_hash) {
    return {
      rows: [],
      error: svcError('catalog_mismatch', `the catalog ${state.api} changed since this page handle was minted`, {
        hint: 'run the program again',
      }),
    };
  }
  const entity: Entity = registry.entity(state.api, cap.entity)!;
  const ctx = callContext(opts, opts.env ?? process.env);
  const missing = credentialProblem(ctx, entry);
  if (missing) return { rows: [], error: missing };
  if (state.last && !state.buffer?.length) return { rows: [] };
  const controller = new Cancel();
  const timer = setTimeout(
    () => controller.abort(new RunAbort('deadline_exceeded')),
    opts.deadlineMs ?? RUNTIME_DEFAULTS.deadlineMs,
  );
  const detach = cancelledBy(controller, opts);
  const budget = budgetOf(opts);
  /** Attach the nested relations to `rows` (in place); the error of a nest that failed. */
  const attach = async (rows: Row[]): Promise<SvcError | undefined> => {
    if (!state.nest?.length) return undefined;
    const nc = {
      ctx,
      registry,
      entry: (api: string) => registry.get(api),
      api: state.api,
      limit: limiter(RUNTIME_DEFAULTS.concurrency),
      signal: controller,
      ...(budget ? { budget } : {}),
    };
    return (await attachNests(nc, rows, state.nest)).error;
  };
  let f: Fetched;
  try {
    if (state.buffer?.length) {
      // Rows the vendor sent beyond the program's limit come first; the vendor cursor is unchanged.
      const { buffer, ...rest } = state;
      const failed = await attach(buffer);
      if (failed) return { rows: [], error: failed };
      const out: Continued = { rows: project(buffer, state.projection) };
      if (state.total !== undefined) out.total = state.total;
      if (!state.last) out.page = { ...rest, fetched: state.fetched + buffer.length };
      return out;
    }
    f = await fetchRows(ctx, entry, entity, cap, state.values, {
      from: state.cursor,
      size: state.size,
      fetchedBefore: state.fetched,
      ...(state.sort ? { sort: state.sort } : {}),
      signal: controller,
      ...(budget ? { budget } : {}),
    });
    if (!f.error) {
      const failed = await attach(f.rows);
      if (failed) f.error = failed;
    }
  } finally {
    clearTimeout(timer);
    detach();
  }
  const out: Continued = { rows: project(f.rows, state.projection) };
  if (f.error) out.error = f.error;
  const total = f.total ?? state.total;
  if (total !== undefined) out.total = total;
  if (f.next)
    out.page = {
      ...state,
      cursor: f.next,
      fetched: state.fetched + f.rows.length,
      ...(total !== undefined ? { total } : {}),
    };
  return out;
}
