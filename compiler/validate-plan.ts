/** Validating a plan IR received from outside (resolved-plan execute) against its JSON Schema. */
import { svcError, type SvcError } from '../common/errors.js';
import { validatorFor } from '../pack/ajv.js';
import { schemaProblems } from '../pack/schema-errors.js';
import type { Plan } from './plan.js';
import { planSchema } from './plan-schema.js';

/** Shape errors of a plan, as `bad_arguments` problems with JSON pointers; empty when valid. */
export function validatePlanShape(data: unknown): SvcError[] {
  const v = validatorFor(planSchema);
  if (v(data)) return [];
  return schemaProblems([...(v.errors ?? [])]).map((p) => svcError('bad_arguments', `plan ${p.message}`, { path: '/' + p.path.join('/'), ...(p.hint ? { hint: p.hint } : {}) }));
}

/** Type guard over `validatePlanShape`. */
export function isPlan(data: unknown): data is Plan {
  return validatePlanShape(data).length === 0;
}
