/**
 * Decoding vendor responses (pure): JSON with a JSON content type, rows or the row found where
 * the mapping says, totals, next-page markers, and values coerced to the declared field types; or,
 * for a value answer (`response.value`), the answer whole (text or any JSON value) as one row.
 */
import {
  READ_KINDS,
  type Capability,
  type Entity,
  type FieldDef,
  type JsonValue,
  type Pagination,
  type TypeSpec,
} from '../pack/cgs.js';
import { isFileType, mediaType } from '../pack/media-types.js';
import { headerOf, type HttpResponse } from './http-client.js';
import { jsonDeeperThan, MAX_VENDOR_JSON_DEPTH } from './json-depth.js';
import { rowShapeProblem } from './row-shape.js';

export type Row = Record<string, JsonValue>;

export type Decoded =
  | {
      ok: true;
      rows: Row[];
      total?: number;
      /** The vendor's total as sent, when it is not a count (negative, fractional, not a number): ignored. */
      totalIgnored?: string;
      nextCursor?: string;
      nextLink?: string;
      /** The answer's `has_more` flag, when the pagination declares one and the answer carries a boolean there. */
      hasMore?: boolean;
      body: unknown;
    }
  /** `code` is set when the answer is JSON in the right place but not rows of the entity. */
  | { ok: false; problem: string; hint?: string; code?: 'response_shape_mismatch' };

/** Follow a dot path (`data.items`); `""` is the value itself. */
export function atPath(value: unknown, path: string): unknown {
  if (!path) return value;
  let cur: unknown = value;
  for (const seg of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[seg];
  }
  return cur;
}

/** The URL of `rel="next"` in a Link header, if any. */
export function nextLinkOf(link: string | undefined): string | undefined {
  if (!link) return undefined;
  for (const part of link.split(/,(?=\s*<)/)) {
    const m = /^\s*<([^>]*)>\s*;(.*)$/.exec(part);
    if (!m) continue;
    const rel = /(?:^|;)\s*rel\s*=\s*(?:"([^"]*)"|([^;\s]+))/i.exec(m[2]!);
    const values = (rel?.[1] ?? rel?.[2] ?? '').toLowerCase().split(/\s+/);
    if (values.includes('next')) return m[1];
  }
  return undefined;
}

function isJsonType(ct: string | undefined): boolean {
  if (!ct) return false;
  // The common spelling first: `application/json`, alone or with parameters.
  if (ct.startsWith('application/json') && (ct.length === 16 || ct.charCodeAt(16) === 59)) return true;
  const t = mediaType(ct);
  return t === 'application/json' || t.endsWith('+json');
}

/**
 * Decode a successful response of `cap`. With `entity`, the rows of a read must be rows of it
 * (runtime/row-shape.ts): an object carrying at least one declared field, else
 * `response_shape_mismatch`. A write's answer is not checked so: the write has landed. A value
 * answer (`response.value`) is one row `{[value]: answer}` (see `answerValue`), checked for nothing.
 */
