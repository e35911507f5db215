/**
 * Fetching the rows of one capability call: one page by default, or pages up to a limit, with a
 * continuation (`PageState`) when more pages exist. The vendor cursor stays inside the state.
 */
import { svcError, type SvcError } from '../common/errors.js';
import type { PlanNest, PlanSort, PlanStep } from '../compiler/plan.js';
import type { Capability, Entity } from '../pack/cgs.js';
import { headerValuesProblem } from '../pack/header-values.js';
import type { RegistryEntry } from '../pack/registry.js';
import { callVendor, type CallContext } from './call.js';
import { decodeResponse, shapeRows, type Row } from './decode.js';
import { nextPage, pageQuery, pageSize, type PageCursor } from './paginate.js';
import { buildRequest, sortQuery, type Values } from './request.js';
import type { CancelSignal } from './signal.js';

/** Everything needed to fetch the next page later; the server keeps it behind a `pgN` handle. */
export interface PageState {
  api: string;
  cgs_hash: string;
  capability: string;
  values: Values;
  projection?: string[];
  /** Relations attached to each row of every page (a nested projection). */
  nest?: PlanNest[];
  /** The order the step asked for, sent again with every page (absent in handles of unsorted steps). */
  sort?: PlanSort;
  cursor: PageCursor;
  size: number;
  /** Rows fetched so far across pages. */
  fetched: number;
  total?: number;
  /** Rows the vendor already sent beyond a program's `limit`: served first on continuation. */
  buffer?: Row[];
  /** Set when the vendor has no page after the buffer. */
  last?: boolean;
}

export interface Fetched {
  rows: Row[];
  /** Rows fetched beyond the limit (kept for the continuation, so none is lost). */
  leftover?: Row[];
  total?: number;
  /** The vendor's last total that was not a count (negative, not a number), as sent: no total is kept from it. */
  totalIgnored?: string;
  /** Where the next page starts, when there is one. */
  next?: PageCursor;
  size?: number;
  calls: number;
  pages: number;
  error?: SvcError;
}

/**
 * A run's budget of vendor calls, shared by all its steps: each request for a page or a fan-out
 * call takes one before it is sent (retries do not).
 */
export interface CallBudget {
  readonly max: number;
  used: number;
}

export interface FetchOptions {
  /** Rows wanted; absent = one vendor page. */
  limit?: number;
  /** Start here instead of the first page. */
  from?: PageCursor;
  /** Rows already fetched before `from` (for totals). */
  fetchedBefore?: number;
  /** Fixed page size (continuations keep the size of the first request). */
  size?: number;
  signal: CancelSignal;
  onPage?: (rows: number, pages: number, calls: number) => void;
  /** When set, no request is sent once it is used up: the fetch ends with `call_budget_exceeded`. */
  budget?: CallBudget;
  /** The order asked of a list that sorts; absent = the mapping's default order, if any. */
  sort?: PlanSort;
}

const INVALID_LINK = 'invalid:';

/** A next-page URL never keeps an API key the vendor echoed into it (each is added again on send). */
function withoutQueryKey(url: string, entry: RegistryEntry): string {
  const auth = entry.cgs.auth;
  if (url === INVALID_LINK || auth.scheme !== 'api_key') return url;
  const inQuery = [auth, ...(auth.also ?? [])].filter((k) => k.in === 'query');
  if (inQuery.length === 0) return url;
  const u = new URL(url);
  for (const k of inQuery) u.searchParams.delete(k.name);
  return u.toString();
}

/** `url` with the query keys `q` set (unchanged when it holds them already). */
function withKeys(url: string, q: Record<string, string>): string {
  const u = new URL(url);
  const missing = Object.entries(q).filter(([k, v]) => u.searchParams.get(k) !== v);
  if (missing.length === 0) return url;
  for (const [k, v] of missing) u.searchParams.set(k, v);
  return u.toString();
}

/**
 * A next URL resolved against the URL that answered it. A body field (`next_url`) must hold a URL
 * or a path (`https://...`, `/items?page=2`, `?page=2`): a bare word there is a token, not a page
 * to follow, and is refused as an invalid URL.
 */
function resolveLink(link: string, base: string, fromBody: boolean): string {
  if (fromBody && !/^(https?:\/\/|\/|\?)/i.test(link)) return INVALID_LINK;
  try {
    return new URL(link, base).toString();
  } catch {
    return INVALID_LINK;
  }
}

