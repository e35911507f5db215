/**
 * The parameters of one capability: path, query and header parameters with their wire names,
 * types, enums, defaults and required flags, and the JSON request body flattened one level
 * (deeper objects are JSON values). A parameter that cannot be mapped is dropped when optional;
 * when required, the whole operation is skipped (the returned `problem`).
 */
import type { ImportParam, ParamIn } from './model.js';
import { NameSet, camelName, isReserved, safeName, singular } from './names.js';
import type { Operation } from './operations.js';
import { objectShape, toType, type Schema } from './schema.js';
import { valueFits } from '../check-type.js';
import type { TypeSpec } from '../cgs.js';
import { oneLine } from './names.js';

export interface ParamResult {
  params: ImportParam[];
  dropped: string[];
  problem?: string;
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
  const add = (wire: string, where: ParamIn, schema: Schema, required: boolean, desc: unknown, name: string) => {
    const t = toType(schema);
    if (!t) {
      if (required) return `required ${where} parameter \`${wire}\` has no mappable type`;
      dropped.push(`${wire} (no mappable type)`);
      return undefined;
    }
    const description = oneLine(desc) || t.description;
    const type = { ...t, ...(description ? { description } : {}) };
    if (!description) delete type.description;
    const p: ImportParam = { name: names.take(name), wire, in: where, type, required };
    if (!required && schema.default !== undefined && valueFits(t as TypeSpec, schema.default))
      p.default = schema.default;
    params.push(p);
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
      const problem = add(p.name, 'path', p.schema, true, p.description, name);
      if (problem) return { params, dropped, problem };
    } else if (p.in === 'query' || p.in === 'header') {
      if (p.in === 'query' && owned.has(p.name)) continue;
      if (p.in === 'header' && /^(accept|content-type|authorization)$/i.test(p.name)) continue;
      const problem = add(p.name, p.in, p.schema, p.required, p.description, paramName(p.name));
      if (problem) return { params, dropped, problem };
    } else if (p.required) return { params, dropped, problem: `required ${p.in} parameter \`${p.name}\`` };
    else dropped.push(`${p.name} (${p.in} parameter)`);
  }
  const body = bodyParams(op, names, add, dropped, keepReadOnly);
  return body ? { params, dropped, problem: body } : { params, dropped };
}

type Add = (
  wire: string,
  where: ParamIn,
  schema: Schema,
  required: boolean,
  desc: unknown,
  name: string,
) => string | undefined;

function bodyParams(op: Operation, names: NameSet, add: Add, dropped: string[], keep?: string): string | undefined {
  if (op.bodyNotJson) {
    if (op.bodyNotJson.required) return `the request body is not JSON (${op.bodyNotJson.types.join(', ')})`;
    dropped.push(`request body (${op.bodyNotJson.types.join(', ')})`);
  }
  if (!op.body) return undefined;
  const { props, required } = objectShape(op.body.schema);
  if (props.size === 0) {
    if (op.body.required) return 'the JSON request body is not an object with properties';
    dropped.push('request body (not an object with properties)');
    return undefined;
  }
  for (const [wire, s] of props) {
    if (s.readOnly === true && wire !== keep) continue;
    const req = op.body.required && required.has(wire);
    const base = paramName(wire);
    const name = names.has(base) ? `${base}Body` : base;
    const problem = add(wire, 'body', s, req, s.description, name);
    if (problem) return problem;
  }
  return undefined;
}

/** A valid parameter name for a wire name; names the language reserves get `_param`. */
export function paramName(wire: string): string {
  const n = safeName(wire);
  return isReserved(n) ? `${n}_param` : n;
}
