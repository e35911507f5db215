/**
 * Paging and sorting of a list operation, detected from its query parameters and response:
 * an opaque cursor sent back from a response field (`cursor` + `next_cursor`, `pageToken` +
 * `nextPageToken`, `NextToken`, a string `offset` + `next_page.offset`), a next URL (a `Link`
 * response header, or `next`/`links.next`/`_links.next.href`/`next_page_url` in the body), the id
 * of the last row (`starting_after` with `has_more` or a page size), a page counter
 * (`page`/`per_page`), an offset (`offset`/`limit`, `skip`/`take`); a `has_more` flag; a total
 * from an `X-Total-Count`-like header or a body field; a sort key plus direction
 * (`_sort`/`_order`, `sort`/`direction`) whose values are fields of the entity. Names are matched
 * without case, `_`, `-`, `$` or brackets (`PageToken`, `page[offset]`, `$skip`). Parameters
 * these own are not capability parameters.
 */
import type { ImportPagination, ImportSort } from './model.js';
import type { OpParam } from './operations.js';
import { isObj, objectShape, typeOf, type Schema } from './schema.js';

/** A name without case and separators: `next_page_token`, `NextPageToken` and `page[token]`-likes meet. */
const norm = (n: string) => n.toLowerCase().replace(/[^a-z0-9]/g, '');

const PAGE = ['page', 'pagenumber', 'pageno', 'pagenum', 'pageindex'];
const SIZE = ['perpage', 'pagesize', 'limit', 'size', 'maxresults', 'pagelimit', 'take', 'top', 'maxitems', 'count'];
const OFFSET = ['offset', 'start', 'skip', 'startat', 'pageoffset', 'startindex'];
/** Cursor parameters whose value is the id of the last row received, when the answer has no token. */
const AFTER = ['startingafter', 'after', 'startafter', 'afterid'];
const CURSOR = [
  'cursor',
  'pagetoken',
  'nexttoken',
  'nextpagetoken',
  'continuation',
  'continuationtoken',
  'marker',
  'pagecursor',
  'pageafter',
  'startcursor',
  'skiptoken',
  ...AFTER,
];
/** Next-cursor fields of the answer, most specific first (the cursor parameter's own name comes before the last two). */
const NEXT = [
  'nextcursor',
  'nextpagetoken',
  'nexttoken',
  'nextmarker',
  'nextcontinuationtoken',
  'nextpagecursor',
  'continuationtoken',
  'endcursor',
  'nextpage',
];
const NEXT_LAST = ['cursor', 'next'];
/** Next-URL fields of the answer (`next` itself, when no cursor parameter takes it, or an object's `href`). */
const NEXT_URL = ['nextlink', 'nexturl', 'nextpageurl', 'nextpagelink', 'nexturi', 'nextpageuri', 'nexthref', 'next'];
const HAS_MORE = ['hasmore', 'hasnext', 'hasnextpage', 'hasmoreitems', 'hasmoreresults'];
/** Other slicing parameters that paging makes redundant (json-server's `_end`). */
const SLICE = ['_end', 'end'];
const SORT = ['_sort', 'sort', 'sort_by', 'sortBy', 'order_by', 'orderBy'];
const ORDER = ['_order', 'order', 'direction', 'sort_order', 'sortOrder', 'dir'];

export interface Paging {
  pagination?: ImportPagination;
  sort?: ImportSort;
  total?: { header: string } | { path: string };
  /** Query parameters (wire names) that pagination and sort own. */
  owned: Set<string>;
}

const find = (params: OpParam[], names: string[]) =>
  names.map((n) => params.find((p) => p.in === 'query' && p.name === n)).find((p) => p !== undefined);

/** Query parameters whose name is one of `names` (normalized), in the order of `names`, that `ok` accepts. */
const findAll = (params: OpParam[], names: string[], ok: (p: OpParam) => boolean) =>
  names.flatMap((n) => params.filter((p) => p.in === 'query' && norm(p.name) === n && ok(p)));

const scalar = (p: OpParam) => !['boolean', 'array', 'object'].includes(String(typeOf(p.schema)));
/** A number: a page counter, a size or an offset (no enum: `size=S|M|L` is a filter). */
const counter = (p: OpParam) => ['integer', 'number', 'undefined'].includes(String(typeOf(p.schema))) && !p.schema.enum;
const dated = (p: OpParam) => /^date/.test(String(p.schema.format ?? ''));
/** A string that is no date: a `page`/`offset` that is a token the vendor gives out, not a counter. */
const token = (p: OpParam) => scalar(p) && !counter(p) && !dated(p);

/** A property of the answer: its dot path, its name, its schema and the name of the object holding it. */
interface Prop {
  path: string;
  key: string;
  schema: Schema;
  parent: string;
}

