/**
 * Entities from the schemas that list and get operations return: named components first (by
 * their component name), inline schemas named from the path (`/breweries` -> Brewery); of a
 * response that is one of several lists, the richest. Fields keep
 * their wire names; names that are not valid catalog names, write-only and deprecated properties
 * and schemas without a safe type are left out (and reported).
 */
import type { ImportEntity, ImportLog, ImportType } from './model.js';
import { NameSet, isName, oneLine, pascalName, singular } from './names.js';
import { isObj, isRowSchema, objectShape, toType, type Schema } from './schema.js';

/** Where the rows (or the row) are in a response, and a total count beside them. */
export interface RowResult {
  returns: 'rows' | 'row';
  schema: Schema;
  path: string;
  totalPath?: string;
  /** The response is one of several lists; `schema` is the richest (see listAlternatives). */
  oneOfLists?: true;
}

const WRAPPERS = ['data', 'items', 'results', 'records', 'entries', 'values', 'content', 'list', 'rows'];
const TOTALS = ['total', 'total_count', 'totalCount', 'total_results', 'totalResults', 'count'];

/** The rows or row a response schema holds: an array, an object wrapping one array, or an object. */
export function rowResult(schema: Schema | undefined): RowResult | undefined {
  if (!isObj(schema)) return undefined;
  const lists = listAlternatives(schema);
  if (lists) return { returns: 'rows', schema: lists, path: '', oneOfLists: true };
  if (isObj(schema.items) && (schema.type === 'array' || !schema.properties))
    return isRowSchema(schema.items) ? { returns: 'rows', schema: schema.items, path: '' } : undefined;
  if (!isRowSchema(schema)) return undefined;
  const { props } = objectShape(schema);
  const arrays = [...props].filter(([, v]) => isObj(v.items) && isRowSchema(v.items));
  // A wrapper holds the rows under a conventional name, or is nothing but one list and counters.
  const named = arrays.find(([k]) => WRAPPERS.includes(k));
  const sole = arrays.length === 1 && !props.has('id') && props.size <= 4 ? arrays[0] : undefined;
  const wrapper = named ?? sole;
  if (wrapper) {
    const total = TOTALS.find((t) => props.has(t) && ['integer', 'number'].includes(String(props.get(t)!.type)));
    return {
      returns: 'rows',
      schema: wrapper[1].items as Schema,
      path: wrapper[0],
      ...(total ? { totalPath: total } : {}),
    };
  }
  return { returns: 'row', schema, path: '' };
}

/**
 * The item schema of a response that is one of several lists of rows (`anyOf: [array of
 * simple-user, array of stargazer]`): the richest one, by property count (first on a tie). The
 * others are usually the same rows wrapped for another media type (`{starred_at, user}`).
 */
function listAlternatives(s: Schema): Schema | undefined {
  if (s.properties || s.items) return undefined;
  const parts = [s.oneOf, s.anyOf].find((x) => Array.isArray(x)) as unknown[] | undefined;
  if (!parts || parts.length < 2) return undefined;
  const rows = parts.map((p) => (isObj(p) && p.type === 'array' && isRowSchema(p.items) ? p.items : undefined));
  if (!rows.every((r) => r !== undefined)) return undefined;
  const size = (r: Schema) => objectShape(r).props.size;
  return rows.reduce((best, r) => (size(r) > size(best) ? r : best));
}

/** Component schema object -> its name (dereferencing keeps one object per component). */
export function componentNames(doc: Schema): Map<Schema, string> {
  const out = new Map<Schema, string>();
  const schemas = isObj(doc.components) && isObj(doc.components.schemas) ? doc.components.schemas : {};
  for (const [name, s] of Object.entries(schemas)) if (isObj(s) && !out.has(s)) out.set(s, name);
  return out;
}

/** The entities found so far, by schema object and by name. */
export class EntityTable {
  readonly list: ImportEntity[] = [];
  private readonly bySchema = new Map<Schema, ImportEntity>();
  private readonly byInline = new Map<string, ImportEntity>();
  private readonly names = new NameSet();
  constructor(
    private readonly components: Map<Schema, string>,
    private readonly log: ImportLog,
  ) {}

  /** The entity of a row schema returned at `path`, created on first sight. */
  entityFor(schema: Schema, path: string): ImportEntity | undefined {
    const known = this.bySchema.get(schema);
    if (known) return known;
    const component = this.components.get(schema);
    const inlineName = pascalName(singular(lastLiteral(path) ?? 'item'));
    if (!component) {
      const seen = this.byInline.get(inlineName);
      if (seen) return seen;
    }
    const entity = this.build(schema, component ? pascalName(component) : inlineName, component, path);
    if (!entity) return undefined;
    this.bySchema.set(schema, entity);
    if (!component) this.byInline.set(inlineName, entity);
    return entity;
  }

  /**
   * The entity of a schema already seen (a write's response), if any: the schema itself, or one
   * extending it (`allOf: [<row schema>, {more properties}]`, a write answering with its row plus
   * a few extra fields).
   */
  known(schema: Schema | undefined): ImportEntity | undefined {
    if (!schema) return undefined;
    const seen = this.bySchema.get(schema);
    if (seen || !Array.isArray(schema.allOf) || schema.properties) return seen;
    const rows = (schema.allOf as unknown[]).flatMap((p) => {
      const e = isObj(p) ? this.bySchema.get(p) : undefined;
      return e ? [e] : [];
    });
    return rows.length === 1 ? rows[0] : undefined;
  }

  byName(name: string): ImportEntity | undefined {
    return this.list.find((e) => e.name === name);
  }

  private build(schema: Schema, base: string, component: string | undefined, path: string) {
    const fields = new Map<string, ImportType>();
    const left: string[] = [];
    const old: string[] = [];
    for (const [wire, s] of objectShape(schema).props) {
      const t = s.writeOnly === true ? undefined : toType(s);
      if (s.deprecated === true) old.push(wire);
      else if (!isName(wire) || !t) left.push(wire);
      else fields.set(wire, t);
    }
    const name = this.names.take(base);
    const what = `entity ${name}`;
    if (fields.size === 0) {
      this.log.skipped.push({
        what: `schema ${component ?? `inline at ${path}`}`,
        why: 'no field with a usable name and type',
      });
      return undefined;
    }
    if (left.length)
      this.log.review.push({ what, note: `fields left out (name or type not mappable): ${left.join(', ')}` });
    if (old.length) this.log.review.push({ what, note: `deprecated fields left out: ${old.join(', ')}` });
    const entity: ImportEntity = {
      name,
      description: oneLine(schema.description) || oneLine(schema.title),
      id: '',
      fields,
      relations: [],
      source: component ? `#/components/schemas/${component}` : `inline schema at ${path}`,
    };
    this.list.push(entity);
    return entity;
  }
}

/** The last path segment that is not a `{param}`, cleaned of an extension (`pets.json` -> pets). */
export function lastLiteral(path: string): string | undefined {
  const lits = path.split('/').filter((s) => s && !s.startsWith('{'));
  return lits[lits.length - 1]?.replace(/\.\w+$/, '');
}
