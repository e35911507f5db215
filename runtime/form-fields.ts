/**
 * The fields of a form or multipart body (pure): a rendered body object flattened into
 * name/value pairs by the bracket convention that Rails, PHP, Express (`qs`) and most form-taking
 * vendors parse. Nested objects are `a[b]=1`, lists of scalars `a[]=1&a[]=2`, lists of objects
 * (or of lists) indexed `a[0][b]=1` so their fields stay grouped; booleans and numbers are their
 * text (`true`, `3.5`), `null` an empty value. An empty object or list sends no field.
 */
import type { JsonValue } from '../pack/cgs.js';

/** One field of a form body, in the order the template gives them. */
export type FormField = [name: string, value: string];

/**
 * The fields of `body`, a rendered body template (an object: the catalog checks that a form
 * body's template is one).
 * @example formFields({ name: 'x', tags: ['a', 'b'], owner: { id: 3 } })
 * // [['name', 'x'], ['tags[]', 'a'], ['tags[]', 'b'], ['owner[id]', '3']]
 */
export function formFields(body: JsonValue): FormField[] {
  const out: FormField[] = [];
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new Error('assertion: a form body is an object (checked when the catalog is packed)');
  for (const [k, v] of Object.entries(body)) add(out, k, v);
  return out;
}

function add(out: FormField[], name: string, v: JsonValue): void {
  if (v === null) out.push([name, '']);
  else if (Array.isArray(v)) {
    const nested = v.some((x) => x !== null && typeof x === 'object');
    v.forEach((x, i) => add(out, nested ? `${name}[${i}]` : `${name}[]`, x));
  } else if (typeof v === 'object') for (const [k, x] of Object.entries(v)) add(out, `${name}[${k}]`, x);
  else out.push([name, String(v)]);
}
