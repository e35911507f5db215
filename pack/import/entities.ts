/**
 * Entities from the schemas that list and get operations return (the rows envelopes.ts finds):
 * named components first (by their component name), inline schemas named from the path
 * (`/breweries` -> Brewery). Fields keep
 * their wire names; names that are not valid catalog names, write-only and deprecated properties
 * and schemas without a safe type are left out (and reported).
 */
import type { ImportEntity, ImportLog, ImportType } from './model.js';
import { NameSet, isName, oneLine, pascalName, singular } from './names.js';
import { isObj, objectShape, scalarUnion, toType, type Schema } from './schema.js';

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
  /** Entities of resources known only by their path, by the name asked for. */
  private readonly byPath = new Map<string, ImportEntity>();
  /** Schemas already found to have no usable field (logged once). */
  private readonly fieldless = new Set<Schema>();
  constructor(
    private readonly components: Map<Schema, string>,
    private readonly log: ImportLog,
  ) {}

  /**
   * The entity of a row schema returned at `path`, created on first sight; an inline schema is
   * named `inline` when given (an RPC operation's name), else from the path.
   */
  entityFor(schema: Schema, path: string, inline?: string): ImportEntity | undefined {
    const known = this.bySchema.get(schema);
    if (known || this.fieldless.has(schema)) return known;
    const component = this.components.get(schema);
    const inlineName = inline ?? pascalName(singular(lastLiteral(path) ?? 'item'));
    if (!component) {
      const seen = this.byInline.get(inlineName);
      if (seen) return seen;
    }
    const entity = this.build(schema, component ? pascalName(component) : inlineName, component, path);
    if (!entity) {
      this.fieldless.add(schema);
      return undefined;
    }
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

  /**
   * The entity of a resource no read returns, known only by its path (`/databases/{databaseName}`
   * -> Database): its one field is the id, named and typed from the path parameter. An entity of
   * that name already found is that resource, when its rows have an id (not one read only by
   * singleton gets).
   */
  forPath(name: string, id: string, type: ImportType, source: string): ImportEntity {
    const seen = this.byPath.get(name) ?? this.byName(name);
    if (seen?.id && seen.fields.has(seen.id)) return seen;
    const entity: ImportEntity = {
      name: this.names.take(name),
      description: '',
      id,
      fields: new Map([[id, type]]),
      relations: [],
      source,
    };
    this.list.push(entity);
    this.byPath.set(name, entity);
    return entity;
  }

  private build(schema: Schema, base: string, component: string | undefined, path: string) {
    const fields = new Map<string, ImportType>();
    const left: string[] = [];
    const old: string[] = [];
    const widened: string[] = [];
    for (const [wire, s] of objectShape(schema).props) {
      const t = s.writeOnly === true ? undefined : toType(s);
      if (s.deprecated === true) old.push(wire);
      else if (!isName(wire) || !t) left.push(wire);
      else fields.set(wire, t);
      const union = t && fields.has(wire) ? scalarUnion(s) : undefined;
      if (union) widened.push(`${wire} (${union.join(' | ')})`);
    }
    const name = this.names.take(base);
    const what = `entity ${name}`;
    if (fields.size === 0) {
      this.log.skipped.push({
        what: `schema ${component ?? `inline at ${path}`}`,
        reason: 'no_fields',
        why: 'no field with a usable name and type',
      });
      return undefined;
    }
    if (left.length)
      this.log.review.push({ what, note: `fields left out (name or type not mappable): ${left.join(', ')}` });
    if (old.length) this.log.review.push({ what, note: `deprecated fields left out: ${old.join(', ')}` });
    if (widened.length)
      this.log.review.push({
        what,
        note: `fields of several scalar types, typed as the widest: ${widened.join(', ')}`,
      });
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
