/**
 * Checks of type specs (enum values, ref targets, array items, object fields) and `valueFits`,
 * whether a value is of a type (used for parameter defaults).
 */
import { suggestHint } from '../common/suggest.js';
import type { FieldDef, TypeSpec } from './cgs.js';
import type { Fail, KnownEntity } from './check-context.js';

/** Reports problems of type `t` (at `at`), described as `what` in messages; recurses into items and fields. */
export function checkType(t: TypeSpec, at: string, what: string, knownEntity: KnownEntity, fail: Fail): void {
  const entityNames = knownEntity.names;
  const x = t as TypeSpec & { values?: unknown; entity?: unknown; items?: unknown; fields?: FieldDef[] };
  if (t.type === 'enum') {
    const values = Array.isArray(x.values) ? x.values : [];
    if (values.length === 0)
      fail(at, 'bad_type', `${what} is an enum without values`, 'list the allowed values: `values: [a, b]`');
    if (new Set(values).size !== values.length)
      fail(at, 'bad_enum', `${what} repeats an enum value`, 'list each allowed value once');
  } else if (x.values !== undefined) {
    fail(at, 'bad_type', `${what} has \`values\` but is not an enum`, 'write `type: enum` or remove `values`');
  }
  if (t.type === 'ref') {
    if (typeof x.entity !== 'string')
      fail(at, 'bad_type', `${what} is a ref without \`entity\``, 'name the entity it refers to: `entity: Brewery`');
    else if (!knownEntity(x.entity))
      fail(
        at,
        'unknown_entity',
        `${what} refers to unknown entity \`${x.entity}\``,
        `declare the entity or fix the name (${suggestHint(x.entity, entityNames)})`,
      );
  } else if (x.entity !== undefined) {
    fail(at, 'bad_type', `${what} has \`entity\` but is not a ref`, 'write `type: ref` or remove `entity`');
  }
  if (t.type === 'array') {
    if (!x.items)
      fail(at, 'bad_type', `${what} is an array without \`items\``, 'give the element type: `items: string`');
    else checkType(x.items as TypeSpec, `${at}/items`, `items of ${what}`, knownEntity, fail);
  }
  if (t.type === 'object')
    x.fields?.forEach((f, i) => checkType(f, `${at}/fields/${i}`, `field \`${f.name}\` of ${what}`, knownEntity, fail));
}

/** True when `v` is a value of type `t` (used for defaults). */
export function valueFits(t: TypeSpec, v: unknown): boolean {
  switch (t.type) {
    case 'string':
      return typeof v === 'string';
    case 'integer':
      return Number.isSafeInteger(v);
    case 'number':
      return typeof v === 'number' && Number.isFinite(v);
    case 'boolean':
      return typeof v === 'boolean';
    case 'date':
      return typeof v === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(v) && !Number.isNaN(Date.parse(v));
    case 'datetime':
      return typeof v === 'string' && !Number.isNaN(Date.parse(v)) && /^\d{4}-\d{2}-\d{2}T/.test(v);
    case 'enum':
      return t.values.includes(v as string | number);
    case 'ref':
      return typeof v === 'string' || Number.isSafeInteger(v);
    case 'array':
      return Array.isArray(v) && v.every((x) => valueFits(t.items, x));
    case 'object':
      return v !== null && typeof v === 'object' && !Array.isArray(v);
  }
}
