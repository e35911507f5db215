/**
 * Pagination (pure): the query of the first page, and where the next page is after a response,
 * for the four styles: page counter, offset/limit, cursor from the body, Link rel="next".
 */
import type { Pagination } from '../pack/cgs.js';

/** Where the next page starts. Opaque to callers above the runtime. */
export interface PageCursor {
  page?: number;
  offset?: number;
  cursor?: string;
  /** Absolute URL from a Link header (same origin as the backend). */
  url?: string;
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
      q[pg.page_param] = String(at.page ?? pg.first_page);
      break;
    case 'offset':
      q[pg.offset_param] = String(at.offset ?? 0);
      break;
    case 'cursor':
      if (at.cursor !== undefined) q[pg.cursor_param] = at.cursor;
      break;
    case 'link':
      if (pg.page_param) q[pg.page_param] = String(at.page ?? pg.first_page);
      break;
  }
  return q;
}

/**
 * The cursor of the page after `at`, or undefined when this was the last page. `got` rows came
 * back for a request of `size`; `seen` rows were fetched so far in total (this page included).
 */
export function nextPage(
  pg: Pagination,
  size: number,
  at: PageCursor,
  got: number,
  seen: number,
  total: number | undefined,
  marker: { nextCursor?: string; nextLink?: string },
): PageCursor | undefined {
  if (total !== undefined && seen >= total) return undefined;
  switch (pg.style) {
    case 'page':
      return got < size ? undefined : { page: (at.page ?? pg.first_page) + 1 };
    case 'offset':
      return got < size ? undefined : { offset: (at.offset ?? 0) + got };
    case 'cursor':
      return marker.nextCursor !== undefined && got > 0 ? { cursor: marker.nextCursor } : undefined;
    case 'link':
      return marker.nextLink ? { url: marker.nextLink } : undefined;
  }
}
