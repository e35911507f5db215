/**
 * Reading dereferenced JSON Schemas of an OpenAPI document: `allOf` merged, `oneOf`/`anyOf`
 * unioned, 3.1 type lists and `nullable` reduced, a union of scalar types read as the widest,
 * wrappers of one schema seen through (`unwrap`), and a schema turned into an authoring type.
 */
import type { ImportType } from './model.js';
import { oneLine } from './names.js';

/** A (dereferenced) schema object; OpenAPI documents are plain JSON. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- untyped JSON of the document, checked where read
export type Schema = Record<string, any>;

export const isObj = (v: unknown): v is Schema => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The one non-null type of a schema (`type: [string, null]` -> string), if it names one, seen through `unwrap`. */
export function typeOf(s: Schema): string | undefined {
  const t: unknown = s.type;
  if (typeof t === 'string') return t;
  if (Array.isArray(t)) {
    const real = t.filter((x) => x !== 'null');
    return real.length === 1 ? (real[0] as string) : undefined;
  }
  if (isObj(s.properties)) return 'object';
  if (isObj(s.items)) return 'array';
  const inner = unwrap(s);
  return inner === s ? undefined : typeOf(inner);
}

/** Keywords that say something about a schema without changing the values it admits. */
const NOTES = new Set([
  'description',
  'title',
  'example',
  'examples',
  'externalDocs',
  'xml',
  'default',
  'nullable',
  'deprecated',
  'readOnly',
  'writeOnly',
  '$comment',
]);
const COMPOSED = ['allOf', 'oneOf', 'anyOf'] as const;

/** A schema of notes only (`{"description": ..}`, the second part of `allOf: [{$ref}, {description}]`). */
const isNote = (p: unknown) => isObj(p) && Object.keys(p).every((k) => NOTES.has(k) || k.startsWith('x-'));
const isNull = (p: unknown) =>
  isObj(p) && (p.type === 'null' || (Array.isArray(p.enum) && p.enum.length === 1 && p.enum[0] === null));

/** The parts of `s[key]` that admit values: parts of notes only, and `null` (in oneOf/anyOf), left out. */
function realParts(s: Schema, key: (typeof COMPOSED)[number]): Schema[] {
  if (!Array.isArray(s[key])) return [];
  return (s[key] as unknown[]).filter((p): p is Schema => isObj(p) && !isNote(p) && !(key !== 'allOf' && isNull(p)));
}

/**
 * The one schema a wrapper stands for, the very object (so a component keeps its name): `allOf:
 * [X]` with notes beside it (a description attached to a `$ref`), `allOf: [X, {description}]`,
 * `oneOf`/`anyOf: [X, {type: null}]` (3.1 nullable), `{type: object, allOf: [X]}`. Any other
 * schema is itself.
 */
export function unwrap(s: Schema, depth = 0): Schema {
  if (!isObj(s) || depth > 6 || isObj(s.properties) || isObj(s.items)) return s;
  const keys = COMPOSED.filter((k) => s[k] !== undefined);
  if (keys.length !== 1) return s;
  const rest = Object.keys(s).filter((k) => k !== keys[0] && k !== 'type' && !NOTES.has(k) && !k.startsWith('x-'));
  const parts = realParts(s, keys[0]!);
  if (rest.length > 0 || parts.length !== 1) return s;
  const inner = unwrap(parts[0]!, depth + 1);
  if (s.type !== undefined && typeof s.type === 'string' && typeOf(inner) !== s.type) return s;
  return inner;
}

/** The description of a wrapper: its own, else that of a part of notes beside the schema it wraps. */
function noteOf(s: Schema): string | undefined {
  if (typeof s.description === 'string') return s.description;
  for (const key of COMPOSED)
    for (const p of Array.isArray(s[key]) ? (s[key] as unknown[]) : [])
      if (isNote(p) && typeof (p as Schema).description === 'string') return (p as Schema).description as string;
  return undefined;
}

/** Properties and required names of an object schema, through allOf/oneOf/anyOf (depth-limited). */
export function objectShape(s: Schema, depth = 0): { props: Map<string, Schema>; required: Set<string> } {
  const props = new Map<string, Schema>();
  const required = new Set<string>();
  if (!isObj(s) || depth > 8) return { props, required };
  for (const part of Array.isArray(s.allOf) ? s.allOf : []) {
    const sub = objectShape(part as Schema, depth + 1);
    for (const [k, v] of sub.props) if (!props.has(k)) props.set(k, v);
    for (const r of sub.required) required.add(r);
  }
  for (const key of ['oneOf', 'anyOf']) {
    for (const part of Array.isArray(s[key]) ? (s[key] as Schema[]) : []) {
      const sub = objectShape(part, depth + 1);
      for (const [k, v] of sub.props) if (!props.has(k)) props.set(k, v);
    }
  }
  if (isObj(s.properties)) for (const [k, v] of Object.entries(s.properties)) if (isObj(v)) props.set(k, v);
  if (Array.isArray(s.required)) for (const r of s.required) if (typeof r === 'string') required.add(r);
  return { props, required };
}

/** Whether a schema describes an object with named properties (a row). */
export function isRowSchema(s: unknown): s is Schema {
  return (
    isObj(s) &&
    (typeOf(s) === 'object' || s.allOf !== undefined || s.oneOf !== undefined || s.anyOf !== undefined) &&
    objectShape(s).props.size > 0
  );
}

