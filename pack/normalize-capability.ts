/**
 * Capabilities of a source: parameters (typed, or taking the type of an entity field), the
 * default `returns` and `id_param` of each kind, and the capability's HTTP mapping.
 */
import { parseTemplate } from './template.js';
import { suggestHint } from '../common/suggest.js';
import type { Capability, CapabilityKind, Entity, JsonValue, ParamDef, Returns, TypeSpec } from './cgs.js';
import { CONSTRAINT_KEYS } from './cgs.js';
import { normalizeTypeSpec } from './normalize-entity.js';
import { isObj, type NormalizeContext, type Obj, text } from './normalize-context.js';
import { normalizeMapping, type RawMapping } from './normalize-mapping.js';
import { normalizeSort } from './normalize-sort.js';
import { isPoisoned } from './prune-invalid.js';
import type { KeyPath, SourceData } from './source.js';

/** The capability `name` as written in `f` (about `entity`, mapped by `mapping`), at CGS pointer `at`. */
export function normalizeCapability(
  cx: NormalizeContext,
  name: string,
  raw: Obj,
  entity: Entity | undefined,
  mapping: RawMapping | undefined,
  f: SourceData,
  at: string,
): Capability {
  const src: KeyPath = ['capabilities', name];
  for (const k of ['kind', 'entity', 'id_param', 'singleton', 'returns']) cx.mark(`${at}/${k}`, f, [...src, k]);
  cx.mark(`${at}/params`, f, [...src, 'params']);
  const kind = raw.kind as CapabilityKind;
  const params = normalizeParams(cx, raw.params, entity, f, [...src, 'params'], `${at}/params`);
  const cap: Capability = {
    name,
    kind,
    entity: String(raw.entity),
    description: text(raw.description, ''),
    params,
    returns: (raw.returns as Returns | undefined) ?? defaultReturns(kind),
    http: { method: 'GET', path: '/', query: {}, headers: {}, array_style: 'repeat', response: { path: '' } },
  };
  if (mapping) {
    cap.http = normalizeMapping(cx, mapping.raw, cap, mapping.src, ['mappings', name], `${at}/http`);
    const sort = normalizeSort(cx, mapping.raw, entity, mapping.src, ['mappings', name], `${at}/http`);
    if (sort) cap.http.sort = sort;
  } else if (!isPoisoned(cx.poisoned, 'mappings', name)) {
    cx.poisoned.add(`mappings:${name}`);
    cx.fail(
      at,
      'missing_mapping',
      `capability \`${name}\` has no HTTP mapping`,
      `add \`${name}: GET /path\` (or an object with method and path) under \`mappings:\``,
    );
  }
  if (raw.singleton === true) cap.singleton = true;
  // A singleton reads the one row its path answers: no parameter is its id unless one is written (an error).
  const idParam =
    raw.id_param !== undefined ? text(raw.id_param) : cap.singleton ? undefined : defaultIdParam(kind, params, entity);
  if (idParam !== undefined) cap.id_param = idParam;
  const atLeastOne = normalizeAtLeastOne(raw.at_least_one, cap);
  if (atLeastOne) cap.at_least_one = atLeastOne;
  cx.mark(`${at}/at_least_one`, f, [...src, Array.isArray(raw.at_least_one) ? 'at_least_one' : 'kind']);
  if (Array.isArray(raw.at_least_one))
    raw.at_least_one.forEach((_, i) => cx.mark(`${at}/at_least_one/${i}`, f, [...src, 'at_least_one', i]));
  return cap;
}

/**
 * `at_least_one` as written; for an update without it, its optional parameters but the id (after
 * the mapping made path parameters required), so that an update changing nothing is refused. An
 * empty list is kept for an update (the author turned the default off) and dropped elsewhere.
 */
function normalizeAtLeastOne(raw: unknown, cap: Capability): string[] | undefined {
  if (Array.isArray(raw)) return raw.length || cap.kind === 'update' ? raw.map(String) : undefined;
  if (cap.kind !== 'update') return undefined;
  // An update that requires a value beyond its path (a replace, `PUT /pets` with `name`) always
  // sends something: no default there.
  const path = new Set(parseTemplate(cap.http.path).params);
  if (cap.params.some((p) => p.required && p.name !== cap.id_param && !path.has(p.name))) return undefined;
  return cap.params.filter((p) => !p.required && p.name !== cap.id_param).map((p) => p.name);
}

function normalizeParams(
  cx: NormalizeContext,
  raw: unknown,
  entity: Entity | undefined,
  f: SourceData,
  src: KeyPath,
  at: string,
): ParamDef[] {
  const entries: Array<[string, unknown]> = Array.isArray(raw)
    ? raw.map((n) => [String(n), null])
    : Object.entries(isObj(raw) ? raw : {});
  return entries.map(([pname, spec], i) => {
    const psrc: KeyPath = Array.isArray(raw) ? [...src, i] : [...src, pname];
    const pat = `${at}/${i}`;
    cx.mark(pat, f, psrc);
    const s = isObj(spec) ? spec : {};
    let type: TypeSpec;
    let description = text(s.description, '');
    if (typeof spec === 'string' || s.type !== undefined) {
      type = normalizeTypeSpec(cx, spec, f, psrc, pat);
    } else {
      const fieldName = text(s.field, pname);
      const field = entity?.fields.find((x) => x.name === fieldName);
      if (field) {
        const { name: _n, description: fd, ...t } = field;
        type = t;
        if (!description) description = fd;
      } else {
        type = { type: 'string' };
        if (entity && !isPoisoned(cx.poisoned, 'entities', entity.name, 'fields', fieldName)) {
          cx.fail(
            pat,
            'unknown_field',
            `parameter \`${pname}\` has no type and entity \`${entity.name}\` has no field \`${fieldName}\` to take it from`,
            `give it a type, for example \`${pname}: string\`, or name an existing field (${suggestHint(
              fieldName,
              entity.fields.map((x) => x.name),
            )})`,
          );
        }
      }
    }
    const p: ParamDef = { name: pname, description, required: s.required === true, ...type };
    if (s.required !== undefined) cx.mark(`${pat}/required`, f, [...psrc, 'required']);
    if (s.default !== undefined) {
      p.default = s.default as JsonValue;
      cx.mark(`${pat}/default`, f, [...psrc, 'default']);
    }
    if (Array.isArray(s.requires)) {
      p.requires = s.requires.map(String);
      cx.mark(`${pat}/requires`, f, [...psrc, 'requires']);
    }
    if (s.many === true) p.many = true;
    if (s.many !== undefined) cx.mark(`${pat}/many`, f, [...psrc, 'many']);
    for (const k of CONSTRAINT_KEYS) {
      if (s[k] === undefined) continue;
      (p as unknown as Record<string, unknown>)[k] = s[k];
      cx.mark(`${pat}/${k}`, f, [...psrc, k]);
    }
    return p;
  });
}

function defaultReturns(kind: CapabilityKind): Returns {
  if (kind === 'query' || kind === 'search') return 'rows';
  if (kind === 'delete') return 'none';
  return 'row';
}

/** get/update/delete/action act on one row: the parameter named like the id field, else the only required one. */
function defaultIdParam(kind: CapabilityKind, params: ParamDef[], entity: Entity | undefined): string | undefined {
  if (kind === 'query' || kind === 'search' || kind === 'create') return undefined;
  if (entity && params.some((p) => p.name === entity.id_field)) return entity.id_field;
  const required = params.filter((p) => p.required);
  if (kind !== 'action' && required.length === 1) return required[0]!.name;
  return undefined;
}
