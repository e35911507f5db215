/**
 * The parameters of one capability: path, query and header parameters with their wire names,
 * types, enums, defaults, required flags and constraints (query arrays of scalars as `many`), and
 * the request body (JSON, form or multipart) by its properties, inside its wrapper when it has one
 * (`{"data": {...}}`), and by the members of its nested objects (body-members.ts; deeper or larger
 * objects are JSON values, sent as nested fields in a form). A
 * parameter that cannot be mapped, or an optional one the document marks `deprecated`, is dropped;
 * a file part of a form or multipart body is left out (svc sends text fields). When a required one
 * cannot be mapped or sent, the whole operation is skipped (the returned `problem`). A required
 * query or header parameter that admits one value is a constant of the mapping, not a parameter.
 */
import { valueFits } from '../check-type.js';
import type { TypeSpec } from '../cgs.js';
import { paramValueFits } from '../param-constraints.js';
import { constraintsOf, defaultBreaks, keepTeachable, listKeywordsLeft } from './constraints.js';
import { bodyLeaves, memberName } from './body-members.js';
import { bodyWrapper } from './envelopes.js';
import type { ImportParam, ParamIn, Skipped } from './model.js';
import { NameSet, camelName, isReserved, oneLine, safeName, singular } from './names.js';
import { JSON_TYPE, type OpParam, type Operation } from './operations.js';
import { isObj, objectShape, scalarUnion, toType, type Schema } from './schema.js';

export interface ParamResult {
  params: ImportParam[];
  dropped: string[];
  /** Wire names of the optional file parts of a form or multipart body, which are not sent. */
  files: string[];
  /** Why the operation cannot be imported (a required parameter or body svc cannot send). */
  problem?: Pick<Skipped, 'reason' | 'why'>;
  /** The key the request body wraps the body parameters under (envelopes.ts bodyWrapper). */
  bodyWrapper?: string;
  /** The document requires the body and none of its parameters is required (the mapping's `body_required`). */
  bodyRequired?: true;
  /**
   * Required query and header parameters that admit one value (an `enum` of one, a `const`):
   * not parameters an agent passes, but values the mapping always sends (wire name -> value).
   */
  constants: { query: Record<string, string>; headers: Record<string, string> };
}

/**
 * The one value a required parameter admits (`enum: [Svc.CreateKey]`, `const: 2`), as sent on the
 * wire; undefined when it admits more (or none).
 */
export function constantOf(p: OpParam): string | undefined {
  if (!p.required) return undefined;
  const s = p.schema;
  const one: unknown = 'const' in s ? s.const : Array.isArray(s.enum) && s.enum.length === 1 ? s.enum[0] : undefined;
  return typeof one === 'string' || typeof one === 'number' || typeof one === 'boolean' ? String(one) : undefined;
}

/**
 * `keepReadOnly` names a read-only body property to keep (the id of an update without one in its path).
 * `own` is the path parameter that holds the id of the entity's row (named `idName` here);
 * other path parameters named like `id` become `<parent>Id` (`/breweries/{id}/beers` -> breweryId).
 */
export function buildParams(
  op: Operation,
  owned: Set<string>,
  own: string | undefined,
  idName: string,
  keepReadOnly?: string,
): ParamResult {
  const names = new NameSet();
  const params: ImportParam[] = [];
  const dropped: string[] = [];
  const files: string[] = [];
  const constants: ParamResult['constants'] = { query: {}, headers: {} };
  const add: Add = (wire, where, schema, required, desc, name, how) => {
    const built = paramOf(wire, where, schema, required, desc, how);
    if (typeof built === 'string') {
      if (required) return `required ${where} parameter \`${wire}\` ${built}`;
      dropped.push(`${wire} (${built})`);
      return undefined;
    }
    params.push({ ...built, name: names.take(name) });
    return undefined;
  };
  const segments = op.path.split('/');
  for (const p of op.params) {
    if (p.in === 'path') {
      const i = segments.indexOf(`{${p.name}}`);
      const before = i > 0 ? segments[i - 1]! : '';
      const name =
        p.name === own
          ? idName
          : /^id$/i.test(p.name) && before && !before.startsWith('{')
            ? camelName(singular(before)) + 'Id'
            : paramName(p.name);
      const problem = add(p.name, 'path', p.schema, true, p.description, name, p);
      if (problem) return { params, dropped, files, constants, problem: { reason: 'parameter', why: problem } };
    } else if (p.in === 'query' || p.in === 'header') {
      if (p.in === 'query' && owned.has(p.name)) continue;
      if (p.deprecated && !p.required) {
        dropped.push(`${p.name} (deprecated)`);
        continue;
      }
      if (p.in === 'header' && /^accept$/i.test(p.name)) {
        // The JSON type of the values the document lists is what svc asks for (it reads JSON).
        const json: unknown = Array.isArray(p.schema.enum)
          ? (p.schema.enum as unknown[]).find((v) => typeof v === 'string' && JSON_TYPE.test(v))
          : undefined;
        if (typeof json === 'string') constants.headers.Accept = json;
        continue;
      }
      if (p.in === 'header' && /^(content-type|authorization)$/i.test(p.name)) continue;
      const fixed = constantOf(p);
      if (fixed !== undefined) {
        constants[p.in === 'query' ? 'query' : 'headers'][p.name] = fixed;
        continue;
      }
      const problem = add(p.name, p.in, p.schema, p.required, p.description, paramName(p.name), p);
      if (problem) return { params, dropped, files, constants, problem: { reason: 'parameter', why: problem } };
    } else if (p.required)
      return {
        params,
        dropped,
        files,
        constants,
        problem: { reason: 'parameter', why: `required ${p.in} parameter \`${p.name}\`` },
      };
    else dropped.push(`${p.name} (${p.in} parameter)`);
  }
  const body = bodyParams(op, names, add, { params, dropped, files }, keepReadOnly);
  if (body) return { params, dropped, files, constants, problem: body };
  const wrapper = op.body ? bodyWrapper(op.body.schema) : undefined;
  // A required body is sent (`{}` at least) even when a program passes none of its parameters.
  const bodyRequired =
    op.body?.required === true && op.method !== 'get' && !params.some((p) => p.in === 'body' && p.required);
  return {
    params,
    dropped,
    files,
    constants,
    ...(wrapper ? { bodyWrapper: wrapper } : {}),
    ...(bodyRequired ? { bodyRequired } : {}),
  };
}

