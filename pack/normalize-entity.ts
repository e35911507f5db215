/** Entities of a source: fields (shorthand types expanded, nested objects and arrays) and relations. */
import type { Entity, FieldDef, Relation, TypeSpec } from './cgs.js';
import { isObj, type NormalizeContext, type Obj, text } from './normalize-context.js';
import type { KeyPath, SourceData } from './source.js';

/** The entity `name` as written in `f`, at CGS pointer `at`. */
export function normalizeEntity(cx: NormalizeContext, name: string, raw: Obj, f: SourceData, at: string): Entity {
  const base: KeyPath = ['entities', name];
  cx.mark(`${at}/id_field`, f, [...base, raw.id === undefined ? 'fields' : 'id']);
  const fields = normalizeFields(cx, isObj(raw.fields) ? raw.fields : {}, f, [...base, 'fields'], `${at}/fields`);
  const relations: Relation[] = [];
  for (const [rname, r] of Object.entries(isObj(raw.relations) ? raw.relations : {})) {
    const rat = `${at}/relations/${relations.length}`;
    const rsrc: KeyPath = [...base, 'relations', rname];
    cx.mark(rat, f, rsrc);
    for (const k of ['target', 'capability', 'bind', 'cardinality']) cx.mark(`${rat}/${k}`, f, [...rsrc, k]);
    const rr = r as Obj;
    const bind = isObj(rr.bind) ? (rr.bind as Record<string, string>) : {};
    for (const k of Object.keys(bind)) cx.mark(`${rat}/bind/${k}`, f, [...rsrc, 'bind', k]);
    relations.push({
      name: rname,
      description: text(rr.description, ''),
      target: String(rr.target),
      cardinality: rr.cardinality as 'one' | 'many',
      capability: String(rr.capability),
      bind: { ...bind },
    });
  }
  return { name, description: text(raw.description, ''), id_field: text(raw.id, 'id'), fields, relations };
}

function normalizeFields(cx: NormalizeContext, raw: Obj, f: SourceData, src: KeyPath, at: string): FieldDef[] {
  return Object.entries(raw).map(([fname, spec], i) => {
    cx.mark(`${at}/${i}`, f, [...src, fname]);
    const t = normalizeTypeSpec(cx, spec, f, [...src, fname], `${at}/${i}`);
    const description = isObj(spec) ? text(spec.description, '') : '';
    return { name: fname, description, ...t };
  });
}

/** A type as written (`string`, or `{type, values, entity, items, fields}`), with nested parts normalized. */
export function normalizeTypeSpec(
  cx: NormalizeContext,
  spec: unknown,
  f: SourceData,
  src: KeyPath,
  at: string,
): TypeSpec {
  if (typeof spec === 'string') return { type: spec } as TypeSpec;
  const s = isObj(spec) ? spec : {};
  const type = text(s.type, 'string');
  const out: Obj = { type };
  if (s.values !== undefined) out.values = s.values;
  if (s.entity !== undefined) out.entity = s.entity;
  if (s.items !== undefined) {
    cx.mark(`${at}/items`, f, [...src, 'items']);
    out.items = normalizeTypeSpec(cx, s.items, f, [...src, 'items'], `${at}/items`);
  }
  if (s.fields !== undefined || type === 'object') {
    cx.mark(`${at}/fields`, f, [...src, 'fields']);
    out.fields = normalizeFields(cx, isObj(s.fields) ? s.fields : {}, f, [...src, 'fields'], `${at}/fields`);
  }
  return out as TypeSpec;
}
