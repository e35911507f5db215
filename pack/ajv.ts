/** The shared ajv instance and the compiled validators of the schemas svc ships. */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { sourceSchema } from './source-schema.js';
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

/** Compile (once) and return the validator of a schema object carrying an `$id`. */
export function validatorFor(schema: { $id: string }): ValidateFunction {
  let v = compiled.get(schema.$id);
  if (!v) {
    v = ajv().compile(schema);
    compiled.set(schema.$id, v);
  }
  return v;
}

export const validateSourceFile = (data: unknown): ErrorObject[] => run(validatorFor(sourceSchema), data);
export const validateCgsShape = (data: unknown): ErrorObject[] => run(validatorFor(cgsSchema), data);

function run(v: ValidateFunction, data: unknown): ErrorObject[] {
  return v(data) ? [] : [...(v.errors ?? [])];
}
