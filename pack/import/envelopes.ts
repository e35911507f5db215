/**
 * Envelopes: where the rows (or the row) are in an answer, and where a request body wants its
 * parameters. A list is bare or wrapped with its paging data (`{"data": [...], "has_more": ..}`,
 * `{"widgets": [...], "meta": {"total": ..}, "links": {..}}`); one row is bare or wrapped under
 * one key (`{"widget": {...}}`, `{"data": {...}}`, beside `meta`/`links`); a request body may wrap
 * its properties the same way. The mapping's `response.path` and `body` template say what is found.
 * Wrappers of one schema (`allOf: [{$ref}, {description}]`, `oneOf: [X, null]`) are seen through
 * (schema.ts `unwrap`), so a list or row behind one is found and a component keeps its name.
 */
import { isObj, isRowSchema, objectShape, typeOf, unwrap, type Schema } from './schema.js';

/** Where the rows (or the row) are in a response, and a total count beside them. */
export interface RowResult {
  returns: 'rows' | 'row';
  schema: Schema;
  /** Dot path of the rows or the row in the answer (`data`, `widget`); `""` is the answer itself. */
  path: string;
  /** Dot path of a total row count beside the rows (`total`, `meta.total`). */
  totalPath?: string;
  /** The response is one of several lists; `schema` is the richest (see listAlternatives). */
  oneOfLists?: true;
}

const WRAPPERS = ['data', 'items', 'results', 'records', 'entries', 'values', 'content', 'list', 'rows'];
const TOTALS = ['total', 'total_count', 'totalCount', 'total_results', 'totalResults', 'count'];
/** Keys beside a wrapped row that hold no row: metadata and links (JSON:API, HAL). */
const META = ['meta', '_meta', 'links', '_links', 'jsonapi', 'included', 'pagination', 'paging'];

/** Text beside a list that is paging data, not a field of a row. */
const PAGING_TEXT = ['object', 'next', 'prev', 'previous', 'cursor', 'next_cursor', 'nextCursor', 'next_page_token'];

export interface RowOptions {
  /**
   * The operation's path names one resource (it ends with a `{param}`): an object answered there
   * that has a list property is one row (`{"id": 1, "tags": [...]}`), unless all beside the list
   * is paging data (`{"commits": [...], "count": 3}`, the revisions of one page).
   */
  one?: boolean;
}

/**
 * The rows or row a response schema holds: an array, an object wrapping one array, one object
 * wrapped under one key, or an object.
 */
export function rowResult(answer: Schema | undefined, opts: RowOptions = {}): RowResult | undefined {
  if (!isObj(answer)) return undefined;
  const schema = unwrap(answer);
  const lists = listAlternatives(schema);
  if (lists) return { returns: 'rows', schema: lists, path: '', oneOfLists: true };
  const items = itemsOf(schema);
  if (items) return isRowSchema(items) ? { returns: 'rows', schema: items, path: '' } : undefined;
  if (!isRowSchema(schema)) return undefined;
  const { props } = objectShape(schema);
  const list = listWrapper(props, opts.one === true);
  if (list) return list;
  const key = rowKey(props);
  return key ? { returns: 'row', schema: unwrap(props.get(key)!), path: key } : { returns: 'row', schema, path: '' };
}

/**
 * A wrapper holds the rows under a conventional name, or is nothing but one list and counters;
 * at a path naming one resource (`one`), only beside paging data.
 */
function listWrapper(props: Map<string, Schema>, one: boolean): RowResult | undefined {
  const arrays = [...props].flatMap(([k, v]): Array<[string, Schema]> => {
    const items = itemsOf(v);
    return items && isRowSchema(items) ? [[k, items]] : [];
  });
  const named = arrays.find(([k]) => WRAPPERS.includes(k));
  const sole = arrays.length === 1 && !props.has('id') && props.size <= 4 ? arrays[0] : undefined;
  const wrapper = named ?? sole;
  if (!wrapper || (one && !onlyPaging(props, wrapper[0]))) return undefined;
  const total = totalOf(props, wrapper[0]);
  return {
    returns: 'rows',
    schema: wrapper[1],
    path: wrapper[0],
    ...(total ? { totalPath: total } : {}),
  };
}

/** Whether every property beside the rows is paging data: a count or flag, metadata or links, a next marker. */
function onlyPaging(props: Map<string, Schema>, rows: string): boolean {
  return [...props].every(([k, v]) => {
    const t = typeOf(v);
    if (k === rows) return true;
    if (k === 'id') return false;
    return t === 'integer' || t === 'number' || t === 'boolean' || t === 'object' || PAGING_TEXT.includes(k);
  });
}

const isCount = (s: Schema | undefined) => s !== undefined && ['integer', 'number'].includes(String(typeOf(s)));

/** A total beside the rows (`total`), or one level down in an object beside them (`meta.total`). */
function totalOf(props: Map<string, Schema>, rows: string): string | undefined {
  const top = TOTALS.find((t) => isCount(props.get(t)));
  if (top) return top;
  for (const [k, v] of props) {
    if (k === rows || typeOf(v) !== 'object') continue;
    const inner = objectShape(v).props;
    const t = TOTALS.find((n) => isCount(inner.get(n)));
    if (t) return `${k}.${t}`;
  }
  return undefined;
}

/**
 * The key one row is wrapped under: the only property besides metadata and links, when it is an
 * object with properties (`{"widget": {...}}`, `{"data": {...}, "meta": {...}}`).
 */
function rowKey(props: Map<string, Schema>): string | undefined {
  const rest = [...props.keys()].filter((k) => !META.includes(k));
  if (rest.length !== 1) return undefined;
  const inner = unwrap(props.get(rest[0]!)!);
  return isRowSchema(inner) && typeOf(inner) !== 'array' ? rest[0] : undefined;
}

/** The items of a list schema (seen through wrappers), when it is one. */
function itemsOf(s: Schema): Schema | undefined {
  const list = unwrap(s);
  return isObj(list.items) && (typeOf(list) === 'array' || !list.properties) ? unwrap(list.items) : undefined;
}

/**
 * The key a JSON request body wraps its parameters under (`{"widget": {"name": ..}}`,
 * `{"data": {...}}`): its only property, when that is an object with properties. The parameters
 * are then the inner object's properties, and the body template sends them under the key.
 */
export function bodyWrapper(schema: Schema): string | undefined {
  const { props } = objectShape(schema);
  if (props.size !== 1) return undefined;
  const [key, wrapped] = [...props][0]!;
  const inner = unwrap(wrapped);
  return isRowSchema(inner) && typeOf(inner) !== 'array' && inner.readOnly !== true ? key : undefined;
}

/**
 * The item schema of a response that is one of several lists of rows (`anyOf: [array of
 * simple-user, array of stargazer]`): the richest one, by property count (first on a tie). The
 * others are usually the same rows wrapped for another media type (`{starred_at, user}`).
 */
function listAlternatives(s: Schema): Schema | undefined {
  if (s.properties || s.items) return undefined;
  const parts = [s.oneOf, s.anyOf].find((x) => Array.isArray(x)) as unknown[] | undefined;
  if (!parts || parts.length < 2) return undefined;
  const rows = parts.map((p) => {
    const items = isObj(p) && typeOf(p) === 'array' ? itemsOf(p) : undefined;
    return items && isRowSchema(items) ? items : undefined;
  });
  if (!rows.every((r) => r !== undefined)) return undefined;
  const size = (r: Schema) => objectShape(r).props.size;
  return rows.reduce((best, r) => (size(r) > size(best) ? r : best));
}
