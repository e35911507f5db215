/**
 * A field declared `object` or `array` never fills a parameter interpolated into the URL path: its
 * whole JSON would go there (often kilobytes; vendors answer 414 or 431 with no useful hint). The
 * compiler refuses it where the field's type is known; runtime/check-values.ts refuses a value
 * that turns out to be an object or a list at run time.
 */
import type { Capability, Entity, FieldDef, Relation } from '../pack/cgs.js';
import { inPathTemplate } from '../pack/template.js';

/** The message when `field`, written as `shown` (`w.spec`), would fill `param` of `cap` in its URL path; else undefined. */
export function objectIntoPath(
  cap: Capability,
  param: string,
  field: FieldDef | undefined,
  shown: string,
): string | undefined {
  if (!field || (field.type !== 'object' && field.type !== 'array')) return undefined;
  if (!inPathTemplate(cap.http.path, param)) return undefined;
  return `\`${param}\` of ${cap.name} goes into the URL path (${cap.http.path}); \`${shown}\` is ${field.type === 'object' ? 'an object' : 'a list'}`;
}

/** The first fields that hold a plain value (not an object or a list), as a hint lists them. */
export function scalarFields(fields: readonly FieldDef[]): string {
  const names = fields.filter((f) => f.type !== 'object' && f.type !== 'array').map((f) => `\`${f.name}\``);
  return names.length > 6 ? `${names.slice(0, 6).join(', ')}, ...` : names.join(', ');
}

/** The diagnostic of a relation of `entity` whose catalog bind puts an object or a list field into `cap`'s URL path. */
export function relationIntoPath(
  entity: Entity,
  rel: Relation,
  cap: Capability,
  param: string,
  field: string,
): { message: string; hint: string } | undefined {
  const def = entity.fields.find((f) => f.name === field);
  const message = objectIntoPath(cap, param, def, `${entity.name}.${field}`);
  if (!message) return undefined;
  return {
    message: `${rel.name}: ${message}`,
    hint: `the catalog binds ${rel.name}'s \`${param}\` to \`${field}\`: fix its bind to a field holding the ${param} itself (${scalarFields(entity.fields)}), or call ${cap.name} with the ${param} yourself`,
  };
}
