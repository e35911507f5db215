/**
 * Type-checking literal values against parameter types. Pure: returns the JSON value or a
 * diagnostic-ready problem (message + hint); the resolver attaches positions.
 */
import type { JsonValue, ParamDef, TypeSpec } from '../pack/cgs.js';
import { constraintExample } from '../pack/param-constraints.js';
import { article } from '../common/article.js';
import { quote } from '../common/quote.js';
import { didYouMean, nearest } from '../common/suggest.js';
import type { Value } from './ast.js';
import { repairLiteral } from './repair-literal.js';

export type Checked =
  | { ok: true; value: JsonValue }
  | {
      ok: false;
      code: 'wrong_type' | 'enum_value_not_allowed' | 'constraint_violation';
      message: string;
      hint: string;
      at: Value;
      /** The corrected literal, as program text, when the intent is clear (`1999` for `"1999"`). */
      fix?: string;
    };

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/;

/** A short type description for messages and teaching rows: `string`, `micro|brewpub`, `list of integer`. */
export function describeType(t: TypeSpec): string {
  switch (t.type) {
    case 'enum':
      return t.values.map(String).join('|');
    case 'ref':
      return `${t.entity} id`;
    case 'array':
      return `list of ${describeType(t.items)}`;
    default:
      return t.type;
  }
}

function literalText(v: Value): string {
  switch (v.kind) {
    case 'string':
      return JSON.stringify(v.value.length > 30 ? v.value.slice(0, 27) + '...' : v.value);
    case 'integer':
    case 'decimal':
    case 'boolean':
      return String(v.value);
    case 'null':
      return 'null';
    case 'list':
      return 'a list';
    case 'object':
      return 'an object';
    case 'ref':
      return quote(v.field ? `${v.binding.text}.${v.field.text}` : v.binding.text);
  }
}

/**
 * An example literal of a type, as program text (used in hints and teaching rows). For a parameter
 * with constraints, a value that satisfies them (`rating` 1..5: `1`; format email: `"name@example.com"`).
 */
export function exampleLiteral(t: TypeSpec | ParamDef): string {
  const fit = 'name' in t ? constraintExample(t) : undefined;
  if (fit !== undefined) return JSON.stringify(fit);
  switch (t.type) {
    case 'string':
      return '"text"';
    case 'integer':
      return '1';
    case 'number':
      return '2.5';
    case 'boolean':
      return 'true';
    case 'date':
      return '"2024-01-31"';
    case 'datetime':
      return '"2024-01-31T12:00:00Z"';
    case 'enum':
      return JSON.stringify(t.values[0]);
    case 'ref':
      return '"<id>"';
    case 'array':
      return `[${exampleLiteral(t.items)}]`;
    case 'object':
      return '{}';
  }
}

/** An example id value for a parameter holding a row id: `"<id>"` for text ids, `1` for numbers. */
export function exampleId(t: TypeSpec): string {
  return t.type === 'integer' || t.type === 'number' ? '1' : '"<id>"';
}

/**
 * An id that compiles, for example programs (the teachability check): a value satisfying the id
 * parameter's constraints (`format: uuid`: `"123e4567-..."`, `minimum: 100`: `100`), the type's
 * example for an enum, date, date-time or boolean id (the enum's first value), else `exampleId`.
 * The teaching table keeps the placeholder `"<id>"`; a program compiled from it would break a
 * `uuid` id's format or a `date` id's type, and the capability would not be teachable.
 */
export function exampleIdValue(p: ParamDef): string {
  const fit = constraintExample(p);
  if (fit !== undefined) return JSON.stringify(fit);
  return ['string', 'integer', 'number', 'ref'].includes(p.type) ? exampleId(p) : exampleLiteral(p);
}

