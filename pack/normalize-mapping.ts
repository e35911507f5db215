/**
 * HTTP mappings of a source (`mappings:`): the `GET /path` shorthand, parameters not placed
 * anywhere sent in the query (GET, DELETE) or the body, the body's encoding (kept only when it is
 * not JSON) and whether the vendor requires it (kept only when it does), path parameters made required, and pagination with its style's keys and defaults.
 */
import type { Capability, HttpMapping, HttpMethod, JsonValue, Pagination } from './cgs.js';
import { isObj, type NormalizeContext, type Obj, text } from './normalize-context.js';
import type { KeyPath, SourceData } from './source.js';
import { jsonTemplateParams, parseTemplate } from './template.js';

/** A mapping as written, and the file it was written in. */
export interface RawMapping {
  raw: unknown;
  src: SourceData;
}

/** Keys each pagination style takes besides page_size, max_page_size and size_param. */
export const PAGINATION_KEYS: Record<string, string[]> = {
  page: ['page_param', 'first_page', 'omit_first_page', 'has_more'],
  offset: ['offset_param', 'has_more'],
  cursor: ['cursor_param', 'next_cursor', 'cursor_field', 'has_more'],
  link: ['page_param', 'first_page', 'omit_first_page', 'next_url'],
};

/** Every file's mappings by capability name; a name mapped again is a `duplicate_name`. */
export function collectMappings(cx: NormalizeContext, files: SourceData[]): Map<string, RawMapping> {
  const out = new Map<string, RawMapping>();
  for (const f of files) {
    for (const [name, raw] of Object.entries(isObj(f.data.mappings) ? f.data.mappings : {})) {
      const prev = out.get(name);
      if (prev) {
        const at = `/#mapping-dup/${name}/${f.file}`;
        cx.mark(at, f, ['mappings', name]);
        cx.fail(
          at,
          'duplicate_name',
          `mapping \`${name}\` is declared again (first in ${prev.src.file})`,
          'keep one mapping per capability',
        );
        continue;
      }
      out.set(name, { raw, src: f });
    }
  }
  return out;
}

/** The HTTP mapping of `cap` (whose required path parameters it updates), at CGS pointer `at`. */
export function normalizeMapping(
  cx: NormalizeContext,
  raw: unknown,
  cap: Capability,
  f: SourceData,
  src: KeyPath,
  at: string,
): HttpMapping {
  cx.mark(at, f, src);
  for (const k of [
    'method',
    'path',
    'query',
    'headers',
    'body',
    'body_encoding',
    'body_required',
    'pagination',
    'response',
    'array_style',
  ])
    cx.mark(`${at}/${k}`, f, [...src, k]);
  let m: Obj;
  if (typeof raw === 'string') {
    const [method, path] = raw.trim().split(/\s+/, 2);
    m = { method, path };
  } else {
    m = raw as Obj;
  }
  const method = m.method as HttpMethod;
  const http: HttpMapping = {
    method,
    path: String(m.path),
    query: templateMap(m.query),
    headers: templateMap(m.headers),
    array_style: (m.array_style as 'repeat' | 'comma' | undefined) ?? 'repeat',
    response: { path: '' },
  };
  if (m.body !== undefined) http.body = m.body as JsonValue;
  // `json` is the default and is not written, so a catalog that says it keeps the hash it had.
  if (m.body_encoding === 'form' || m.body_encoding === 'multipart') http.body_encoding = m.body_encoding;
  // Likewise `body_required: false` is the default and is not kept.
  if (m.body_required === true || isObj(m.body_required))
    http.body_required = m.body_required as HttpMapping['body_required'] & {};
  const used = new Set<string>([
    ...parseTemplate(http.path).params,
    ...Object.values(http.query).flatMap((t) => parseTemplate(t).params),
    ...Object.values(http.headers).flatMap((t) => parseTemplate(t).params),
    ...(http.body !== undefined ? jsonTemplateParams(http.body) : []),
  ]);
  const rest = cap.params.filter((p) => !used.has(p.name));
  // Terse mappings: parameters not placed anywhere go to the query (GET, DELETE) or the body.
  if (method === 'GET' || method === 'DELETE') {
    if (m.query === undefined) for (const p of rest) http.query[p.name] = `{${p.name}}`;
  } else if (m.body === undefined && rest.length > 0) {
    http.body = Object.fromEntries(rest.map((p) => [p.name, `{${p.name}}`]));
  }
  // Path parameters must always be present: they are required unless the author said otherwise.
  const capAt = at.replace(/\/http$/, '');
  for (const name of parseTemplate(http.path).params) {
    const i = cap.params.findIndex((x) => x.name === name);
    const explicit = cx.origins.has(`${capAt}/params/${i}/required`);
    if (i >= 0 && !explicit) cap.params[i]!.required = true;
  }
  if (isObj(m.pagination)) {
    http.pagination = normalizePagination(m.pagination);
    for (const k of Object.keys(m.pagination)) cx.mark(`${at}/pagination/${k}`, f, [...src, 'pagination', k]);
    const own = [
      'style',
      'page_size',
      'max_page_size',
      'size_param',
      ...(PAGINATION_KEYS[String(m.pagination.style)] ?? []),
    ];
    for (const k of Object.keys(m.pagination).filter((x) => !own.includes(x))) {
      cx.fail(
        `${at}/pagination/${k}`,
        'bad_mapping',
        `\`${k}\` does not apply to ${String(m.pagination.style)} pagination`,
        `${String(m.pagination.style)} pagination takes ${own.slice(1).join(', ')}`,
      );
    }
  }
  if (isObj(m.response)) {
    http.response = { path: text(m.response.path, '') };
    if (isObj(m.response.total)) {
      http.response.total = { ...(m.response.total as { header: string }) };
      cx.mark(`${at}/response/total`, f, [...src, 'response', 'total']);
    }
    if (typeof m.response.value === 'string') {
      http.response.value = m.response.value;
      cx.mark(`${at}/response/value`, f, [...src, 'response', 'value']);
    }
  }
  return http;
}

function templateMap(v: unknown): Record<string, string> {
  if (Array.isArray(v)) return Object.fromEntries(v.map((n) => [String(n), `{${String(n)}}`]));
  if (isObj(v)) return Object.fromEntries(Object.entries(v).map(([k, t]) => [k, String(t)]));
  return {};
}

function normalizePagination(p: Obj): Pagination {
  const pageSize = (p.page_size as number | undefined) ?? 25;
  const common: Obj = {
    style: p.style,
    page_size: pageSize,
    max_page_size: p.max_page_size ?? Math.max(100, pageSize),
  };
  if (p.size_param !== undefined) common.size_param = p.size_param;
  for (const k of PAGINATION_KEYS[String(p.style)] ?? []) if (p[k] !== undefined) common[k] = p[k];
  // `false` is the default and is not written, so a catalog that says it keeps the hash it had.
  if (common.omit_first_page !== true) delete common.omit_first_page;
  if (p.style === 'page' || p.style === 'link') common.first_page = p.first_page ?? 1;
  return common as unknown as Pagination;
}
