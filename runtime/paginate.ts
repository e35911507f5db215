/**
 * Pagination (pure): the query of the first page, and where the next page is after a response,
 * for the four styles: page counter, offset/limit, cursor (from the body or the last row), next
 * URL (from the Link header or the body).
 */
import type { Pagination } from '../pack/cgs.js';

/** Where the next page starts. Opaque to callers above the runtime. */
export interface PageCursor {
  page?: number;
  offset?: number;
  cursor?: string;
  /** Absolute URL from a Link header or the body (same origin as the backend). */
  url?: string;
}

/** What an answer says about the next page (runtime/decode.ts reads it). */
export interface PageMarkers {
  nextCursor?: string;
  nextLink?: string;
  hasMore?: boolean;
}

/** Page size for a request: the program's remaining rows or the catalog's page size, capped by the vendor's maximum. */
export function pageSize(pg: Pagination, wanted: number | undefined): number {
  return Math.max(1, Math.min(pg.max_page_size, wanted ?? pg.page_size));
}

/** Query parameters selecting the page at `at` (the first page when `at` is empty). */
export function pageQuery(pg: Pagination, size: number, at: PageCursor): Record<string, string> {
  const q: Record<string, string> = {};
  if (pg.size_param) q[pg.size_param] = String(size);
  switch (pg.style) {
    case 'page':
    case 'link':
      // The first page sends no page number when the document says to leave it out.
      if (pg.page_param && (at.page !== undefined || !pg.omit_first_page))
        q[pg.page_param] = String(at.page ?? pg.first_page);
      break;
    case 'offset':
      q[pg.offset_param] = String(at.offset ?? 0);
      break;
    case 'cursor':
      // The first page sends no cursor at all (never an empty one or `0`).
      if (at.cursor !== undefined) q[pg.cursor_param] = at.cursor;
      break;
  }
  return q;
}

/**
 * The cursor of the page after `at`, or undefined when this was the last page. `got` rows came
 * back for a request of `size`; `seen` rows were fetched so far in total (this page included).
 * Whether there is more is decided by, first, the answer's `has_more` flag; then the vendor's
 * total; then the style: a full page (page, offset, last-row cursor), a cursor in the body, a
 * next URL. An empty page ends every style but a next URL.
 */
export function nextPage(
  pg: Pagination,
  size: number,
  at: PageCursor,
  got: number,
  seen: number,
  total: number | undefined,
  marker: PageMarkers,
): PageCursor | undefined {
  if (total !== undefined && seen >= total) return undefined;
  const more = (full: boolean) => got > 0 && (marker.hasMore ?? (total !== undefined || full));
  switch (pg.style) {
    case 'page':
      return more(got >= size) ? { page: (at.page ?? pg.first_page) + 1 } : undefined;
    case 'offset':
      return more(got >= size) ? { offset: (at.offset ?? 0) + got } : undefined;
    case 'cursor':
      if (marker.nextCursor === undefined) return undefined;
      return more(pg.cursor_field === undefined || got >= size) ? { cursor: marker.nextCursor } : undefined;
    case 'link':
      return marker.nextLink ? { url: marker.nextLink } : undefined;
  }
}