/**
 * The schema of a composed scalar (`allOf: [{$ref: Kind}]`, `allOf: [{$ref: Kind}, {description}]`,
 * `oneOf` of one type) reduced to one, with the wrapper's description.
 */
function scalarOf(s: Schema, depth = 0): Schema {
  if (depth > 4) return s;
  for (const key of COMPOSED) {
    const parts = realParts(s, key);
    if (parts.length === 1 && !isObj(s.properties)) return { ...scalarOf(parts[0]!, depth + 1), ...pick(s) };
  }
  return s;
}

const pick = (s: Schema) => {
  const description = noteOf(s);
  return description === undefined ? {} : { description };
};

/** Scalar types, widest first: every integer is a number, every value can be sent as text. */
const WIDEST_FIRST = ['string', 'number', 'integer', 'boolean'] as const;
type Scalar = (typeof WIDEST_FIRST)[number];

/**
 * The scalar types of a schema that admits several (`oneOf`/`anyOf` of scalar schemas, a 3.1
 * type list such as `[string, integer]`), widest first, without `null`; undefined unless there
 * are two or more branches and all are scalar (an object or array branch keeps the schema
 * unmappable). Branches of one type (`anyOf` of two string patterns) give that type alone.
 * A parameter `oneOf: [string, integer]` is then a string: the widest type holds every value of
 * the others, and the vendor still checks which it takes.
 */
export function scalarUnion(s: Schema): Scalar[] | undefined {
  if (!isObj(s) || isObj(s.properties)) return undefined;
  let types: unknown[] | undefined;
  if (Array.isArray(s.type)) types = s.type.filter((t) => t !== 'null');
  else
    for (const key of ['oneOf', 'anyOf']) {
      if (!Array.isArray(s[key]) || types) continue;
      const parts = (s[key] as unknown[]).filter((p) => !(isObj(p) && typeOf(p) === 'null'));
      types = parts.map((p) => (isObj(p) && !isObj(p.properties) ? typeOf(p) : undefined));
    }
  if (!types || types.length < 2 || !types.every((t): t is Scalar => WIDEST_FIRST.includes(t as Scalar)))
    return undefined;
  return WIDEST_FIRST.filter((t) => types.includes(t));
}

/**
 * The authoring type of a schema, or undefined when it has none safely (unions with an object or
 * array branch, binary). A union of scalar types is its widest (`scalarUnion`).
 * Objects become `{type: object}` (a JSON value): an entity field keeps nested objects whole (a request
 * body opens them: body-members.ts).
 */
export function toType(raw: Schema, depth = 0): ImportType | undefined {
  if (!isObj(raw) || depth > 3) return undefined;
  const s = scalarOf(raw);
  const description = oneLine(s.description);
  const d = description ? { description } : {};
  const t = typeOf(s);
  if (Array.isArray(s.enum)) {
    const values = [...new Set((s.enum as unknown[]).filter((v) => v !== null))];
    if (values.length > 0 && values.every((v) => typeof v === 'string')) return { type: 'enum', values: values, ...d };
    if (values.length > 0 && values.every((v) => typeof v === 'number' && Number.isFinite(v)))
      return { type: 'enum', values: values as number[], ...d };
    if (values.every((v) => typeof v === 'boolean')) return { type: 'boolean', ...d };
  }
  const union = scalarUnion(s);
  if (union) return { type: union[0]!, ...d };
  switch (t) {
    case 'string':
      if (s.format === 'binary') return undefined;
      if (s.format === 'date') return { type: 'date', ...d };
      if (s.format === 'date-time') return { type: 'datetime', ...d };
      return { type: 'string', ...d };
    case 'integer':
      return { type: 'integer', ...d };
    case 'number':
      return { type: 'number', ...d };
    case 'boolean':
      return { type: 'boolean', ...d };
    case 'array': {
      const items = isObj(s.items) ? toType(s.items, depth + 1) : undefined;
      return items ? { type: 'array', items: strip(items), ...d } : undefined;
    }
    case 'object':
      return { type: 'object', ...d };
  }
  if (s.allOf || s.oneOf || s.anyOf) return objectShape(s).props.size > 0 ? { type: 'object', ...d } : undefined;
  return undefined;
}

const LIST_KEYS = new Set(['type', 'items', 'minItems', 'maxItems', 'uniqueItems']);

/**
 * The type of a field that declares no type at all (`{}`, or only notes: any JSON value), or a
 * list of such items: a JSON value (`object`), as a nested object is. Undefined for any other
 * schema. Used for entity fields only: a parameter of no type stays unmappable.
 */
export function anyValueType(s: Schema): ImportType | undefined {
  if (!isObj(s)) return undefined;
  const description = oneLine(noteOf(s));
  const d = description ? { description } : {};
  if (isNote(s)) return { type: 'object', ...d };
  const list = unwrap(s);
  const plain = Object.keys(list).every((k) => LIST_KEYS.has(k) || NOTES.has(k) || k.startsWith('x-'));
  if (typeOf(list) === 'array' && isNote(list.items) && plain)
    return { type: 'array', items: { type: 'object' }, ...d };
  return undefined;
}

/** A type without its description (array items carry none). */
export function strip(t: ImportType): ImportType {
  const { description: _d, ...rest } = t;
  return rest;
}