export function decodeResponse(cap: Capability, res: HttpResponse, entity?: Entity): Decoded {
  const field = cap.http.response.value;
  if (field !== undefined) {
    // A value answer (a singleton get): one row holding the answer whole; no shape check, no paging.
    const text = entity?.fields.find((f) => f.name === field)?.type === 'string';
    const v = answerValue(res, cap.http.response.path, text);
    return v.ok ? { ok: true, rows: [{ [field]: v.value }], body: v.value } : v;
  }
  const body = res.body;
  if (cap.returns === 'none' && body.length === 0) return { ok: true, rows: [], body: null };
  if (body.length === 0)
    return cap.returns === 'none'
      ? { ok: true, rows: [], body: null }
      : { ok: false, problem: 'the vendor answered with an empty body' };
  const type = headerOf(res, 'content-type');
  if (!isJsonType(type)) {
    if (cap.returns === 'none') return { ok: true, rows: [], body: null };
    return {
      ok: false,
      problem: `the vendor answered with content type \`${type ?? 'none'}\`, not JSON`,
    };
  }
  const json = parseJson(body);
  if (!json.ok) return json;
  const parsed = json.value;
  // A capability that returns nothing reads no rows: an answer past the depth bound is dropped instead.
  if (cap.returns === 'none') return { ok: true, rows: [], body: json.deep ? null : parsed };
  if (json.deep) return deepProblem();
  const at = atPath(parsed, cap.http.response.path);
  let rows: unknown[];
  if (cap.returns === 'rows') {
    if (!Array.isArray(at))
      return {
        ok: false,
        problem: `expected a list of rows at \`${cap.http.response.path || '(body)'}\`, found ${describe(at)}`,
      };
    rows = at;
  } else {
    if (at === null || typeof at !== 'object' || Array.isArray(at))
      return {
        ok: false,
        problem: `expected one row (an object) at \`${cap.http.response.path || '(body)'}\`, found ${describe(at)}`,
      };
    rows = [at];
  }
  if (entity && READ_KINDS.has(cap.kind)) {
    const bad = rowShapeProblem(entity, cap, rows);
    if (bad) return { ok: false, code: 'response_shape_mismatch', ...bad };
  }
  const out: Decoded = {
    ok: true,
    rows: rows.filter((r): r is Row => r !== null && typeof r === 'object' && !Array.isArray(r)),
    body: parsed,
  };
  const total = cap.http.response.total;
  if (total) {
    const raw = 'header' in total ? headerOf(res, total.header.toLowerCase()) : atPath(parsed, total.path);
    const n = countOf(raw);
    if (n !== undefined) out.total = n;
    else if (raw !== undefined && raw !== null) out.totalIgnored = shownTotal(raw);
  }
  const pg = cap.http.pagination;
  if (pg) Object.assign(out, pageMarkers(pg, res, parsed, out.rows));
  return out;
}

type Problem = Extract<Decoded, { ok: false }>;

/** JSON text parsed, and whether it is nested past the bound (then nothing may walk it). */
function parseJson(body: Buffer): { ok: true; value: unknown; deep: boolean } | Problem {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch (e) {
    return { ok: false, problem: `the vendor answered with malformed JSON (${(e as Error).message.split('\n')[0]})` };
  }
  // Before anything walks it: later walks recurse, and a deeper value would overflow their stack.
  return { ok: true, value, deep: jsonDeeperThan(value, MAX_VENDOR_JSON_DEPTH) };
}

function deepProblem(): Problem {
  return {
    ok: false,
    problem: `the vendor answer is nested deeper than ${MAX_VENDOR_JSON_DEPTH} levels (arrays or objects inside each other)`,
    hint: `svc reads vendor answers up to ${MAX_VENDOR_JSON_DEPTH} levels deep, which no real API reaches; check the catalog's backend URL, or ask the vendor why it answers so`,
  };
}

/**
 * The value of a value answer (`response.value`): an empty body is `""` (a string field) or
 * null; a file (pack/media-types.ts) is refused; into a string field goes the body as UTF-8 text, whatever
 * its type; otherwise a JSON answer is parsed and the value at `path` taken whole (object, list,
 * scalar, null), and any other answer (text, XML, YAML, CSV, no content type) is its text.
 */
function answerValue(res: HttpResponse, path: string, text: boolean): { ok: true; value: JsonValue } | Problem {
  if (res.body.length === 0) return { ok: true, value: text ? '' : null };
  const type = headerOf(res, 'content-type');
  const media = mediaType(type ?? '');
  if (isFileType(media))
    return {
      ok: false,
      problem: `the vendor answered a file (\`${media}\`, ${res.body.length.toLocaleString('en-US')} bytes); svc reads text and JSON only`,
      hint: 'this read answers a file, which a program cannot use: read its metadata with another capability, or ask the vendor for a text or JSON form',
    };
  if (text || !isJsonType(type)) return { ok: true, value: res.body.toString('utf8') };
  const json = parseJson(res.body);
  if (!json.ok) return json;
  if (json.deep) return deepProblem();
  const at = atPath(json.value, path);
  if (at === undefined)
    return {
      ok: false,
      code: 'response_shape_mismatch',
      problem: `expected a value at \`${path}\`, found nothing`,
      hint: "check the mapping's `response.path`: leave it out to read the whole answer",
    };
  return { ok: true, value: at as JsonValue };
}

/**
 * Where the answer says the next page is: a cursor (at `next_cursor` in the body, or the
 * `cursor_field` of the last row), a next URL (at `next_url` in the body, or the `Link` header),
 * and whether the vendor has more (the boolean at `has_more`). An empty string is no marker.
 */