type Add = (
  wire: string,
  where: ParamIn,
  schema: Schema,
  required: boolean,
  desc: unknown,
  name: string,
  how?: Pick<OpParam, 'style' | 'explode'>,
) => string | undefined;

/** A query array of scalars: `many`, of its item type. */
const SCALAR_ITEMS = new Set(['string', 'integer', 'number', 'boolean', 'date', 'datetime', 'enum']);

/**
 * One parameter (its name still to be given), or why it cannot be mapped. A query array of
 * scalars in `form` style becomes `many` of its item type, sent as repeated keys or, with
 * `explode: false`, comma-joined; other styles (`spaceDelimited`, `pipeDelimited`) cannot be sent.
 */
function paramOf(
  wire: string,
  where: ParamIn,
  schema: Schema,
  required: boolean,
  desc: unknown,
  how: Pick<OpParam, 'style' | 'explode'> = {},
): Omit<ImportParam, 'name'> | string {
  const whole = toType(schema);
  if (!whole) return 'has no mappable type';
  const many = where === 'query' && whole.type === 'array' && SCALAR_ITEMS.has(whole.items.type);
  if (many && how.style !== undefined && how.style !== 'form')
    return `is a list in ${how.style} style, which svc cannot send (repeated keys or comma-joined only)`;
  const t = many && whole.type === 'array' ? whole.items : whole;
  const itemSchema = many && isObj(schema.items) ? schema.items : schema;
  const description = oneLine(desc) || whole.description;
  const type = { ...t, ...(description ? { description } : {}) };
  if (!description) delete type.description;
  const c = constraintsOf(itemSchema, t);
  if (many) c.left.push(...listKeywordsLeft(schema));
  const union = scalarUnion(many ? itemSchema : schema);
  if (union)
    c.left.push(
      union.length > 1
        ? `one of ${union.join(' | ')}: taken as ${union[0]}, the widest`
        : `one of several ${union[0]} schemas: taken as ${union[0]}, without their own constraints`,
    );
  if (required) keepTeachable(wire, t as TypeSpec, c);
  const p: Omit<ImportParam, 'name'> = { wire, in: where, type, required };
  if (many) {
    p.many = true;
    p.list = how.explode === false ? 'comma' : 'repeat';
  }
  if (Object.keys(c.constraints).length) p.constraints = c.constraints;
  const d: unknown = schema.default;
  if (
    !required &&
    d !== undefined &&
    !obvious(d) &&
    (many
      ? paramValueFits({ ...(t as TypeSpec), name: wire, description: '', required: false, many: true }, d)
      : valueFits(t as TypeSpec, d))
  ) {
    if (!defaultBreaks(wire, t as TypeSpec, c.constraints, many, d)) p.default = d;
    else c.left.push(`default ${JSON.stringify(d)} (it breaks the parameter's own constraints)`);
  }
  if (c.left.length) p.left = c.left;
  return p;
}

/**
 * A default that says what leaving the parameter out says (`false`, `""`, `[]`): not carried, so
 * the table does not teach it and svc sends nothing, which the vendor reads as that default.
 */
const obvious = (d: unknown) => d === false || d === '' || (Array.isArray(d) && d.length === 0);

/**
 * A file part of a form or multipart body: `format: binary` (OpenAPI 3.0), a `contentMediaType`
 * (3.1), a list of those, or a scalar whose `encoding` gives a content type that is neither text
 * nor JSON (`image/png`).
 */
export function isFilePart(s: Schema, part?: Schema): boolean {
  if (s.type === 'array' && isObj(s.items)) return isFilePart(s.items, part);
  const ct = typeof part?.contentType === 'string' ? part.contentType : '';
  const scalar = s.type !== 'object' && s.type !== 'array';
  if (scalar && ct && !/^text\/|json/i.test(ct)) return true;
  return s.format === 'binary' || typeof s.contentMediaType === 'string';
}

