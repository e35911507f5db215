/**
 * The operations of a dereferenced OpenAPI 3.x document, in document order: method, path,
 * parameters (path-level merged with operation-level), the request body (JSON, else a form, else
 * multipart) and the schema, media types and headers of the success response. `--include`/`--exclude` globs filter them here.
 */
import type { BodyEncoding } from '../cgs.js';
import { isObj, type Schema } from './schema.js';

export const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
export type Method = (typeof METHODS)[number];

export interface OpParam {
  name: string;
  in: string;
  required: boolean;
  schema: Schema;
  description?: string;
  /** How an array or object value is serialized (`form`, `spaceDelimited`, ...), when the document says. */
  style?: string;
  /** Whether each item of an array is its own key (`a=1&a=2`); the document's value, when it gives one. */
  explode?: boolean;
  deprecated?: true;
}

export interface Operation {
  method: Method;
  path: string;
  operationId?: string;
  tags: string[];
  summary: string;
  description: string;
  params: OpParam[];
  /**
   * The request body's schema and how it is encoded: JSON when the document offers it, else
   * `application/x-www-form-urlencoded` (`form`), else `multipart/form-data` (`multipart`).
   */
  body?: { schema: Schema; required: boolean; encoding: BodyEncoding; parts?: Record<string, Schema> };
  /** The request body is none of those (a file, XML, plain text): its media types. */
  bodyNotJson?: { required: boolean; types: string[] };
  /**
   * Success response: its JSON schema (if any), the media types it declares (`[]` when it
   * declares no content, or the document gives only a `default` response) and the names of its
   * declared headers.
   */
  response: {
    status: string;
    schema?: Schema;
    types: string[];
    headers: string[];
    /**
     * What svc asks for (`Accept`) when the document declares the answer's JSON under another media
     * type only (`application/vnd.amadeus+json`, `application/hal+json`, `*\/*`): a vendor may refuse
     * `Accept: application/json` there (406).
     */
    accept?: string;
  };
  /**
   * What the document's path key carries besides a path: a query string (`/items?action=archive`,
   * a Swagger path overloaded by a fixed query), sent as constant query values, and a fragment
   * (`/#X-Amz-Target=Svc.CreateKey`, never sent on the wire), kept to name and classify the
   * operation. `path` is the path alone.
   */
  fixed?: { query: Record<string, string>; fragment?: string; key: string };
  /** `GET /pets/{id} (getPet)`, with the document's path key. */
  label: string;
  /** The document marks the operation `deprecated`. */
  deprecated?: true;
}

export const JSON_TYPE = /^application\/([\w.-]+\+)?json\b|^\*\/\*$/i;
/** The media types of request bodies svc sends, in the order it prefers them. */
const BODY_TYPES: Array<[BodyEncoding, RegExp]> = [
  ['json', JSON_TYPE],
  ['form', /^application\/x-www-form-urlencoded\b/i],
  ['multipart', /^multipart\/form-data\b/i],
];

/** The media type object of `content` whose type matches, when it has a schema. */
function media(content: unknown, type: RegExp): Schema | undefined {
  if (!isObj(content)) return undefined;
  const key = Object.keys(content).find((k) => type.test(k));
  const m = key ? (content[key] as Schema) : undefined;
  return isObj(m) && isObj(m.schema) ? m : undefined;
}

const jsonSchema = (content: unknown) => media(content, JSON_TYPE)?.schema as Schema | undefined;

/**
 * The request body svc can send: JSON if offered, else a form, else multipart; undefined when
 * none. A form or multipart body keeps the document's `encoding` map (per property: style,
 * explode, contentType) as `parts`.
 */
function requestBody(rb: Schema): Operation['body'] {
  for (const [encoding, type] of BODY_TYPES) {
    const m = media(rb.content, type);
    if (!m) continue;
    const parts = encoding !== 'json' && isObj(m.encoding) ? (m.encoding as Record<string, Schema>) : undefined;
    return { schema: m.schema as Schema, required: rb.required === true, encoding, ...(parts ? { parts } : {}) };
  }
  return undefined;
}

function params(list: unknown): OpParam[] {
  if (!Array.isArray(list)) return [];
  return list.filter(isObj).map((p) => ({
    name: String(p.name),
    in: String(p.in),
    required: p.in === 'path' || p.required === true,
    schema: isObj(p.schema) ? p.schema : isObj(p.content) ? (jsonSchema(p.content) ?? {}) : {},
    ...(typeof p.description === 'string' ? { description: p.description } : {}),
    ...(typeof p.style === 'string' ? { style: p.style } : {}),
    ...(typeof p.explode === 'boolean' ? { explode: p.explode } : {}),
    ...(p.deprecated === true || (isObj(p.schema) && p.schema.deprecated === true)
      ? { deprecated: true as const }
      : {}),
  }));
}

function successResponse(responses: unknown): Operation['response'] {
  if (!isObj(responses)) return { status: '', types: [], headers: [] };
  const codes = Object.keys(responses).sort();
  const status = codes.find((c) => /^2\d\d$/.test(c)) ?? codes.find((c) => /^2XX$/i.test(c)) ?? '';
  const r = status ? (responses[status] as Schema) : undefined;
  const schema = isObj(r) ? jsonSchema(r.content) : undefined;
  const headers = isObj(r) && isObj(r.headers) ? Object.keys(r.headers) : [];
  const accept = schema && isObj(r) ? acceptOf(r.content) : undefined;
  const types = isObj(r) && isObj(r.content) ? Object.keys(r.content) : [];
  return { status, ...(schema ? { schema } : {}), types, headers, ...(accept ? { accept } : {}) };
}

