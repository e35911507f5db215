/**
 * Values taken from bound rows (`x.rating`, one call per row; a nest's row fields) are known only
 * at run time: before any vendor call, each is checked against its parameter's constraints, and
 * the call against the capability's `at_least_one`, and a value sent in a header for characters a
 * header cannot carry. A value that is an object or a list is never put into the URL path (the
 * compiler refuses it where the field's declared type says so; a vendor may still send one where a
 * scalar was declared). Literals were checked when the program compiled.
 */
import { svcError, type SvcError } from '../common/errors.js';
import { quoteJson } from '../common/quote.js';
import type { Capability, JsonValue } from '../pack/cgs.js';
import { headerValueProblem } from '../pack/header-values.js';
import { valueProblem } from '../pack/param-constraints.js';
import { inPathTemplate } from '../pack/template.js';
import type { Values } from './request.js';

/**
 * The problem of one call's `values`, or undefined. `bound` maps each parameter whose value came
 * from a row to where it came from (`n1.rating`), for the message; `what` names the step or nest.
 */
export function boundValuesProblem(
  what: string,
  cap: Capability,
  values: Values,
  bound: ReadonlyMap<string, string>,
): SvcError | undefined {
  for (const [name, from] of bound) {
    const p = cap.params.find((x) => x.name === name);
    const v = values[name];
    if (v !== null && typeof v === 'object' && inPathTemplate(cap.http.path, name))
      return svcError(
        'wrong_type',
        `${what}: \`${name}\` of ${cap.name} goes into the URL path (${cap.http.path}), and ${from} holds ${Array.isArray(v) ? 'a list' : 'an object'} there (${quoteJson(v)}); nothing was sent`,
        {
          hint: `bind a field that holds the ${name} itself (a string or a number)${objectKeyHint(v, from)}; if the vendor's rows always hold ${Array.isArray(v) ? 'a list' : 'an object'} there, the catalog's field type is wrong`,
        },
      );
    const broken = p && v !== undefined && v !== null ? valueProblem(p, v) : undefined;
    if (broken)
      return svcError('constraint_violation', `${what}: ${broken.message}; got ${quoteJson(v!)} from ${from}`, {
        hint: `the bound rows hold a value ${cap.name} does not accept: narrow them first (a filter on ${from.split('.').pop()}), or pass a literal`,
      });
    const header =
      v !== undefined && v !== null ? headerValueProblem(cap, name, v, `${what} (from ${from})`) : undefined;
    if (header) return header;
  }
  const least = cap.at_least_one ?? [];
  if (bound.size && least.length && !least.some((n) => values[n] !== undefined && values[n] !== null))
    return svcError(
      'missing_argument',
      `${what}: \`${cap.name}\` needs at least one of ${least.join(', ')}; the bound row left them empty`,
      { hint: `bind rows that have a value for one of them, or pass one as a literal` },
    );
  return undefined;
}

/** The first keys of an object value, for the hint: the reader may see the scalar it wanted among them. */
function objectKeyHint(v: JsonValue, from: string): string {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return '';
  const keys = Object.keys(v).slice(0, 4);
  return keys.length ? ` (${from} holds an object with ${keys.map((k) => `\`${k}\``).join(', ')})` : '';
}