/**
 * Why an object or list property of a form body may not reach the vendor as the document says:
 * svc writes bracketed fields (`a[b]=1`, `a[]=1`), and the document's `encoding` asks for
 * another style or a JSON part. Undefined when it says nothing else.
 */
function partNote(s: Schema, part: Schema | undefined): string | undefined {
  if (!part || (s.type !== 'object' && s.type !== 'array')) return undefined;
  const ct = typeof part.contentType === 'string' ? part.contentType : '';
  if (/json/i.test(ct)) return `encoding contentType ${ct} (a JSON part), but sent as bracketed fields`;
  if (typeof part.style === 'string' && part.style !== 'deepObject') {
    const explode = typeof part.explode === 'boolean' ? `, explode: ${part.explode}` : '';
    return `encoding style ${part.style}${explode}, but sent as bracketed fields (a[b]=1, a[]=1)`;
  }
  return undefined;
}

function bodyParams(
  op: Operation,
  names: NameSet,
  add: Add,
  out: { params: ImportParam[]; dropped: string[]; files: string[] },
  keep?: string,
): Pick<Skipped, 'reason' | 'why'> | undefined {
  const { dropped } = out;
  if (op.bodyNotJson) {
    const types = op.bodyNotJson.types.join(', ');
    if (op.bodyNotJson.required)
      return { reason: 'body', why: `the request body is not JSON, a form or multipart (${types})` };
    dropped.push(`request body (${types})`);
  }
  if (!op.body) return undefined;
  // svc sends no body with a GET (runtime/request.ts): its body parameters would be taught and lost.
  if (op.method === 'get') {
    if (op.body.required)
      return { reason: 'body', why: 'a GET with a required request body (svc sends none on a GET)' };
    dropped.push('request body of a GET (svc sends none on a GET)');
    return undefined;
  }
  const kind = op.body.encoding === 'json' ? 'JSON' : op.body.encoding;
  // A wrapped body (`{"data": {...}}`) is taught by the wrapped object's properties.
  const wrapper = bodyWrapper(op.body.schema);
  const outer = objectShape(op.body.schema).props;
  const { props, required } = objectShape(wrapper ? outer.get(wrapper)! : op.body.schema);
  // A JSON body that is a list or a value (`[{...}]`, `"text"`) is one parameter, sent as the whole body.
  const whole = op.body.encoding === 'json' && props.size === 0 ? toType(op.body.schema) : undefined;
  if (whole && whole.type !== 'object') {
    const name = names.has('body') ? 'requestBody' : 'body';
    return add('', 'body', op.body.schema, op.body.required, op.body.schema.description, name)
      ? { reason: 'body', why: `the ${kind} request body (a ${whole.type}) cannot be sent as one parameter` }
      : undefined;
  }
  if (props.size === 0) {
    if (op.body.required) return { reason: 'body', why: `the ${kind} request body is not an object with properties` };
    dropped.push('request body (not an object with properties)');
    return undefined;
  }
  const parts = op.body.parts ?? {};
  const leaves = bodyLeaves(props, required, (wire) => !isObj(parts[wire]));
  const bases = leaves.map((l) => paramName(l.wire));
  for (const [i, leaf] of leaves.entries()) {
    const { wire, schema: s, at } = leaf;
    if (s.readOnly === true && (wire !== keep || at.length > 0)) continue;
    // svc sends the body whenever a program passes one of its parameters, so what its schema
    // requires is required even when the document marks the body itself optional.
    const req = leaf.required;
    const part = at.length === 0 ? parts[wire] : undefined;
    const where = [...at, wire].join('.');
    if (op.body.encoding !== 'json' && isFilePart(s, isObj(part) ? part : undefined)) {
      if (req && op.body.required)
        return {
          reason: 'body',
          why: `required file part \`${where}\` of the ${kind} body (svc sends text fields only)`,
        };
      out.files.push(where);
      continue;
    }
    if (s.deprecated === true && !req) {
      dropped.push(`${where} (deprecated)`);
      continue;
    }
    const base = bases[i]!;
    const name = at.length ? memberName(leaf, base, names, bases) : names.has(base) ? `${base}Body` : base;
    const before = out.params.length;
    const problem = add(wire, 'body', s, req, s.description, name);
    if (problem)
      return { reason: 'parameter', why: at.length ? problem.replace(`\`${wire}\``, `\`${where}\``) : problem };
    const added = out.params.length > before ? out.params.at(-1) : undefined;
    if (!added) continue;
    if (at.length) added.at = at;
    for (const note of [partNote(s, isObj(part) ? part : undefined), leaf.note])
      if (note) (added.left ??= []).push(note);
  }
  return undefined;
}

/** A valid parameter name for a wire name; names the language reserves get `_param`. */
export function paramName(wire: string): string {
  const n = safeName(wire);
  return isReserved(n) ? `${n}_param` : n;
}