/** The properties of the answer down to `depth` levels of objects (lists are not entered), shallowest first. */
function answerProps(response: Schema | undefined, depth: number): Prop[] {
  const out: Prop[] = [];
  let level: { prefix: string; parent: string; schema: Schema }[] = isObj(response)
    ? [{ prefix: '', parent: '', schema: response }]
    : [];
  for (let d = 0; d < depth && level.length > 0; d++) {
    const next: typeof level = [];
    for (const { prefix, parent, schema } of level) {
      if (typeOf(schema) === 'array') continue;
      for (const [key, v] of objectShape(schema).props) {
        const path = prefix ? `${prefix}.${key}` : key;
        out.push({ path, key, schema: v, parent });
        if (isObj(v) && typeOf(v) !== 'array') next.push({ prefix: path, parent: key, schema: v });
      }
    }
    level = next;
  }
  return out;
}

/** The shallowest property of `props` named one of `names` (earlier names first) that `ok` accepts. */
function pick(props: Prop[], names: string[], ok: (p: Prop) => boolean): string | undefined {
  let best: { p: Prop; rank: number } | undefined;
  for (const p of props) {
    const rank = names.indexOf(norm(p.key));
    if (rank < 0 || !ok(p)) continue;
    const depth = p.path.split('.').length;
    const bestDepth = best?.p.path.split('.').length ?? Infinity;
    if (depth < bestDepth || (depth === bestDepth && rank < best!.rank)) best = { p, rank };
  }
  return best?.p.path;
}

const isUrl = (s: Schema) => /^(uri|url|iri|uri-reference)$/.test(String(s.format ?? ''));
const tokenField = (p: Prop) =>
  ['string', 'integer', 'undefined'].includes(String(typeOf(p.schema))) && !isUrl(p.schema);

/** The dot path of the token the answer gives for cursor parameter `param` (two levels of nesting). */
function nextCursor(props: Prop[], param: OpParam): string | undefined {
  return pick(props, [...NEXT, norm(param.name), ...NEXT_LAST], tokenField);
}

/** The dot path of the next page's URL in the answer: `next_page_url`, `links.next`, `_links.next.href`. */
function nextUrl(props: Prop[]): string | undefined {
  const str = (p: Prop) => typeOf(p.schema) === 'string' || (typeOf(p.schema) === undefined && isUrl(p.schema));
  const named = pick(props, NEXT_URL, str);
  const href = pick(props, ['href'], (p) => str(p) && norm(p.parent) === 'next');
  if (named === undefined || href === undefined) return named ?? href;
  return named.split('.').length <= href.split('.').length ? named : href;
}

/**
 * The first page of a counter is left out of the first request when the document says so: the
 * parameter's default is empty (`null`, `""`), or its description says to omit it (or leave it
 * out, empty, unset) for the first page. Otherwise the first request sends `first_page`.
 */
