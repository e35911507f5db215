/**
 * What a parameter's value must satisfy beyond its type: the constraints (`minimum`, `maximum`,
 * `minLength`, `maxLength`, `pattern`, `format`) and `many` (one value or a non-empty list).
 * Pure and shared: packing checks defaults with it, the compiler literals, the runtime values taken
 * from bound rows, the server client-posted plans.
 *
 * Formats, kept simple on purpose (a value the vendor may still refuse is the vendor's to refuse):
 * - `email`: `local@domain`, no spaces, one `@`, a domain of two or more dot-separated labels;
 * - `uri`: an absolute URI (a scheme such as `https:`, `mailto:` or `urn:`) that WHATWG `URL` parses, no spaces;
 * - `uuid`: 8-4-4-4-12 hexadecimal digits, either case, any version;
 * - `date`: `YYYY-MM-DD`, a real day (the `date` type's rule);
 * - `date-time`: `YYYY-MM-DDTHH:MM[:SS[.fff]]` with an optional `Z` or `±HH:MM` (the `datetime` type's rule).
 */
import type { JsonValue, ParamConstraints, ParamDef, StringFormat, TypeSpec } from './cgs.js';
import { valueFits } from './check-type.js';
import { patternExample } from './pattern-example.js';

export type ConstraintName = keyof ParamConstraints;

