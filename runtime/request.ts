/**
 * Building vendor requests from CGS mappings (pure). Path parameters are URL-encoded, absent
 * optional parameters are omitted (and a body object none of whose parameters was passed, so a
 * body of none is not sent unless the mapping's `body_required` asks for `{}` or its constant), arrays follow
 * the mapping's `array_style`, bodies are JSON, form fields or multipart text fields (the
 * mapping's `body_encoding`), and a list that sorts gets the query keys of the order asked for.
 */
import { FormData } from 'undici';
import type { BodyEncoding, Capability, JsonValue, SortOrder } from '../pack/cgs.js';
import { jsonTemplateParams, parseTemplate } from '../pack/template.js';
import { formFields } from './form-fields.js';
import type { HttpRequest } from './http-client.js';

/** Resolved argument values by parameter name; absent = not given. */
export type Values = Record<string, JsonValue>;

/** Extra query parameters (pagination) and headers (auth) layered over the mapping. */
export interface RequestExtras {
  query?: Record<string, string>;
  headers?: Record<string, string>;
}

function scalar(v: JsonValue): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** Render a template; `undefined` when it refers to a parameter without a value. */
export function renderTemplate(
  t: string,
  values: Values,
  encode: (s: string) => string = (s) => s,
): string | undefined {
  const parsed = parseTemplate(t);
  let out = '';
  for (const part of parsed.parts) {
    if ('text' in part) {
      out += part.text;
      continue;
    }
    const v = values[part.param];
    if (v === undefined || v === null) return undefined;
    out += encode(Array.isArray(v) ? v.map(scalar).join(',') : scalar(v));
  }
  return out;
}

/**
 * Fill a JSON body template: whole-string templates keep the value's type; absent keys are
 * dropped, and so is an object that refers to parameters none of which was passed (an optional
 * nested object is not sent as `{}`). An object that refers to none is a constant, sent as written.
 * @example renderBody({ name: '{name}', extra: { size: '{size}' } }, { name: 'x' }) // { name: 'x' }
 */
export function renderBody(t: JsonValue, values: Values): JsonValue | undefined {
  if (typeof t === 'string') {
    const parsed = parseTemplate(t);
    if (parsed.whole !== undefined) return values[parsed.whole];
    return renderTemplate(t, values);
  }
  if (Array.isArray(t)) return t.map((x) => renderBody(x, values)).filter((x): x is JsonValue => x !== undefined);
  if (t !== null && typeof t === 'object') {
    const out: Record<string, JsonValue> = {};
    for (const [k, v] of Object.entries(t)) {
      const r = renderBody(v, values);
      if (r !== undefined) out[k] = r;
    }
    return Object.keys(out).length === 0 && jsonTemplateParams(t).length > 0 ? undefined : out;
  }
  return t;
}

/** The query string of a mapping for these values (without the leading `?`). */
export function renderQuery(cap: Capability, values: Values, extra: Record<string, string> = {}): string {
  const q = new URLSearchParams();
  for (const [key, t] of Object.entries(cap.http.query)) {
    const parsed = parseTemplate(t);
    const v = parsed.whole !== undefined ? values[parsed.whole] : undefined;
    if (parsed.whole !== undefined && Array.isArray(v)) {
      if (cap.http.array_style === 'comma') q.append(key, v.map(scalar).join(','));
      else for (const item of v) q.append(key, scalar(item));
      continue;
    }
    const s = renderTemplate(t, values);
    if (s !== undefined) q.append(key, s);
  }
  for (const [k, v] of Object.entries(extra)) q.set(k, v);
  return q.toString();
}

/**
 * The query keys asking a list for an order: `sort` (a plan step's), else the mapping's default
 * order; `{}` when the list does not sort or no order is asked.
 * @example sortQuery(listTickets, { field: 'createdAt', order: 'desc' }) // { _sort: 'createdAt', _order: 'desc' }
 */
export function sortQuery(cap: Capability, sort?: { field: string; order: SortOrder }): Record<string, string> {
  const s = cap.http.sort;
  const want = sort ?? s?.default;
  if (!s || !want) return {};
  const desc = want.order === 'desc';
  if ('desc_prefix' in s) return { [s.param]: desc ? `${s.desc_prefix}${want.field}` : want.field };
  return { [s.param]: want.field, [s.order_param]: desc ? s.desc : s.asc };
}

/** The full request for one vendor call. `baseUrl` has no trailing slash. */
export function buildRequest(
  baseUrl: string,
  cap: Capability,
  values: Values,
  extras: RequestExtras = {},
): HttpRequest {
  const path = renderTemplate(cap.http.path, values, encodeURIComponent) ?? cap.http.path;
  const query = renderQuery(cap, values, extras.query);
  const headers: Record<string, string> = { accept: 'application/json' };
  for (const [k, t] of Object.entries(cap.http.headers)) {
    const s = renderTemplate(t, values);
    if (s !== undefined) headers[k.toLowerCase()] = s;
  }
  Object.assign(headers, extras.headers);
  const req: HttpRequest = { method: cap.http.method, url: `${baseUrl}${path}${query ? `?${query}` : ''}`, headers };
  if (cap.http.method !== 'GET') {
    const { body: t, body_required: required } = cap.http;
    // A required body of no parameter passed is sent as `{}`, or as the constant the mapping gives.
    const body = (t !== undefined ? renderBody(t, values) : undefined) ?? (required === true ? {} : required);
    if (body !== undefined) encodeBody(req, body, cap.http.body_encoding ?? 'json');
  }
  return req;
}

/**
 * Set the body of `req` in its encoding. A multipart body is a FormData of text fields: the HTTP
 * client writes it with its boundary and sets the `multipart/form-data` content type itself.
 */
function encodeBody(req: HttpRequest, body: JsonValue, encoding: BodyEncoding): void {
  if (encoding === 'json') {
    req.body = JSON.stringify(body);
    req.headers['content-type'] = 'application/json';
  } else if (encoding === 'form') {
    req.body = new URLSearchParams(formFields(body)).toString();
    req.headers['content-type'] = 'application/x-www-form-urlencoded';
  } else {
    const form = new FormData();
    for (const [k, v] of formFields(body)) form.append(k, v);
    req.body = form;
  }
}
