/**
 * The `sort:` of a list mapping: every default made explicit (the fields default to every field
 * of the entity that is not an array or an object; `asc`/`desc` to "asc"/"desc"; a default order
 * to ascending). What is inconsistent is kept as written, for the checks to report.
 */
import type { Entity, FieldDef, SortMapping } from './cgs.js';
import { isObj, type NormalizeContext, text } from './normalize-context.js';
import type { KeyPath, SourceData } from './source.js';

/** A field a vendor can order rows by: a scalar, an enum or a ref (not an array or an object). */
export function isSortable(f: FieldDef): boolean {
  return f.type !== 'array' && f.type !== 'object';
}

/** The fields a `sort:` without `fields:` sorts by. */
export function sortableFields(entity: Entity): string[] {
  return entity.fields.filter(isSortable).map((f) => f.name);
}

/** The sort of mapping `raw` (as written) of a capability about `entity`, at CGS pointer `at` (its http). */
export function normalizeSort(
  cx: NormalizeContext,
  raw: unknown,
  entity: Entity | undefined,
  f: SourceData,
  src: KeyPath,
  at: string,
): SortMapping | undefined {
  if (!isObj(raw) || !isObj(raw.sort)) return undefined;
  const s = raw.sort;
  const sat = `${at}/sort`;
  const ssrc: KeyPath = [...src, 'sort'];
  cx.mark(sat, f, ssrc);
  for (const k of Object.keys(s)) cx.mark(`${sat}/${k}`, f, [...ssrc, k]);
  const written = Array.isArray(s.fields) ? s.fields.map((x) => text(x)) : undefined;
  written?.forEach((_, i) => cx.mark(`${sat}/fields/${i}`, f, [...ssrc, 'fields', i]));
  const out: Record<string, unknown> = {
    fields: written ?? (entity ? sortableFields(entity) : []),
    param: text(s.param),
  };
  if (s.order_param !== undefined) {
    out.order_param = text(s.order_param);
    out.asc = text(s.asc, 'asc');
    out.desc = text(s.desc, 'desc');
  } else {
    // asc/desc without order_param are kept for the checks to report: they would never be sent.
    if (s.asc !== undefined) out.asc = text(s.asc);
    if (s.desc !== undefined) out.desc = text(s.desc);
  }
  if (s.desc_prefix !== undefined) out.desc_prefix = text(s.desc_prefix);
  if (isObj(s.default)) {
    out.default = { field: text(s.default.field), order: s.default.order === 'desc' ? 'desc' : 'asc' };
    cx.mark(`${sat}/default/field`, f, [...ssrc, 'default', 'field']);
  }
  return out as unknown as SortMapping;
}
