/**
 * Whether the rows a read decoded are rows of its entity (pure). The row path of a mapping
 * (`response.path`) that misses the vendor's envelope (`{"widget": {...}}`, `{"data": {...}}`)
 * still finds an object, and keeping only the declared fields of it would answer a row of empty
 * fields: an answer that carries none of them is `response_shape_mismatch` instead.
 *
 * A row passes when it is an object with at least one of the entity's declared fields (its id
 * is one of them): vendors leave optional fields out, and a sparse row is still a row. A row
 * that is not an object, or an object with none of the declared fields (`{}` included), fails.
 */
import type { Capability, Entity } from '../pack/cgs.js';

/** Why the rows found at the mapping's row path are not rows of `entity`, with a hint; undefined when they are. */
export interface ShapeProblem {
  problem: string;
  hint: string;
}

const SHOWN_KEYS = 6;

/** The first row of `rows` that is not a row of `entity`, said as a problem and a hint. */
export function rowShapeProblem(entity: Entity, cap: Capability, rows: readonly unknown[]): ShapeProblem | undefined {
  const declared = new Set(entity.fields.map((f) => f.name));
  const path = cap.http.response.path;
  const where = `\`${path || '(body)'}\``;
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i];
    const which = cap.returns === 'row' ? 'the row' : `row ${i + 1}`;
    if (row === null || typeof row !== 'object' || Array.isArray(row))
      return {
        problem: `${which} at ${where} is ${describe(row)}, not an object of ${entity.name}'s fields`,
        hint: pathHint(cap, entity, undefined),
      };
    if (declared.size === 0) continue;
    let carries = false;
    for (const k in row)
      if (declared.has(k)) {
        carries = true;
        break;
      }
    if (carries) continue;
    const keys = Object.keys(row);
    const has = keys.length
      ? `it has ${keys
          .slice(0, SHOWN_KEYS)
          .map((k) => `\`${k}\``)
          .join(', ')}${keys.length > SHOWN_KEYS ? ` and ${keys.length - SHOWN_KEYS} more` : ''}`
      : 'it is empty';
    return {
      problem: `${which} at ${where} carries none of ${entity.name}'s fields (${names(entity)}); ${has}`,
      hint: pathHint(cap, entity, wrapperOf(row as Record<string, unknown>, declared)),
    };
  }
  return undefined;
}

/** The key of `row` whose value is an object carrying a declared field: the envelope the vendor wraps its row in. */
function wrapperOf(row: Record<string, unknown>, declared: ReadonlySet<string>): string | undefined {
  for (const k in row) {
    const v = row[k];
    if (v === null || typeof v !== 'object' || Array.isArray(v)) continue;
    for (const f in v) if (declared.has(f)) return k;
  }
  return undefined;
}

function pathHint(cap: Capability, entity: Entity, wrapper: string | undefined): string {
  const path = cap.http.response.path;
  const at = `the mapping of ${cap.name} reads its ${cap.returns === 'row' ? 'row' : 'rows'} at response.path \`${path || '(body)'}\``;
  if (wrapper !== undefined && cap.returns === 'row')
    return `${at}; the vendor wraps the row in \`${wrapper}\`: set \`response: {path: ${path ? `${path}.` : ''}${wrapper}}\` in the catalog's mapping`;
  if (wrapper !== undefined)
    return `${at}; the vendor wraps each row in \`${wrapper}\`, which a row path cannot reach: check the catalog's mapping and entity against the vendor's answer`;
  return `${at}: point it at the ${cap.returns === 'row' ? 'object' : 'list of objects'} holding ${entity.name}'s fields, or check the backend URL`;
}

function names(entity: Entity): string {
  const shown = entity.fields.slice(0, SHOWN_KEYS).map((f) => f.name);
  return entity.fields.length > SHOWN_KEYS ? `${shown.join(', ')}, ...` : shown.join(', ');
}

function describe(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  return `a ${typeof v}`;
}