/** Check a literal (not a ref) against a type. `name` is the parameter, for messages. */
export function checkLiteral(name: string, t: TypeSpec, v: Value, optional: boolean): Checked {
  const wrong = (why?: string): Checked => {
    const fix = v.kind === 'null' ? undefined : repairLiteral(t, v);
    return {
      ok: false,
      code: 'wrong_type',
      at: v,
      message: `\`${name}\` takes ${article(describeType(t))}; got ${literalText(v)}${why ? ` (${why})` : ''}`,
      hint: fix ? `write ${name}=${fix}` : `write for example ${name}=${exampleLiteral(t)}`,
      ...(fix ? { fix } : {}),
    };
  };
  if (v.kind === 'null') return optional ? { ok: true, value: null } : wrong('a required parameter cannot be null');
  switch (t.type) {
    case 'string':
      return v.kind === 'string' ? { ok: true, value: v.value } : wrong();
    case 'integer':
      return v.kind === 'integer' ? { ok: true, value: v.value } : wrong();
    case 'number':
      return v.kind === 'integer' || v.kind === 'decimal' ? { ok: true, value: v.value } : wrong();
    case 'boolean':
      return v.kind === 'boolean' ? { ok: true, value: v.value } : wrong();
    case 'date':
      return v.kind === 'string' && DATE.test(v.value) && !Number.isNaN(Date.parse(v.value))
        ? { ok: true, value: v.value }
        : wrong('dates are written "YYYY-MM-DD"');
    case 'datetime':
      return v.kind === 'string' && DATETIME.test(v.value) && !Number.isNaN(Date.parse(v.value))
        ? { ok: true, value: v.value }
        : wrong('date-times are ISO 8601, e.g. "2024-01-31T12:00:00Z"');
    case 'ref':
      return v.kind === 'string' || v.kind === 'integer' ? { ok: true, value: v.value } : wrong();
    case 'enum': {
      const raw = v.kind === 'string' || v.kind === 'integer' || v.kind === 'decimal' ? v.value : undefined;
      if (raw === undefined) return wrong();
      if (t.values.includes(raw)) return { ok: true, value: raw };
      const allowed = t.values.map(String);
      const near = nearest(String(raw), allowed, 3);
      const fix = near.length === 1 ? JSON.stringify(t.values[allowed.indexOf(near[0]!)]) : undefined;
      const mean = fix ? `did you mean ${name}=${fix}? ` : near.length ? `${didYouMean(String(raw), allowed)} ` : '';
      return {
        ok: false,
        code: 'enum_value_not_allowed',
        at: v,
        message: `${literalText(v)} is not allowed for \`${name}\``,
        hint: `${mean}allowed: ${allowed.join(', ')}`,
        ...(fix ? { fix } : {}),
      };
    }
    case 'array': {
      if (v.kind !== 'list') return wrong();
      const out: JsonValue[] = [];
      for (const item of v.items) {
        const c = checkLiteral(name, t.items, item, false);
        // The item's fix is not the argument's: show a whole list instead.
        if (!c.ok) return { ...c, fix: undefined, hint: `write for example ${name}=${exampleLiteral(t)}` };
        out.push(c.value);
      }
      return { ok: true, value: out };
    }
    case 'object':
      return v.kind === 'object' ? toJson(v) : wrong();
  }
}

/** An object or list literal as plain JSON (refs inside objects are not allowed). */
function toJson(v: Value): Checked {
  switch (v.kind) {
    case 'string':
    case 'integer':
    case 'decimal':
    case 'boolean':
      return { ok: true, value: v.value };
    case 'null':
      return { ok: true, value: null };
    case 'list': {
      const out: JsonValue[] = [];
      for (const i of v.items) {
        const c = toJson(i);
        if (!c.ok) return c;
        out.push(c.value);
      }
      return { ok: true, value: out };
    }
    case 'object': {
      const out: Record<string, JsonValue> = {};
      for (const e of v.entries) {
        const c = toJson(e.value);
        if (!c.ok) return c;
        out[e.key.text] = c.value;
      }
      return { ok: true, value: out };
    }
    case 'ref':
      return {
        ok: false,
        code: 'wrong_type',
        at: v,
        message: `a binding reference cannot stand inside an object literal`,
        hint: 'pass the bound value as its own argument',
      };
  }
}
