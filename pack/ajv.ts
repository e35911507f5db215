/** The shared ajv instance and the compiled validators of the schemas svc ships. */
import type { Static, TSchema } from '@sinclair/typebox';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { CatalogSourceFileSchema } from './source-schema.js';
import { cgsSchema } from './cgs-schema.js';

// ajv-formats is CommonJS; its default export is the function under ESM interop.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

let shared: Ajv | undefined;

/** One ajv for the process: schemas are compiled once and reused. */
export function ajv(): Ajv {
  if (!shared) {
    shared = new Ajv({ allErrors: true, verbose: true, strict: true, allowUnionTypes: true });
    addFormats(shared);
  }
  return shared;
}

const compiled = new Map<string, ValidateFunction>();

/** Compile (once) and return the validator of a schema object; it must carry an `$id`. */
export function validatorFor(schema: { $id?: string }): ValidateFunction {
  const id = schema.$id;
  if (id === undefined) throw new Error('validatorFor: the schema has no $id');
  let v = compiled.get(id);
  if (!v) {
    v = ajv().compile(schema);
    compiled.set(id, v);
  }
  return v;
}

/** `data` checked against a TypeBox schema: the value with the schema's type, or ajv's errors. */
export type Checked<T> = { ok: true; value: T } | { ok: false; errors: ErrorObject[] };

export function check<S extends TSchema>(schema: S, data: unknown): Checked<Static<S>> {
  return conforms(schema, data)
    ? { ok: true, value: data }
    : { ok: false, errors: [...(validatorFor(schema).errors ?? [])] };
}

/** True when `data` is valid against `schema` (compiled by the shared ajv), typed accordingly. */
export function conforms<S extends TSchema>(schema: S, data: unknown): data is Static<S> {
  return validatorFor(schema)(data);
}

export const validateSourceFile = (data: unknown): ErrorObject[] => run(validatorFor(CatalogSourceFileSchema), data);
export const validateCgsShape = (data: unknown): ErrorObject[] => run(validatorFor(cgsSchema), data);

function run(v: ValidateFunction, data: unknown): ErrorObject[] {
  return v(data) ? [] : [...(v.errors ?? [])];
}
