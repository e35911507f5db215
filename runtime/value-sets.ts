/**
 * The argument values of a step's vendor calls: literals as they are, references taken from the
 * rows of the steps they point at, one set per source row for a fan-out (bounded by its max).
 */
import { svcError, type SvcError } from '../common/errors.js';
import type { Capability, JsonValue } from '../pack/cgs.js';
import type { PlanStep } from '../compiler/plan.js';
import { boundValuesProblem } from './check-values.js';
import type { Values } from './request.js';
import type { StepResult } from './run-result.js';

/**
 * The argument values of each vendor call of a step: one set, or one per row of a fan-out source
 * (`results` holds the steps done so far). Rows without the key a fan-out follows are skipped; a
 * value from a row that breaks its parameter's constraints fails the step before any call.
 */
export function valueSets(
  s: PlanStep,
  cap: Capability,
  results: ReadonlyMap<string, StepResult>,
): { sets: Values[] } | { error: SvcError } {
  const sources = s.fanout ? results.get(s.fanout.from)!.rows : [undefined];
  if (s.fanout && sources.length > s.fanout.max) {
    return {
      error: svcError(
        'fanout_too_large',
        `step ${s.id} would call ${cap.name} once for each of ${sources.length} rows of ${s.fanout.from}; the limit is ${s.fanout.max}`,
        { hint: 'narrow the bound rows with filters or a smaller limit' },
      ),
    };
  }
  const sets: Values[] = [];
  // Parameters whose values come from rows, and from where: checked before any call is made.
  const bound = new Map<string, string>();
  for (const [name, arg] of Object.entries(s.args))
    if ('ref' in arg) bound.set(name, `${arg.ref.step}.${arg.ref.field}`);
  for (const row of sources) {
    const values: Values = {};
    for (const [name, arg] of Object.entries(s.args)) {
      if ('lit' in arg) {
        values[name] = arg.lit;
        continue;
      }
      const from = s.fanout && arg.ref.step === s.fanout.from ? row : results.get(arg.ref.step)?.rows[0];
      const v: JsonValue | undefined = from?.[arg.ref.field];
      if (v === undefined || v === null) {
        if (cap.params.find((p) => p.name === name)?.required) {
          if (s.fanout) {
            values[name] = null;
            continue;
          }
          return {
            error: svcError(
              'vendor_bad_response',
              `step ${s.id}: the row of ${arg.ref.step} has no \`${arg.ref.field}\` to pass as \`${name}\``,
              { hint: 'the vendor left the field empty; nothing to follow' },
            ),
          };
        }
        continue;
      }
      values[name] = v;
    }
    if (Object.values(values).some((v) => v === null) && s.fanout) continue; // rows without the key are not followed
    const problem = boundValuesProblem(`step ${s.id}`, cap, values, bound);
    if (problem) return { error: problem };
    sets.push(values);
  }
  return { sets };
}