function pageMarkers(
  pg: Pagination,
  res: HttpResponse,
  body: unknown,
  rows: Row[],
): { nextCursor?: string; nextLink?: string; hasMore?: boolean } {
  const out: { nextCursor?: string; nextLink?: string; hasMore?: boolean } = {};
  if (pg.style === 'cursor') {
    const c = pg.cursor_field !== undefined ? atPath(rows.at(-1), pg.cursor_field) : atPath(body, pg.next_cursor ?? '');
    if ((typeof c === 'string' && c !== '') || typeof c === 'number') out.nextCursor = String(c);
  } else if (pg.style === 'link') {
    const l = pg.next_url !== undefined ? atPath(body, pg.next_url) : nextLinkOf(headerOf(res, 'link'));
    if (typeof l === 'string' && l !== '') out.nextLink = l;
  }
  if (pg.style !== 'link' && pg.has_more !== undefined) {
    const more = atPath(body, pg.has_more);
    if (typeof more === 'boolean') out.hasMore = more;
  }
  return out;
}

/**
 * A vendor total that is a count: a whole number from 0 up to 2^53 - 1, or a string of digits
 * with that value. Anything else (negative, fractional, a word, an object) is no total.
 */
function countOf(raw: unknown): number | undefined {
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d+$/.test(raw.trim()) ? Number(raw) : NaN;
  return Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}

/** A refused total as the vendor sent it, cut short (it is said back to the reader). */
function shownTotal(raw: unknown): string {
  const s = typeof raw === 'string' ? raw : (JSON.stringify(raw) ?? String(raw));
  return s.length > 40 ? `${s.slice(0, 37)}...` : s;
}

function describe(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

/** Coerce one value to a declared type when the vendor sent a compatible other form ("12" -> 12). */
export function coerce(t: TypeSpec, v: JsonValue): JsonValue {
  if (v === null) return null;
  switch (t.type) {
    case 'integer':
      if (typeof v === 'string' && /^-?\d+$/.test(v.trim())) return Number(v);
      return v;
    case 'number':
      if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
      return v;
    case 'boolean':
      if (v === 'true' || v === 1 || v === '1') return true;
      if (v === 'false' || v === 0 || v === '0') return false;
      return v;
    case 'string':
    case 'date':
    case 'datetime':
      return typeof v === 'number' || typeof v === 'boolean' ? String(v) : v;
    case 'enum':
      if (typeof v === 'string' && t.values.every((x) => typeof x === 'number') && Number.isFinite(Number(v)))
        return Number(v);
      if (typeof v === 'number' && t.values.every((x) => typeof x === 'string')) return String(v);
      return v;
    case 'array':
      return Array.isArray(v) ? v.map((x) => coerce(t.items, x)) : v;
    case 'object': {
      if (typeof v !== 'object' || Array.isArray(v)) return v;
      return shapeRow(t.fields, v);
    }
    case 'ref':
      return v;
  }
}

/**
 * Keep the declared fields of a vendor row (unknown vendor fields stay out), coerced. A row that
 * is already so (the declared fields in their order, each of its type) is answered as it is: the
 * copy would equal it (rows are fresh from the vendor's JSON, owned by the caller).
 */
export function shapeRow(fields: FieldDef[], raw: Row): Row {
  if (fields.length === 0) return { ...raw };
  if (inShape(fields, raw)) return raw;
  const out: Row = {};
  for (const f of fields) {
    const v = raw[f.name];
    if (v !== undefined) out[f.name] = coerce(f, v);
  }
  return out;
}

/**
 * True when `raw`'s enumerable keys are `fields`' names in order, none undefined, and coercing
 * each value gives that value (a nested object or list, which coercion copies, does not).
 */
function inShape(fields: FieldDef[], raw: Row): boolean {
  let i = 0;
  for (const k in raw) {
    const f = fields[i++];
    if (f === undefined || f.name !== k) return false;
    const v = raw[k];
    if (v === undefined || coerce(f, v) !== v) return false;
  }
  return i === fields.length;
}

/** Decoded rows of an entity: declared fields only, coerced. */
export function shapeRows(entity: Entity, rows: Row[]): Row[] {
  return rows.map((r) => shapeRow(entity.fields, r));
}

/** Apply a projection (field order as projected). */
export function project(rows: Row[], projection: string[] | undefined): Row[] {
  if (!projection) return rows;
  return rows.map((r) => {
    const out: Row = {};
    for (const f of projection) if (r[f] !== undefined) out[f] = r[f];
    return out;
  });
}
