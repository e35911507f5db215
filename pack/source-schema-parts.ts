/**
 * Small pieces of the catalog source schema (`source-schema.ts`, `source-schema-mapping.ts`):
 * enumerations as `{enum: [...]}`, names, descriptions, maps keyed by names.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { SCALAR_TYPES } from './cgs.js';

/** `{enum: values}`, typed as one of the values. */
export const OneOf = <const T extends readonly (string | number)[]>(values: T, description?: string) =>
  Type.Unsafe<T[number]>(description ? { enum: [...values], description } : { enum: [...values] });

export const Name = Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$' });
export const NameOf = (description: string) => Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$', description });
export const Description = Type.String({ description: 'Plain text; becomes teaching text.' });
export const EnvName = Type.String({
  pattern: '^[A-Z_][A-Z0-9_]*$',
  description: 'Name of an environment variable holding a secret.',
});
export const ScalarName = OneOf(SCALAR_TYPES, 'A scalar type name as a shorthand for {type: <name>}.');

/** An object keyed by names (entities, fields, parameters, ...). */
export const NameMap = <T extends TSchema>(value: T, description?: string) =>
  Type.Record(Type.String(), value, description ? { propertyNames: Name, description } : { propertyNames: Name });
/** A list of names, each once. */
export const NameList = Type.Array(Name, { uniqueItems: true });
