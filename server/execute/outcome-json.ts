/**
 * The JSON form of an outcome's errors and result blocks, written alike by the HTTP formats and
 * the MCP results: one shape, so the surfaces cannot drift apart. A surface adds only its own
 * words: its hints for some codes (`withHints`), how it asks for the next page, and block fields
 * of its own.
 */
import { boundErrors } from '../../common/bound-errors.js';
import type { ErrorCode, SvcError } from '../../common/errors.js';
import type { Row } from '../../runtime/decode.js';
import type { ResultBlock } from './outcome.js';

/** `errors` with a surface's wording of the hints of some codes (`table`); the others keep the core's. */
export function withHints(errors: SvcError[], table: Partial<Record<ErrorCode, string>>): SvcError[] {
  if (!errors.some((e) => table[e.code] !== undefined)) return errors;
  return errors.map((e) => (table[e.code] !== undefined ? { ...e, hint: table[e.code] } : e));
}

/** An error as JSON: `code`, `message`, `hint`, the `line` and `col` of its span, `path`. */
export function errorJson(e: SvcError): Record<string, unknown> {
  const o: Record<string, unknown> = { code: e.code, message: e.message };
  if (e.hint) o.hint = e.hint;
  if (e.span) {
    o.line = e.span.line;
    o.col = e.span.col;
  }
  if (e.path) o.path = e.path;
  return o;
}

/** Errors as JSON, bounded (`boundErrors`: 20 in full, then a `too_many_errors` count). */
export function errorsJson(errors: readonly SvcError[]): Array<Record<string, unknown>> {
  return boundErrors(errors).map(errorJson);
}

/** What a surface writes in a result block beyond the shared fields. */
export interface BlockWording {
  /** The `more` field: how the surface asks for page `next` (`page(pg2)[..]`, an MCP run_ref). */
  more(next: string): string;
  /** Fields of the surface's own, after `total` and before `more`. */
  extra?: Record<string, unknown>;
  /** The rows written (default: all of the block's). */
  rows?: Row[];
}

/**
 * A result block as JSON, its keys in this order: `entity`, `count` (rows in the block), `done`,
 * `total`, the surface's own fields, `more`, `rows`.
 * @example blockJson(b, { more: (pg) => `page(${pg})[..]` }) // { entity: 'shop:Order', count: 25, more: 'page(pg2)[..]', rows: [...] }
 */
export function blockJson(b: ResultBlock, wording: BlockWording): Record<string, unknown> {
  const o: Record<string, unknown> = { entity: b.entity, count: b.rows.length };
  if (b.done) o.done = b.done;
  if (b.total !== undefined) o.total = b.total;
  if (wording.extra) Object.assign(o, wording.extra);
  if (b.next) o.more = wording.more(b.next);
  o.rows = wording.rows ?? b.rows;
  return o;
}
