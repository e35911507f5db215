/**
 * A parameter's JSON Schema keywords as catalog constraints (`minimum`, `maximum`, `minLength`,
 * `maxLength`, `pattern`, `format`), and a query array sent as repeated keys as a `many`
 * parameter of its item type. What the catalog cannot say (`multipleOf`, an exclusive bound of a
 * number, `minItems`, an unknown format, a pattern that is no JavaScript regular expression) is
 * left out and named, so the report can list it: the vendor still checks it.
 */
import type { JsonValue, ParamConstraints, ParamDef, StringFormat, TypeSpec } from '../cgs.js';
import { STRING_FORMATS } from '../cgs.js';
import { compilePattern, constraintExample, valueProblem } from '../param-constraints.js';
import type { ImportType } from './model.js';
import { isObj, type Schema } from './schema.js';

export interface Constrained {
  constraints: ParamConstraints;
  /** Keywords of the document left out, each with why (`multipleOf 5: no catalog constraint`). */
  left: string[];
}

/** Formats that only refine a number's or a string's type: not constraints, and not worth a note. */
const TYPE_FORMATS = new Set(['int32', 'int64', 'float', 'double', 'byte', 'password', 'binary', 'date', 'date-time']);
const num = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const count = (v: unknown): v is number => num(v) && Number.isInteger(v) && v >= 0;

/** The numeric bounds of `s` for an integer or number parameter, exclusive bounds of integers made inclusive. */
function bounds(s: Schema, integer: boolean, out: Constrained): void {
  const c = out.constraints;
  if (num(s.minimum)) c.minimum = s.minimum;
  if (num(s.maximum)) c.maximum = s.maximum;
  for (const [key, bound, step] of [
    ['exclusiveMinimum', 'minimum', 1],
    ['exclusiveMaximum', 'maximum', -1],
  ] as const) {
    const x: unknown = s[key];
    // OpenAPI 3.0: a boolean turning the bound exclusive; 3.1 (JSON Schema): the bound itself.
    const at = x === true ? c[bound] : num(x) ? x : undefined;
    if (at === undefined) continue;
    if (integer && Number.isInteger(at)) c[bound] = at + step;
    else {
      if (x === true) delete c[bound];
      out.left.push(`${key} ${String(x === true ? at : x)} (a number's exclusive bound has no catalog constraint)`);
    }
  }
  if (c.minimum !== undefined && c.maximum !== undefined && c.minimum > c.maximum) {
    out.left.push(`minimum ${c.minimum} above maximum ${c.maximum} (no value fits)`);
    delete c.minimum;
    delete c.maximum;
  }
}

/** Length, pattern and format of `s` for a string parameter. */
function strings(s: Schema, out: Constrained): void {
  const c = out.constraints;
  if (count(s.minLength) && s.minLength > 0) c.minLength = s.minLength;
  if (count(s.maxLength)) c.maxLength = s.maxLength;
  if (c.minLength !== undefined && c.maxLength !== undefined && c.minLength > c.maxLength) {
    out.left.push(`minLength ${c.minLength} above maxLength ${c.maxLength} (no value fits)`);
    delete c.minLength;
    delete c.maxLength;
  }
  if (typeof s.pattern === 'string' && s.pattern !== '') {
    if (compilePattern(s.pattern) !== null) c.pattern = s.pattern;
    else out.left.push(`pattern /${s.pattern}/ (not a JavaScript regular expression with the u flag)`);
  }
  if (typeof s.format === 'string' && !TYPE_FORMATS.has(s.format)) {
    if ((STRING_FORMATS as readonly string[]).includes(s.format)) c.format = s.format as StringFormat;
    else out.left.push(`format ${s.format} (not one of ${STRING_FORMATS.join(', ')})`);
  }
}

/**
 * The constraints of a parameter of type `t` from its (item) schema `s`. Only the keywords the
 * catalog has for `t` are carried; the rest of the keywords that limit values are named in `left`.
 */
export function constraintsOf(s: Schema, t: ImportType): Constrained {
  const out: Constrained = { constraints: {}, left: [] };
  if (!isObj(s)) return out;
  if (t.type === 'integer' || t.type === 'number') bounds(s, t.type === 'integer', out);
  else if (t.type === 'string') strings(s, out);
  if (num(s.multipleOf)) out.left.push(`multipleOf ${s.multipleOf} (no catalog constraint)`);
  return out;
}

/** The list keywords of an array parameter that a `many` parameter cannot say. */
export function listKeywordsLeft(s: Schema): string[] {
  const left: string[] = [];
  if (count(s.minItems) && s.minItems > 1) left.push(`minItems ${s.minItems} (a \`many\` list has no length limit)`);
  if (count(s.maxItems)) left.push(`maxItems ${s.maxItems} (a \`many\` list has no length limit)`);
  if (s.uniqueItems === true) left.push('uniqueItems (not checked)');
  return left;
}

/**
 * Keeps a required parameter teachable: its example (the teaching table's and the teachability
 * check's) must satisfy the constraints. A pattern no simple example matches is left out, then
 * the lengths; each is named in `left`.
 */
export function keepTeachable(name: string, t: TypeSpec, c: Constrained): void {
  const def = (): ParamDef => ({ ...t, ...c.constraints, name, description: '', required: true });
  const fits = () =>
    t.type !== 'string' || Object.keys(c.constraints).length === 0 || constraintExample(def()) !== undefined;
  if (!fits() && c.constraints.pattern !== undefined) {
    c.left.push(
      `pattern /${c.constraints.pattern}/ (no example value matches it: a required parameter must stay teachable)`,
    );
    delete c.constraints.pattern;
  }
  if (!fits()) {
    c.left.push('minLength/maxLength (no example value fits them)');
    delete c.constraints.minLength;
    delete c.constraints.maxLength;
  }
}

/** Whether `value` breaks the constraints (each item of a `many` list checked). */
export function defaultBreaks(name: string, t: TypeSpec, c: ParamConstraints, many: boolean, value: unknown): boolean {
  const def: ParamDef = { ...t, ...c, name, description: '', required: false, ...(many ? { many: true } : {}) };
  return valueProblem(def, value as JsonValue) !== undefined;
}
