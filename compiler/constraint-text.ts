/**
 * Short teaching text for parameter constraints, `many` and a capability's `at_least_one`: a few
 * tokens each, to follow a parameter (`rating:integer 1..5`) or close a capability row.
 */
import type { Capability, ParamDef } from '../pack/cgs.js';

/**
 * The constraints of `p` as a short suffix, '' when it has none.
 * @example paramConstraintText({ name: 'rating', type: 'integer', minimum: 1, maximum: 5, ... }) // '1..5'
 * @example paramConstraintText({ name: 'genre', type: 'string', many: true, maxLength: 80, ... }) // 'one or [..] len ≤80'
 */
export function paramConstraintText(p: ParamDef): string {
  const parts: string[] = [];
  if (p.many) parts.push('one or [..]');
  const range = rangeText(p.minimum, p.maximum);
  if (range) parts.push(range);
  const length = rangeText(p.minLength, p.maxLength);
  if (length) parts.push(`len ${length}`);
  if (p.format) parts.push(p.format);
  if (p.pattern !== undefined) parts.push(`/${p.pattern}/`);
  return parts.join(' ');
}

/**
 * The capability's `at_least_one` as a short clause, undefined when it has none: `at least one`
 * when it names every optional parameter but the id (the update default), else the names.
 * @example capabilityConstraintText(updateTicket) // 'at least one'
 */
export function capabilityConstraintText(cap: Capability): string | undefined {
  const names = cap.at_least_one ?? [];
  if (!names.length) return undefined;
  const optional = cap.params.filter((p) => !p.required && p.name !== cap.id_param).map((p) => p.name);
  const all = optional.length === names.length && optional.every((n) => names.includes(n));
  return all ? 'at least one' : `at least one of: ${names.join(', ')}`;
}

function rangeText(min: number | undefined, max: number | undefined): string {
  if (min !== undefined && max !== undefined) return `${min}..${max}`;
  if (min !== undefined) return `≥${min}`;
  if (max !== undefined) return `≤${max}`;
  return '';
}
