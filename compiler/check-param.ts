/**
 * A literal checked against a parameter: its type (`checkLiteral`), `many` (one value or a
 * non-empty list, each item checked), and the parameter's constraints (`constraint_violation`,
 * with the nearest valid value as the fix when there is one). Pure, like `values.ts`.
 */
import { quoteJson } from '../common/quote.js';
import type { CONSTRAINT_KEYS, JsonValue, ParamDef } from '../pack/cgs.js';
import { constraintExample, constraintProblem, type ConstraintProblem } from '../pack/param-constraints.js';
import type { Value } from './ast.js';
import { checkLiteral, exampleLiteral, type Checked } from './values.js';

/** Check literal `v` given to `p` (`optional`: null is allowed). A failure's `at` is the offending item of a list. */
export function checkParamLiteral(p: ParamDef, v: Value, optional: boolean): Checked {
  if (!p.many || v.kind !== 'list') return checkOne(p, v, optional);
  if (v.items.length === 0)
    return {
      ok: false,
      code: 'wrong_type',
      at: v,
      message: `\`${p.name}\` takes one value or a list of one or more; got an empty list`,
      hint: `leave ${p.name} out, or write ${p.name}=${exampleLiteral(p)} or ${p.name}=[${exampleLiteral(p)}]`,
    };
  const out: JsonValue[] = [];
  for (const item of v.items) {
    if (item.kind === 'list')
      return {
        ok: false,
        code: 'wrong_type',
        at: item,
        message: `\`${p.name}\` takes one value or a flat list of them; got a list inside the list`,
        hint: `write the items in one list: ${p.name}=[${exampleLiteral(p)}, ...]`,
      };
    const c = checkOne(p, item, false);
    if (!c.ok) return c;
    out.push(c.value);
  }
  return { ok: true, value: out };
}

function checkOne(p: ParamDef, v: Value, optional: boolean): Checked {
  const c = checkLiteral(p.name, p, v, optional);
  if (!c.ok || c.value === null || !constrained(p)) return c;
  const broken = constraintProblem(p, c.value);
  if (!broken) return c;
  const fix = fixOf(p, c.value, broken);
  return {
    ok: false,
    code: 'constraint_violation',
    at: v,
    message: `${broken.message}; got ${quoteJson(c.value)}`,
    hint:
      fix !== undefined ? `write ${p.name}=${fix}` : `write a value for ${p.name} that satisfies ${broken.constraint}`,
    ...(fix !== undefined ? { fix } : {}),
  };
}

/**
 * True when `p` has a constraint (else `constraintProblem` finds nothing, and is not asked). The
 * keys are written out (a loop over `CONSTRAINT_KEYS` reads them by computed name, slowly);
 * `_constraints` stops the build when a constraint is added and not checked here.
 */
function constrained(p: ParamDef): boolean {
  return (
    p.minimum !== undefined ||
    p.maximum !== undefined ||
    p.minLength !== undefined ||
    p.maxLength !== undefined ||
    p.pattern !== undefined ||
    p.format !== undefined
  );
}
const _constraints = {
  minimum: true,
  maximum: true,
  minLength: true,
  maxLength: true,
  pattern: true,
  format: true,
} satisfies Record<(typeof CONSTRAINT_KEYS)[number], true>;

/** The nearest valid value, as program text: the bound for a range, the cut text for maxLength, else an example. */
function fixOf(p: ParamDef, v: JsonValue, broken: ConstraintProblem): string | undefined {
  const whole = p.type === 'integer';
  const candidates: JsonValue[] = [];
  if (broken.constraint === 'minimum' && p.minimum !== undefined)
    candidates.push(whole ? Math.ceil(p.minimum) : p.minimum);
  if (broken.constraint === 'maximum' && p.maximum !== undefined)
    candidates.push(whole ? Math.floor(p.maximum) : p.maximum);
  if (broken.constraint === 'maxLength' && typeof v === 'string' && p.maxLength !== undefined)
    candidates.push([...v].slice(0, p.maxLength).join(''));
  const example = constraintExample(p);
  if (example !== undefined) candidates.push(example);
  const fit = candidates.find((x) => !constraintProblem(p, x));
  return fit === undefined ? undefined : JSON.stringify(fit);
}