function omitsFirstPage(p: OpParam): boolean {
  if (p.schema.default === null || p.schema.default === '') return true;
  const said = [p.description, p.schema.description].filter((d): d is string => typeof d === 'string').join('. ');
  return said
    .split(/[.;\n]/)
    .some(
      (s) =>
        /\bfirst\b/i.test(s) &&
        /\b(omit|leave\b.*\b(out|empty|blank|unset)|(do not|don't|not be|need not)\s+(send|set|include|pass|specify|sent|included|passed|specified|provided))/i.test(
          s,
        ),
    );
}

function sizes(p: OpParam | undefined): Pick<ImportPagination, 'page_size' | 'max_page_size'> {
  if (!p) return {};
  const s = p.schema;
  const max = Number.isSafeInteger(s.maximum) && s.maximum >= 1 ? (s.maximum as number) : undefined;
  let size = Number.isSafeInteger(s.default) && s.default >= 1 ? (s.default as number) : 25;
  if (max !== undefined && size > max) size = max;
  return { page_size: size, ...(max !== undefined ? { max_page_size: Math.max(max, size) } : {}) };
}

/** The paging parameters of a list, by role. */
interface Candidates {
  page?: OpParam;
  size?: OpParam;
  offset?: OpParam;
  /** Cursor parameters, and `page`/`offset` parameters that are strings (tokens the vendor gives out). */
  cursors: OpParam[];
}

function candidates(params: OpParam[]): Candidates {
  const page = findAll(params, PAGE, counter)[0] ?? findAll(params, PAGE, scalar)[0];
  const size = findAll(params, SIZE, (p) => counter(p) || token(p))[0];
  // A string offset beside a string size is a counter the document types loosely (`limit: string`);
  // beside a number it is a token, and pages only when the answer gives it back.
  const loose = size !== undefined && !counter(size);
  const offset = findAll(params, OFFSET, counter)[0] ?? (loose ? findAll(params, OFFSET, token)[0] : undefined);
  return {
    ...(page ? { page } : {}),
    ...optional('size', size),
    ...optional('offset', offset),
    cursors: [
      ...findAll(params, CURSOR, (p) => scalar(p) && !dated(p)),
      ...findAll(params, [...PAGE, ...OFFSET], token),
    ],
  };
}

const optional = <K extends string, V>(k: K, v: V | undefined) => (v === undefined ? {} : ({ [k]: v } as Record<K, V>));

/** Pagination style of a list operation, if it has one. */
function pagination(
  params: OpParam[],
  headers: string[],
  response: Schema | undefined,
  id: string | undefined,
  owned: Set<string>,
): ImportPagination | undefined {
  const c = candidates(params);
  const props = answerProps(response, 3);
  const own = (...ps: (OpParam | undefined)[]) => ps.forEach((p) => p && owned.add(p.name));
  /** A cursor parameter and its duplicates under other spellings (`nextToken` and `NextToken`). */
  const ownCursor = (p: OpParam) => own(...c.cursors.filter((x) => norm(x.name) === norm(p.name)), p);
  const sz = c.size ? { size_param: c.size.name, ...sizes(c.size) } : {};
  const more = pick(props, HAS_MORE, (p) => typeOf(p.schema) === 'boolean');
  const hasMore = more !== undefined ? { has_more: more } : {};
  // 1. An opaque token from the answer goes back as the cursor.
  for (const cursor of c.cursors) {
    const next = nextCursor(props, cursor);
    if (next === undefined) continue;
    ownCursor(cursor);
    own(c.size);
    return { style: 'cursor', cursor_param: cursor.name, next_cursor: next, ...hasMore, ...sz };
  }
  // 2. A next URL: in the body, or a Link header. The URL carries the position: the vendor's paging parameters are svc's.
  const url = nextUrl(props);
  const link = headers.some((h) => h.toLowerCase() === 'link');
  if (url !== undefined || link) {
    own(c.page, c.size, c.offset, ...c.cursors, ...SLICE.map((n) => find(params, [n])));
    if (url !== undefined) return { style: 'link', next_url: url, ...sz };
    return { style: 'link', ...pageParam(c.page), ...sz };
  }
  // 3. The id of the last row received, while the answer says it has more (or pages come full).
  const after = c.cursors.find((p) => AFTER.includes(norm(p.name)));
  if (after && id !== undefined && (more !== undefined || c.size)) {
    ownCursor(after);
    own(c.size);
    return { style: 'cursor', cursor_param: after.name, cursor_field: id, ...hasMore, ...sz };
  }
  // 4. A page counter; 5. an offset with a size.
  if (c.page) {
    own(c.page, c.size, c.offset, ...SLICE.map((n) => find(params, [n])));
    return { style: 'page', ...pageParam(c.page), ...hasMore, ...sz };
  }
  if (c.offset && c.size) {
    own(c.offset, c.size, ...SLICE.map((n) => find(params, [n])));
    return { style: 'offset', offset_param: c.offset.name, ...hasMore, ...sz };
  }
  return undefined;
}

/** The page parameter of a page or link style: its name, the first page (0 when the document says so) and whether it is omitted. */
function pageParam(page: OpParam | undefined): Pick<ImportPagination, 'page_param' | 'first_page' | 'omit_first_page'> {
  if (!page) return { first_page: 1 };
  const s = page.schema;
  const first = s.minimum === 0 || s.default === 0 ? 0 : 1;
  return { page_param: page.name, first_page: first, ...(omitsFirstPage(page) ? { omit_first_page: true } : {}) };
}

/** A sort parameter whose values (an enum) are fields of the entity, with an asc/desc direction. */
function sort(params: OpParam[], fields: Set<string>, owned: Set<string>): ImportSort | undefined {
  const key = find(params, SORT);
  const dir = find(params, ORDER);
  if (!key || !dir) return undefined;
  const values: unknown[] = Array.isArray(key.schema.enum) ? key.schema.enum : [];
  const sortable = values.filter((v): v is string => typeof v === 'string' && fields.has(v));
  if (sortable.length === 0) return undefined;
  const dirs: unknown[] = Array.isArray(dir.schema.enum) ? dir.schema.enum : ['asc', 'desc'];
  const asc = dirs.find((v): v is string => typeof v === 'string' && /^asc/i.test(v));
  const desc = dirs.find((v): v is string => typeof v === 'string' && /^desc/i.test(v));
  if (!asc || !desc) return undefined;
  owned.add(key.name);
  owned.add(dir.name);
  return { param: key.name, order_param: dir.name, asc, desc, fields: sortable };
}

/** Paging, sorting and total of a list operation over an entity with `fields` (sortable ones) and the id field `id`. */
export function detectPaging(
  params: OpParam[],
  headers: string[],
  response: Schema | undefined,
  totalPath: string | undefined,
  fields: Set<string>,
  id?: string,
): Paging {
  const owned = new Set<string>();
  const p = pagination(params, headers, response, id, owned);
  const s = sort(params, fields, owned);
  const h = headers.find((x) => /^x-(paging-)?total(-?(count|results|items))?$/i.test(x));
  const total = h ? { header: h } : totalPath ? { path: totalPath } : undefined;
  return { ...(p ? { pagination: p } : {}), ...(s ? { sort: s } : {}), ...(total ? { total } : {}), owned };
}
