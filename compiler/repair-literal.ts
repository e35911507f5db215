/**
 * The literal an agent meant when it wrote a value of the wrong type: a number or a boolean in
 * quotes (`"1999"`, `"true"`, `"yes"`), a number where text is expected, one value where a list
 * is expected. Used by hints to show the corrected argument (`founded=1999`).
 */
import type { TypeSpec } from '../pack/cgs.js';
import type { Value } from './ast.js';

const INTEGER = /^-?\d+$/;
const NUMBER = /^-?\d+(\.\d+)?$/;
const TRUE = new Set(['true', 'yes', 'y', 'on', '1']);
const FALSE = new Set(['false', 'no', 'n', 'off', '0']);

/** The corrected literal, as program text, or undefined when the intent is not clear. */
export function repairLiteral(t: TypeSpec, v: Value): string | undefined {
  const s = v.kind === 'string' ? v.value.trim() : undefined;
  switch (t.type) {
    case 'integer':
      if (s !== undefined && INTEGER.test(s) && Number.isSafeInteger(Number(s))) return String(Number(s));
      if (v.kind === 'decimal' && Number.isInteger(v.value)) return String(v.value);
      return undefined;
    case 'number':
      return s !== undefined && NUMBER.test(s) ? String(Number(s)) : undefined;
    case 'boolean': {
      const w = s?.toLowerCase() ?? (v.kind === 'integer' ? String(v.value) : undefined);
      if (w === undefined) return undefined;
      return TRUE.has(w) ? 'true' : FALSE.has(w) ? 'false' : undefined;
    }
    case 'string':
      return v.kind === 'integer' || v.kind === 'decimal' || v.kind === 'boolean'
        ? JSON.stringify(String(v.value))
        : undefined;
    case 'array': {
      if (v.kind === 'list') return undefined;
      const item = repairLiteral(t.items, v);
      if (item) return `[${item}]`;
      return v.kind === 'string' || v.kind === 'integer' || v.kind === 'decimal' || v.kind === 'boolean'
        ? `[${v.kind === 'string' ? JSON.stringify(v.value) : String(v.value)}]`
        : undefined;
    }
    default:
      return undefined;
  }
}