/** The JSON media type an answer is declared under, when none of them is `application/json`. */
function acceptOf(content: unknown): string | undefined {
  if (!isObj(content)) return undefined;
  const types = Object.keys(content).filter(
    (k) => JSON_TYPE.test(k) && isObj((content[k] as Schema | undefined)?.schema),
  );
  return types.length > 0 && !types.some((k) => /^application\/json\b/i.test(k)) ? types[0] : undefined;
}

/**
 * A document's path key split into the path sent, the query it fixes and its fragment:
 * `/items?action=archive` -> `/items` with `{action: archive}`; `/#X-Amz-Target=Kms.CreateKey`
 * -> `/` with the fragment `X-Amz-Target=Kms.CreateKey`.
 */
export function splitPathKey(key: string): { path: string; query: Record<string, string>; fragment?: string } {
  const hash = key.indexOf('#');
  const fragment = hash >= 0 ? key.slice(hash + 1) : undefined;
  const noHash = hash >= 0 ? key.slice(0, hash) : key;
  const q = noHash.indexOf('?');
  const path = (q >= 0 ? noHash.slice(0, q) : noHash) || '/';
  const query: Record<string, string> = {};
  if (q >= 0) for (const [k, v] of new URLSearchParams(noHash.slice(q + 1))) if (k) query[k] = v;
  return { path, query, ...(fragment ? { fragment } : {}) };
}

/**
 * A path key's query that names a parameter (`/search?term={term}&amount={amount}`, the parameters
 * declared `in: path`, or `in: query` too) sends that parameter in the query, not a constant
 * `{term}`: a path one moves to the query under the key's name, and only true constants stay fixed.
 */
function queryTemplates(
  declared: OpParam[],
  fixed: Operation['fixed'],
): { merged: OpParam[]; fixedOwn: Operation['fixed'] } {
  if (!fixed) return { merged: declared, fixedOwn: undefined };
  const merged = [...declared];
  const query: Record<string, string> = {};
  for (const [k, v] of Object.entries(fixed.query)) {
    const ref = /^\{([^}]+)\}$/.exec(v)?.[1];
    const i = ref === undefined ? -1 : merged.findIndex((p) => p.name === ref && p.in === 'path');
    if (i >= 0) merged[i] = { ...merged[i]!, in: 'query', name: k };
    // Declared as a query parameter already: it is sent from there.
    else if (ref === undefined || !merged.some((p) => p.name === ref && p.in === 'query')) query[k] = v;
  }
  return { merged, fixedOwn: { ...fixed, query } };
}

/** Every operation of `doc` (GET, POST, PUT, PATCH, DELETE), path-level parameters merged in. */
export function collectOperations(doc: Schema): { ops: Operation[]; other: string[] } {
  const ops: Operation[] = [];
  const other: string[] = [];
  for (const [key, item] of Object.entries(isObj(doc.paths) ? doc.paths : {})) {
    if (!isObj(item)) continue;
    const { path, query, fragment } = splitPathKey(key);
    const fixed = path !== key ? { query, ...(fragment ? { fragment } : {}), key } : undefined;
    const shared = params(item.parameters);
    for (const m of ['head', 'options', 'trace']) if (isObj(item[m])) other.push(`${m.toUpperCase()} ${key}`);
    for (const method of METHODS) {
      const op: unknown = item[method];
      if (!isObj(op)) continue;
      const own = params(op.parameters);
      const declared = [...shared.filter((s) => !own.some((o) => o.name === s.name && o.in === s.in)), ...own];
      const { merged, fixedOwn } = queryTemplates(declared, fixed);
      const rb = isObj(op.requestBody) ? op.requestBody : undefined;
      const body = rb ? requestBody(rb) : undefined;
      const id = typeof op.operationId === 'string' ? op.operationId : undefined;
      ops.push({
        method,
        path,
        ...(id ? { operationId: id } : {}),
        tags: Array.isArray(op.tags) ? op.tags.map(String) : [],
        summary: typeof op.summary === 'string' ? op.summary : '',
        description: typeof op.description === 'string' ? op.description : '',
        params: merged,
        ...(body ? { body } : {}),
        ...(rb && !body
          ? { bodyNotJson: { required: rb.required === true, types: Object.keys(isObj(rb.content) ? rb.content : {}) } }
          : {}),
        response: successResponse(op.responses),
        ...(fixedOwn ? { fixed: fixedOwn } : {}),
        label: `${method.toUpperCase()} ${key}${id ? ` (${id})` : ''}`,
        ...(op.deprecated === true ? { deprecated: true as const } : {}),
      });
    }
  }
  return { ops, other };
}

/** A glob over paths and operationIds: `*` within a segment, `**` across segments, `?` one character. */
export function globToRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*' && glob[i + 1] === '*') {
      re += '.*';
      i++;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

/** Keep operations matching an include glob (all when none given) and no exclude glob. */
export function filterOperations(ops: Operation[], include: string[], exclude: string[]): Operation[] {
  const inc = include.map(globToRegExp);
  const exc = exclude.map(globToRegExp);
  const hit = (res: RegExp[], op: Operation) =>
    res.some(
      (r) =>
        r.test(op.path) ||
        (op.fixed !== undefined && r.test(op.fixed.key)) ||
        (op.operationId !== undefined && r.test(op.operationId)),
    );
  return ops.filter((op) => (inc.length === 0 || hit(inc, op)) && !hit(exc, op));
}