function budgetExceeded(budget: CallBudget, entry: RegistryEntry, cap: Capability): SvcError {
  return svcError(
    'call_budget_exceeded',
    `the run used its budget of ${budget.max} vendor calls; ${entry.entry_id} ${cap.name} (${cap.http.method} ${cap.http.path}) was not called`,
    {
      hint: 'narrow the program (filters, a smaller limit=, fewer statements), or dry-run it and run it with its pcN to accept the calls it needs',
    },
  );
}

/** Call `cap` with `values` and decode its rows (or row). Never throws for a vendor failure. */
export async function fetchRows(
  ctx: CallContext,
  entry: RegistryEntry,
  entity: Entity,
  cap: Capability,
  values: Values,
  opts: FetchOptions,
): Promise<Fetched> {
  const pg = cap.http.pagination;
  const idempotent = cap.http.method === 'GET';
  const out: Fetched = { rows: [], calls: 0, pages: 0 };
  // The compiler and the plan checks refuse these first; this holds for every path to a vendor call.
  const refused = headerValuesProblem(cap, values);
  if (refused) {
    out.error = refused;
    return out;
  }
  let at: PageCursor = opts.from ?? {};
  let seen = opts.fetchedBefore ?? 0;
  const size = pg ? (opts.size ?? pageSize(pg, opts.limit)) : 0;
  // Every page asks for the same order (a vendor's next link may leave it out).
  const sorted = sortQuery(cap, opts.sort);
  for (;;) {
    const req = buildRequest(entry.base_url, cap, values, {
      query: pg && !at.url ? { ...sorted, ...pageQuery(pg, size, at) } : sorted,
    });
    if (at.url) {
      if (at.url === INVALID_LINK || new URL(at.url).origin !== new URL(entry.base_url).origin) {
        out.error = svcError(
          'vendor_bad_response',
          `${entry.entry_id} pointed its next page at another origin or an invalid URL`,
          { hint: 'the catalog backend must serve its own pages; nothing was sent there' },
        );
        return out;
      }
      req.url = withKeys(at.url, sorted);
    }
    const sentUrl = req.url;
    if (opts.budget) {
      if (opts.budget.used >= opts.budget.max) {
        out.error = budgetExceeded(opts.budget, entry, cap);
        return out;
      }
      opts.budget.used++;
    }
    const r = await callVendor(ctx, entry, cap, req, idempotent, opts.signal);
    out.calls += r.sent;
    if (!r.ok) {
      out.error = r.error;
      return out;
    }
    const d = decodeResponse(cap, r.res, entity);
    if (!d.ok) {
      out.error = svcError(d.code ?? 'vendor_bad_response', `${entry.entry_id} ${cap.name}: ${d.problem}`, {
        hint:
          d.hint ??
          'the vendor does not answer as the catalog says; check the mapping (response.path) or the backend URL',
      });
      return out;
    }
    out.pages++;
    const rows = shapeRows(entity, d.rows);
    // A loop, not push(...rows): a vendor page of a few hundred thousand rows would overflow the stack.
    for (const row of rows) out.rows.push(row);
    seen += rows.length;
    if (d.total !== undefined) out.total = d.total;
    if (d.totalIgnored !== undefined) out.totalIgnored = d.totalIgnored;
    opts.onPage?.(out.rows.length, out.pages, out.calls);
    // A relative Link is resolved against the URL that answered it.
    const marker =
      d.nextLink !== undefined
        ? {
            ...d,
            nextLink: withoutQueryKey(
              resolveLink(d.nextLink, sentUrl, pg?.style === 'link' && pg.next_url !== undefined),
              entry,
            ),
          }
        : d;
    const next =
      pg && cap.returns === 'rows' ? nextPage(pg, size, at, rows.length, seen, out.total, marker) : undefined;
    if (!next || opts.limit === undefined || out.rows.length >= opts.limit) {
      if (opts.limit !== undefined && out.rows.length > opts.limit) out.leftover = out.rows.splice(opts.limit);
      if (next) {
        out.next = next;
        out.size = size;
      }
      return out;
    }
    at = next;
  }
}

/** The continuation of a step's one call that has more (a next cursor, or rows left over from the last page). */
export function pageState(s: PlanStep, values: Values, f: Fetched): PageState {
  const state: PageState = {
    api: s.api,
    cgs_hash: s.cgs_hash,
    capability: s.capability,
    values,
    cursor: f.next ?? {},
    size: f.size ?? f.rows.length,
    fetched: f.rows.length,
  };
  if (f.total !== undefined) state.total = f.total;
  if (s.projection) state.projection = s.projection;
  if (s.nest) state.nest = s.nest;
  if (s.sort) state.sort = s.sort;
  if (f.leftover?.length) state.buffer = f.leftover;
  if (!f.next) state.last = true;
  return state;
}