/** A broken constraint: its name and a message naming the parameter (`` `rating` must be at most 5 ``). */
export interface ConstraintProblem {
  constraint: ConstraintName;
  message: string;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/;
const EMAIL = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:\S+$/;

/** True when `s` is of `format` (see the module comment). */
export function fitsFormat(format: StringFormat, s: string): boolean {
  switch (format) {
    case 'email':
      return EMAIL.test(s);
    case 'uri':
      return SCHEME.test(s) && URL.canParse(s);
    case 'uuid':
      return UUID.test(s);
    case 'date':
      return DATE.test(s) && !Number.isNaN(Date.parse(s));
    case 'date-time':
      return DATETIME.test(s) && !Number.isNaN(Date.parse(s));
  }
}

/** How a format is named in messages: `an email address`. */
export const FORMAT_WORDS: Record<StringFormat, string> = {
  email: 'an email address',
  uri: 'an absolute URI',
  uuid: 'a UUID',
  date: 'a date (YYYY-MM-DD)',
  'date-time': 'a date-time (ISO 8601)',
};

const patterns = new Map<string, RegExp | null>();

/** The compiled `pattern` (flag `u`), or null when it is no JavaScript regular expression. */
export function compilePattern(pattern: string): RegExp | null {
  let re = patterns.get(pattern);
  if (re === undefined) {
    try {
      re = new RegExp(pattern, 'u');
    } catch {
      re = null;
    }
    if (patterns.size < 1000) patterns.set(pattern, re);
  }
  return re;
}

/**
 * The first constraint of `p` that the single value `v` breaks, or undefined. A value of another
 * JSON type than the constraint applies to is not checked here (that is the type check's job).
 */
export function constraintProblem(p: ParamDef, v: JsonValue): ConstraintProblem | undefined {
  const name = `\`${p.name}\``;
  if (typeof v === 'number') {
    if (p.minimum !== undefined && v < p.minimum)
      return { constraint: 'minimum', message: `${name} must be at least ${p.minimum}` };
    if (p.maximum !== undefined && v > p.maximum)
      return { constraint: 'maximum', message: `${name} must be at most ${p.maximum}` };
  }
  if (typeof v !== 'string') return undefined;
  const length = [...v].length;
  if (p.minLength !== undefined && length < p.minLength)
    return { constraint: 'minLength', message: `${name} must be at least ${chars(p.minLength)} long` };
  if (p.maxLength !== undefined && length > p.maxLength)
    return { constraint: 'maxLength', message: `${name} must be at most ${chars(p.maxLength)} long` };
  if (p.pattern !== undefined && compilePattern(p.pattern)?.test(v) === false)
    return { constraint: 'pattern', message: `${name} must match /${p.pattern}/` };
  if (p.format !== undefined && !fitsFormat(p.format, v))
    return { constraint: 'format', message: `${name} must be ${FORMAT_WORDS[p.format]}` };
  return undefined;
}

/** Every item of a value: the items of a `many` parameter's list, else the value itself. */
export function itemsOf(p: ParamDef, v: JsonValue): JsonValue[] {
  return p.many && Array.isArray(v) ? v : [v];
}

/** The first constraint broken by `v` or, for a `many` parameter given a list, by one of its items. */
export function valueProblem(p: ParamDef, v: JsonValue): ConstraintProblem | undefined {
  for (const x of itemsOf(p, v)) {
    const c = constraintProblem(p, x);
    if (c) return c;
  }
  return undefined;
}

/** True when `v` is a value of `p`'s type, or for a `many` parameter a non-empty list of such values. */
export function paramValueFits(p: ParamDef, v: unknown): boolean {
  if (p.many && Array.isArray(v)) return v.length > 0 && v.every((x) => valueFits(p, x));
  return valueFits(p, v);
}

/** The types each constraint applies to. */
export const CONSTRAINT_TYPES: Record<ConstraintName, readonly TypeSpec['type'][]> = {
  minimum: ['integer', 'number'],
  maximum: ['integer', 'number'],
  minLength: ['string'],
  maxLength: ['string'],
  pattern: ['string'],
  format: ['string'],
};

/**
 * A few common shapes tried, in order, as the example of a string with a `pattern`: words, codes
 * and digits, then the shapes of ids and dates a pattern often spells out instead of a `format`
 * (`^[0-9a-f-]{36}$`, `^\d{4}-\d{2}-\d{2}$`).
 */
const PATTERN_TRIES = [
  'text',
  'ABC',
  'abc',
  'AB',
  'ab',
  'A',
  'a',
  'Abc',
  'ABC123',
  'abc-123',
  'a1',
  'A1',
  '123',
  '1',
  '123e4567-e89b-12d3-a456-426614174000',
  '2024-01-31',
  '2024-01-31T12:00:00Z',
  'name@example.com',
  'https://example.com',
];
const FORMAT_EXAMPLES: Record<StringFormat, string> = {
  email: 'name@example.com',
  uri: 'https://example.com',
  uuid: '123e4567-e89b-12d3-a456-426614174000',
  date: '2024-01-31',
  'date-time': '2024-01-31T12:00:00Z',
};

/**
 * An example value of a constrained parameter that satisfies its constraints, for hints and for
 * the teaching examples (`rating` 1..5: 1; `email` format: "name@example.com"); undefined when the
 * parameter has no constraint (the type's own example serves) or no simple example fits.
 */
export function constraintExample(p: ParamDef): JsonValue | undefined {
  if (p.type === 'integer' || p.type === 'number') {
    if (p.minimum === undefined && p.maximum === undefined) return undefined;
    let n = p.type === 'integer' ? 1 : 2.5;
    if (p.maximum !== undefined && n > p.maximum) n = p.type === 'integer' ? Math.floor(p.maximum) : p.maximum;
    if (p.minimum !== undefined && n < p.minimum) n = p.type === 'integer' ? Math.ceil(p.minimum) : p.minimum;
    return constraintProblem(p, n) ? undefined : n;
  }
  if (p.type !== 'string') return undefined;
  if ([p.minLength, p.maxLength, p.pattern, p.format].every((x) => x === undefined)) return undefined;
  const tries = p.format ? [FORMAT_EXAMPLES[p.format]] : patternTries(p.pattern);
  const sized = tries.map((s) => fitLength(s, p.minLength, p.maxLength));
  return sized.find((s) => !constraintProblem(p, s));
}

/**
 * The samples tried for a pattern: common shapes first (shapeTries: `ABC` reads better than the
 * `AAA` of the pattern), then one written from the pattern itself (pattern-example.ts).
 */
function patternTries(pattern: string | undefined): string[] {
  const sample = pattern === undefined ? undefined : patternExample(pattern);
  const tries = shapeTries(pattern);
  return sample ? [...tries, sample] : tries;
}

/**
 * The shapes tried for a pattern: after a literal start (`^arn:`, `^sk_`, `^https://`), each shape
 * behind that start first (`arn:text`), then the shapes alone.
 */
function shapeTries(pattern: string | undefined): string[] {
  const m = pattern === undefined ? null : /^\^((?:[A-Za-z0-9:_/@=,-]|\\[./:_-])+)/.exec(pattern);
  if (!m) return PATTERN_TRIES;
  let start = m[1]!.replace(/\\(.)/g, '$1');
  // A quantifier after the literal start applies to its last character: leave that one out.
  if (/^[?*{]/.test(pattern!.slice(m[0].length))) start = start.slice(0, -1);
  return start ? [...PATTERN_TRIES.map((s) => start + s), ...PATTERN_TRIES] : PATTERN_TRIES;
}

function fitLength(s: string, min = 0, max = Infinity): string {
  const cut = [...s].slice(0, max).join('');
  return cut.length >= min ? cut : cut + 'x'.repeat(min - cut.length);
}

function chars(n: number): string {
  return n === 1 ? '1 character' : `${n} characters`;
}
