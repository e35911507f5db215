/**
 * Page handles: minting `pgN` for a result that continues, and `page(pgN)[...]` continuations. A
 * handle can be sent again (a response lost in transit): it fetches the same page and answers the
 * same next handle, so the chain never forks. A handle given with a logical-session prefix
 * (`l_<token>_pgN`, as MCP prints it) is resolved when that logical session is bound to the session.
 */
import { fail } from '../../common/errors.js';
import { quote } from '../../common/quote.js';
import type { ContinuationStmt } from '../../compiler/ast.js';
import type { Registry } from '../../pack/registry.js';
import { continuePage, type ExecuteOptions } from '../../runtime/execute.js';
import type { PageState } from '../../runtime/fetch-rows.js';
import type { Outcome, ResultBlock } from './outcome.js';
import type { Follow, ProgramRequest } from './request.js';
import type { SessionRepository } from './repository.js';
import { SESSION_HOLDS, trimMap, type PageEntry, type SessionState } from './state.js';

export interface PageDeps {
  registry: Registry;
  repo: SessionRepository;
  runtime: ExecuteOptions;
  /**
   * Rows a continuation answers at most (MCP: the rows it may show inline, as a page has no stored
   * run to link); the rest wait, in order, behind the next handle.
   */
  maxRows?: number;
}

const LOGICAL_PAGE = /^(l_[A-Za-z0-9]+)_(pg\d+)$/;
/** A page handle as a run_ref: `pgN`, or `l_<token>_pgN`. */
const PAGE_REF = /^(l_[A-Za-z0-9]+_)?pg\d{1,9}$/;

/** Mint the next `pgN` of a session for a page state (inside a repository transaction). */
export function mintPage(st: SessionState, state: PageState, entity: string): string {
  const name = `pg${++st.counters.pg}`;
  // A continued state carries the server fields of the handle it came from: a fresh handle has none.
  st.pages.set(name, { ...withoutServerFields(state), entity });
  trimMap(st.pages, SESSION_HOLDS.maxPages);
  return name;
}

function withoutServerFields(state: PageState): PageState {
  if (!('used' in state) && !('entity' in state) && !('next' in state)) return state;
  const { used: _used, entity: _entity, next: _next, ...page } = state as PageEntry;
  return page;
}

/** The session's own name of a handle: `pgN` as given, or the `pgN` of a bound `l_<token>_pgN`. */
export function pageHandleName(s: SessionState, text: string): string {
  const m = LOGICAL_PAGE.exec(text);
  if (!m) return text;
  if (!s.logical.includes(m[1]!))
    fail(
      'unknown_page_handle',
      `\`${quote(text)}\` names the logical session ${m[1]}, which is not bound to this session`,
      'use the handle printed in a "more" line of a result of this session',
    );
  return m[2]!;
}

/** page(pgN)[...]: the next page of a result. A failed fetch leaves the handle as it was, for a retry. */
export async function continuePageHandle(s: SessionState, c: ContinuationStmt, deps: PageDeps): Promise<Outcome> {
  const name = pageHandleName(s, c.handle.text);
  const entry =
    s.pages.get(name) ??
    fail(
      'unknown_page_handle',
      `\`${quote(c.handle.text)}\` is not a page handle of this session`,
      'use the pgN printed in a "more" line of a result of this session',
    );
  let projection = entry.projection;
  if (c.kind === 'page' && c.projection) {
    const [api, entityName] = entry.entity.split(':') as [string, string];
    const fields = deps.registry.entity(api, entityName)?.fields.map((f) => f.name) ?? [];
    const bad = c.projection.fields.find((f) => !fields.includes(f.text));
    if (bad)
      fail(
        'projection_unknown_field',
        `${entry.entity} has no field \`${quote(bad.text)}\``,
        `fields: ${fields.join(', ')}`,
      );
    projection = c.projection.fields.map((f) => f.text);
  }
  const { used: _used, entity, next: _next, ...page } = entry;
  const state = { ...page, ...(projection ? { projection } : {}) };
  const r = await continuePage(state, deps.registry, deps.runtime);
  if (r.error) return { kind: 'result', results: [], errors: [r.error], meta: { code: r.error.code } };
  let rows = r.rows;
  let rest = r.page;
  if (deps.maxRows !== undefined && rows.length > deps.maxRows) {
    // Rows beyond the bound are served first by the next handle, before any new vendor page.
    const over = rows.slice(deps.maxRows);
    rows = rows.slice(0, deps.maxRows);
    rest = r.page
      ? { ...r.page, fetched: r.page.fetched - over.length, buffer: [...over, ...(r.page.buffer ?? [])] }
      : { ...state, fetched: state.fetched + rows.length, buffer: over, last: true };
  }
  const next = await deps.repo.update(s, (st) => {
    const e = st.pages.get(name);
    if (e) e.used = true;
    if (!rest) return undefined;
    if (!e) return mintPage(st, rest, entity);
    return (e.next ??= mintPage(st, rest, entity));
  });
  const block: ResultBlock = { entity, rows };
  if (r.total !== undefined) block.total = r.total;
  if (next) block.next = next;
  return { kind: 'result', clean: true, results: [block], errors: [], meta: { mode: 'live' } };
}

/** The request of a run_ref that is a page handle (MCP svc_run), awaited as `follow` says; undefined for any other ref. */
export function pageRefRequest(ref: string, follow: Follow): ProgramRequest | undefined {
  if (!PAGE_REF.test(ref)) return undefined;
  return {
    program: `page(${ref})`,
    mode: 'live',
    wait: true,
    force: false,
    ...(follow.pageRows !== undefined ? { pageRows: follow.pageRows } : {}),
    ...(follow.signal ? { signal: follow.signal } : {}),
    ...(follow.who ? { who: follow.who } : {}),
  };
}
