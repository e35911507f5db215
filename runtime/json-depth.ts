/**
 * How deep a parsed JSON value nests, found without recursion. V8's JSON.parse reads any depth,
 * but what walks a value after it recurses (JSON.stringify, the TOON encoder, the plain table's
 * flattening, coercion): at a few thousand levels each of them overflows the stack. A vendor
 * answer is checked once here, after parsing, so no later walk meets a value deeper than the bound.
 */

/**
 * Deepest nesting of arrays and objects svc reads in a vendor answer (the body as a whole: a
 * top-level list is level 1). No real API comes near it, and every later walk is safe well past it.
 */
export const MAX_VENDOR_JSON_DEPTH = 256;

/**
 * True when `value` holds arrays or objects nested more than `max` levels deep (`[]` is 1,
 * `[[]]` is 2; scalars are 0). An explicit stack, not recursion: a value 100,000 levels deep is
 * answered without touching the call stack, and as soon as one level past `max` is seen.
 *
 * @example
 * jsonDeeperThan(JSON.parse('[[1]]'), 1); // true
 */
export function jsonDeeperThan(value: unknown, max: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (max < 1) return true;
  // Containers still to look into, and the level of each (parallel stacks: no pair per entry).
  const open: object[] = [value];
  const levels: number[] = [1];
  while (open.length > 0) {
    const v = open.pop()!;
    const inner = levels.pop()! + 1;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const x: unknown = v[i];
        if (x === null || typeof x !== 'object') continue;
        if (inner > max) return true;
        open.push(x);
        levels.push(inner);
      }
    } else {
      for (const k in v) {
        const x: unknown = (v as Record<string, unknown>)[k];
        if (x === null || typeof x !== 'object') continue;
        if (inner > max) return true;
        open.push(x);
        levels.push(inner);
      }
    }
  }
  return false;
}
