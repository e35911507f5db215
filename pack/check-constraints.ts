/**
 * Checks of a parameter's constraints and `many`, and of a capability's `at_least_one`: each
 * constraint on a type it applies to, ranges that are not empty, a pattern that compiles, a
 * default that satisfies them, and `at_least_one` naming parameters of the capability.
 */
import { article } from '../common/article.js';
import { suggestHint } from '../common/suggest.js';
import type { Capability, JsonValue, ParamDef } from './cgs.js';
import { CONSTRAINT_KEYS } from './cgs.js';
import type { Fail } from './check-context.js';
import { CONSTRAINT_TYPES, compilePattern, valueProblem } from './param-constraints.js';
import { parseTemplate } from './template.js';

/** Reports constraints of `p` that do not fit its type or each other, and a `many` on a list type. */
export function checkConstraints(c: Capability, p: ParamDef, at: string, fail: Fail): void {
  const what = `\`${c.name}.${p.name}\``;
  for (const k of CONSTRAINT_KEYS) {
    if (p[k] === undefined || CONSTRAINT_TYPES[k].includes(p.type)) continue;
    const other = CONSTRAINT_TYPES[k][0] === 'string' ? 'minimum/maximum' : 'minLength/maxLength';
    const fits = CONSTRAINT_TYPES[k].join(' and ');
    fail(
      `${at}/${k}`,
      'bad_type',
      `${what} is ${article(p.type)}; \`${k}\` applies to ${fits} parameters`,
      p.type === 'string' || p.type === 'integer' || p.type === 'number'
        ? `remove \`${k}\`, or use ${other}`
        : `remove \`${k}\``,
    );
  }
  if (p.minimum !== undefined && p.maximum !== undefined && p.minimum > p.maximum)
    fail(
      `${at}/minimum`,
      'bad_type',
      `minimum ${p.minimum} of ${what} is above its maximum ${p.maximum}`,
      'no value could be given: swap them or fix one',
    );
  if (p.minLength !== undefined && p.maxLength !== undefined && p.minLength > p.maxLength)
    fail(
      `${at}/minLength`,
      'bad_type',
      `minLength ${p.minLength} of ${what} is above its maxLength ${p.maxLength}`,
      'no value could be given: swap them or fix one',
    );
  if (p.pattern !== undefined && compilePattern(p.pattern) === null)
    fail(
      `${at}/pattern`,
      'bad_type',
      `pattern ${JSON.stringify(p.pattern)} of ${what} is not a JavaScript regular expression: ${patternError(p.pattern)}`,
      "fix the expression (it is compiled as new RegExp(pattern, 'u')); in YAML write it in single quotes so backslashes stay as they are",
    );
  // A `many` path parameter is told once, by the mapping check.
  if (p.many && p.name === c.id_param && !parseTemplate(c.http.path).params.includes(p.name))
    fail(
      `${at}/many`,
      'bad_capability',
      `${what} is the id parameter of \`${c.name}\` and cannot be \`many\`: it names the one row acted on`,
      'remove `many`; a program acts on several rows by binding them (x = e1(...) then x.m2(...))',
    );
  if (p.many && (p.type === 'array' || p.type === 'object'))
    fail(
      `${at}/many`,
      'bad_type',
      `${what} is ${article(p.type)} and cannot also be \`many\``,
      p.type === 'array' ? 'an array parameter takes a list already: remove `many`' : 'remove `many`',
    );
}

/** Reports a default (already of the right type: one value, or a non-empty list for `many`) that breaks a constraint. */
export function checkDefaultConstraints(c: Capability, p: ParamDef, at: string, fail: Fail): void {
  const d = p.default as JsonValue;
  const broken = valueProblem(p, d);
  if (broken)
    fail(
      at,
      'bad_default',
      `default ${JSON.stringify(d)} of \`${c.name}.${p.name}\` breaks its ${broken.constraint}: ${broken.message}`,
      `write a default that satisfies ${broken.constraint}, or remove the default`,
    );
}

/** `at_least_one` names parameters of the capability. */
export function checkAtLeastOne(c: Capability, names: string[], at: string, fail: Fail): void {
  (c.at_least_one ?? []).forEach((n, i) => {
    if (!names.includes(n))
      fail(
        `${at}/${i}`,
        'unknown_parameter',
        `at_least_one of \`${c.name}\` names \`${n}\`, which is not a parameter of \`${c.name}\``,
        suggestHint(n, names),
      );
  });
}

function patternError(pattern: string): string {
  try {
    new RegExp(pattern, 'u');
    return 'unknown error';
  } catch (e) {
    // V8: "Invalid regular expression: /[a-/u: Unterminated character class": the reason is last.
    const m = (e as Error).message;
    return m.slice(m.lastIndexOf(': ') + 2);
  }
}
