/** Validating a plan IR received from outside (resolved-plan execute) against its JSON Schema. */
import { svcError, type SvcError } from '../common/errors.js';
import { validatorFor } from '../pack/ajv.js';
import { schemaProblems } from '../pack/schema-errors.js';
import { MAX_PROGRAM_STATEMENTS, programTooLarge } from './limits.js';
import type { Plan } from './plan.js';
import { planSchema } from './plan-schema.js';

/**
 * Shape errors of a plan, as `bad_arguments` problems with JSON pointers; empty when valid. A
 * plan of more than `MAX_PROGRAM_STATEMENTS` steps is `program_too_large`, found before any step
 * is validated.
 */
export function validatePlanShape(data: unknown): SvcError[] {
  const steps = (data as { steps?: unknown } | null)?.steps;
  if (Array.isArray(steps) && steps.length > MAX_PROGRAM_STATEMENTS) {
    return [programTooLarge(`the plan has ${steps.length} steps; the limit is ${MAX_PROGRAM_STATEMENTS}`)];
  }
  const v = validatorFor(planSchema);
  if (v(data)) return [];
  return schemaProblems([...(v.errors ?? [])]).map((p) =>
    svcError('bad_arguments', `plan ${p.message}`, {
      path: '/' + p.path.join('/'),
      ...(p.hint ? { hint: p.hint } : {}),
    }),
  );
}

/** Type guard over `validatePlanShape`. */
export function isPlan(data: unknown): data is Plan {
  return validatePlanShape(data).length === 0;
}
