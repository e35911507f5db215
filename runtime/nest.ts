/**
 * Nested projections (`e6[id, customer[name], comments[id]]`): each relation is followed from every
 * row and its rows are attached to the row under the relation's name. Rows that share the related
 * key share one vendor call, so ten tickets of three customers cost three calls. A dangling
 * reference (the related row answers 404) attaches null. Never throws for a vendor failure.
 */
import { canonicalJson } from '../common/canonical.js';
import { svcError, type SvcError } from '../common/errors.js';
import type { PlanNest } from '../compiler/plan.js';
import type { JsonValue } from '../pack/cgs.js';
import type { Registry, RegistryEntry } from '../pack/registry.js';
import type { CallContext } from './call.js';
import { project, type Row } from './decode.js';
import { fetchRows, type CallBudget } from './fetch-rows.js';
import type { Limiter } from './limiter.js';
import { boundValuesProblem } from './check-values.js';
import type { Values } from './request.js';
import type { CancelSignal } from './signal.js';

export interface NestContext {
  ctx: CallContext;
  registry: Registry;
  /** The registry entry of each api the nests call (looked up by api). */
  entry: (api: string) => RegistryEntry | undefined;
  api: string;
  limit: Limiter;
  signal: CancelSignal;
  budget?: CallBudget;
}

export interface NestOutcome {
  calls: number;
  pages: number;
  error?: SvcError;
}

/** Attach every nest of `nests` to `rows` (in place); nested nests are attached to the related rows first. */
export async function attachNests(nc: NestContext, rows: Row[], nests: readonly PlanNest[]): Promise<NestOutcome> {
  const out: NestOutcome = { calls: 0, pages: 0 };
  // Nests of one level run side by side; each keeps its own calls in step with the others.
  const results = await Promise.all(nests.map((n) => attachOne(nc, rows, n)));
  for (const r of results) {
    out.calls += r.calls;
    out.pages += r.pages;
    out.error ??= r.error;
  }
  return out;
}

async function attachOne(nc: NestContext, rows: Row[], nest: PlanNest): Promise<NestOutcome> {
  const out: NestOutcome = { calls: 0, pages: 0 };
  const cap = nc.registry.capability(nc.api, nest.capability);
  const entity = nc.registry.entity(nc.api, nest.entity);
  const entry = nc.entry(nc.api);
  if (!cap || !entity || !entry) {
    out.error = svcError('catalog_mismatch', `the catalog ${nc.api} has no ${nest.entity} ${nest.capability}`, {
      hint: 'run the program again',
    });
    return out;
  }
  // One call per distinct argument set; a row without the key it follows gets nothing.
  const calls = new Map<string, { values: Values; rows: Row[] | null }>();
  const keyOf: Array<string | undefined> = rows.map((row) => {
    const values = valuesOf(nest, row, (p) => cap.params.find((x) => x.name === p)?.required ?? false);
    if (!values) return undefined;
    const key = canonicalJson(values);
    if (!calls.has(key)) calls.set(key, { values, rows: null });
    return key;
  });
  const bound = new Map<string, string>();
  for (const [name, arg] of Object.entries(nest.args)) if ('field' in arg) bound.set(name, `row.${arg.field}`);
  for (const c of calls.values()) {
    out.error ??= boundValuesProblem(`${nest.relation}[..]`, cap, c.values, bound);
    if (out.error) return out;
  }
  if (calls.size > nest.max) {
    out.error = svcError(
      'fanout_too_large',
      `${nest.relation}[..] would call ${cap.name} once for each of ${calls.size} distinct rows; the limit is ${nest.max}`,
      { hint: 'narrow the rows with filters or a smaller limit=' },
    );
    return out;
  }
  await Promise.all(
    [...calls.values()].map((c) =>
      nc.limit(async () => {
        if (out.error || nc.signal.aborted) return;
        const f = await fetchRows(nc.ctx, entry, entity, cap, c.values, {
          ...(nest.limit !== undefined ? { limit: nest.limit } : {}),
          ...(nest.sort ? { sort: nest.sort } : {}),
          ...(nc.budget ? { budget: nc.budget } : {}),
          signal: nc.signal,
        });
        out.calls += f.calls;
        out.pages += f.pages;
        if (f.error && !(nest.card === 'one' && f.error.code === 'vendor_error' && f.error.cause === '404')) {
          out.error ??= f.error;
          return;
        }
        c.rows = f.error ? [] : f.rows;
      }),
    ),
  );
  if (out.error) return out;
  const related = [...calls.values()].flatMap((c) => c.rows ?? []);
  if (nest.nest?.length) {
    const deeper = await attachNests(nc, related, nest.nest);
    out.calls += deeper.calls;
    out.pages += deeper.pages;
    if (deeper.error) {
      out.error = deeper.error;
      return out;
    }
  }
  rows.forEach((row, i) => {
    const got = keyOf[i] === undefined ? [] : project(calls.get(keyOf[i])!.rows ?? [], nest.projection);
    row[nest.relation] = nest.card === 'one' ? (got[0] ?? null) : got;
  });
  return out;
}

/** The argument values of the nest's call for `row`; undefined when a required key is missing. */
function valuesOf(nest: PlanNest, row: Row, required: (param: string) => boolean): Values | undefined {
  const values: Values = {};
  for (const [name, arg] of Object.entries(nest.args)) {
    const v: JsonValue | undefined = 'lit' in arg ? arg.lit : row[arg.field];
    if (v === undefined || v === null) {
      if (required(name)) return undefined;
      continue;
    }
    values[name] = v;
  }
  return values;
}
