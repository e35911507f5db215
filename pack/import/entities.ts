/**
 * Entities from the schemas that list and get operations return (the rows envelopes.ts finds):
 * named components first (by their component name), inline schemas named from the path
 * (`/breweries` -> Brewery). Fields keep
 * their wire names; names that are not valid catalog names, write-only and deprecated properties
 * and schemas without a safe type are left out (and reported).
 *
 * One resource is one entity (`plan`): the list at `/xs` and the get at `/xs/{id}` share it, and
 * when they answer different schemas (compact list rows, the full row from the get) the entity
 * has the fields of both, the get's first, and the get's name. Inline schemas at different
 * resource paths are distinct entities unless they have the same fields; two distinct ones that
 * would take one name are named after their parent resources (`UserItem`, `OrderItem`).
 */
import type { ImportEntity, ImportLog, ImportType } from './model.js';
import { NameSet, isName, oneLine, pascalName, singular } from './names.js';
import { anyValueType, isObj, objectShape, scalarUnion, toType, typeOf, unwrap, type Schema } from './schema.js';

/** Component schema object -> its name (dereferencing keeps one object per component). */
export function componentNames(doc: Schema): Map<Schema, string> {
  const out = new Map<Schema, string>();
  const schemas = isObj(doc.components) && isObj(doc.components.schemas) ? doc.components.schemas : {};
  for (const [name, s] of Object.entries(schemas)) if (isObj(s) && !out.has(s)) out.set(s, name);
  return out;
}

/** A row schema a GET answers at `path`: rows (a list) or one row (envelopes.ts `rowResult`). */
export interface Sighting {
  schema: Schema;
  path: string;
  returns: 'rows' | 'row';
}

/** `/users/{id}/items/{itemId}` -> `/users/{}/items`: the resource a path lists or names a row of. */
const resourceOf = (path: string) =>
  path
    .replace(/\{[^}]*\}/g, '{}')
    .replace(/\/+$/, '')
    .replace(/\/\{\}$/, '');
const namesRow = (path: string) => /\}\/?$/.test(path);

/** The entities found so far, by schema object and by name. */
export class EntityTable {
  readonly list: ImportEntity[] = [];
  private readonly bySchema = new Map<Schema, ImportEntity>();
  /** Inline entities by base name and fields (`Item|id:integer,name:string`): the same shape shares one. */
  private readonly byShape = new Map<string, ImportEntity>();
  /** A schema -> the schema whose entity it shares (compact list rows -> the full row; an inline twin). */
  private readonly alias = new Map<Schema, Schema>();
  /** Entity name of an inline schema, when `plan` settled it. */
  private readonly planned = new Map<Schema, string>();
  /** Where each schema was seen first (for the report). */
  private readonly seenAt = new Map<Schema, string>();
  /** Response schemas that a get by id answers as one row, and the last literal of each such get's path. */
  private readonly rows = new Map<Schema, Set<string>>();
  private readonly names = new NameSet();
  /** Entities of resources known only by their path, by the name asked for. */
  private readonly byPath = new Map<string, ImportEntity>();
  /** The entities of value answers, by the name asked for. */
  private readonly values = new Map<string, ImportEntity>();
  /** Schemas already found to have no usable field (logged once). */
  private readonly fieldless = new Set<Schema>();
  constructor(
    private readonly components: Map<Schema, string>,
    private readonly log: ImportLog,
  ) {}

  /**
   * Settle, before any entity is made, which row schemas of the reads are one resource and what
   * the inline ones are called: compact list rows join the full row of their get, inline twins
   * (same base name, same fields) join, and distinct inline schemas that would share a name are
   * named after their parent resources.
   */
  plan(sightings: Sighting[]): void {
    for (const s of sightings) if (!this.seenAt.has(s.schema)) this.seenAt.set(s.schema, s.path);
    this.joinCompact(sightings);
    const heads = [...new Set(sightings.map((s) => this.head(s.schema)))].filter((h) => !this.components.has(h));
    const byBase = new Map<string, Schema[]>();
    for (const h of heads) {
      const base = inlineName(this.seenAt.get(h)!);
      const twin = (byBase.get(base) ?? []).find((o) => shapeKey(this.members(o)) === shapeKey(this.members(h)));
      if (twin) this.alias.set(h, twin);
      else byBase.set(base, [...(byBase.get(base) ?? []), h]);
    }
    const componentNames = new Set(
      sightings.flatMap((s) => {
        const c = this.components.get(this.head(s.schema));
        return c ? [pascalName(c)] : [];
      }),
    );
    for (const [base, hs] of byBase) {
      const qualify = hs.length > 1 || componentNames.has(base);
      for (const h of hs) this.planned.set(h, qualify ? qualified(this.seenAt.get(h)!, base) : base);
    }
  }

  /** `answer` is what the get by id at `path` answers as one row (the response schema: the row itself or its wrapper). */
  rowAnswer(answer: Schema, path: string): void {
    const kinds = this.rows.get(answer) ?? new Set<string>();
    this.rows.set(answer, kinds.add(lastLiteral(path) ?? ''));
  }

  /**
   * Whether `answer` is what a get by id answers as one row, so one row wherever it is answered
   * (`GET /boxes/latest`, the row a `POST /boxes` answers). A read at `listPath` of the same kind
   * as such a get (`GET /xs` beside `GET /xs/{id}`, `GET /all` beside `GET /all/{type}`) is left
   * alone: the same answer at a collection is a list wrapper that the get's `{param}` mistook for a row.
   */
  answersRow(answer: Schema | undefined, listPath?: string): boolean {
    const kinds = answer === undefined ? undefined : this.rows.get(answer);
    return kinds !== undefined && (listPath === undefined || !kinds.has(lastLiteral(listPath) ?? ''));
  }

  /**
   * The entity of a row schema returned at `path`, created on first sight; an inline schema is
   * named `inline` when given (an RPC operation's name), else from the path.
   */
  entityFor(schema: Schema, path: string, inline?: string): ImportEntity | undefined {
    const head = this.head(schema);
    const known = this.bySchema.get(head);
    if (known || this.fieldless.has(head)) return known;
    if (!this.seenAt.has(head)) this.seenAt.set(head, path);
    const component = this.components.get(head);
    const members = this.members(head);
    const base = component ? pascalName(component) : (inline ?? inlineName(path));
    const key = component ? undefined : `${base}|${shapeKey(members)}`;
    const twin = key ? this.byShape.get(key) : undefined;
    if (twin) return twin;
    const name = component ? base : (this.planned.get(head) ?? (this.names.has(base) ? qualified(path, base) : base));
    const entity = this.build(members, name, component, path);
    if (!entity) {
      this.fieldless.add(head);
      return undefined;
    }
    for (const m of members) this.bySchema.set(m, entity);
    if (key) this.byShape.set(key, entity);
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
      const e = isObj(p) ? this.bySchema.get(unwrap(p)) : undefined;
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

  /**
   * The entity of value answers (`Text`, `Value`: value-answers.ts), made on first use: one field
   * holding the answer whole and no id (only singleton gets read it). Its name is `name` unless
   * an entity already has it (then `name2`, ...).
   */
  valueEntity(name: string, field: string, type: ImportType, description: string): ImportEntity {
    const seen = this.values.get(name);
    if (seen) return seen;
    const entity: ImportEntity = {
      name: this.names.take(name),
      description,
      id: '',
      fields: new Map([[field, type]]),
      relations: [],
      source: 'value answers (no row schema): see Value answers',
    };
    this.list.push(entity);
    this.values.set(name, entity);
    return entity;
  }

  /**
   * Compact and full: the rows a list at `/xs` answers and the row its get at `/xs/{id}` answers
   * are one resource. Different schemas with a property in common join the get's; list rows
   * shared by the lists of several gets' resources (a generic summary) stay apart.
   */
  private joinCompact(sightings: Sighting[]): void {
    const gets = new Map<string, Schema>();
    for (const s of sightings)
      if (s.returns === 'row' && namesRow(s.path) && !gets.has(resourceOf(s.path)))
        gets.set(resourceOf(s.path), s.schema);
    const targets = new Map<Schema, Set<Schema>>();
    for (const s of sightings) {
      const full = s.returns === 'rows' && !namesRow(s.path) ? gets.get(resourceOf(s.path)) : undefined;
      if (!full || full === s.schema || !overlaps(s.schema, full)) continue;
      targets.set(s.schema, (targets.get(s.schema) ?? new Set()).add(full));
    }
    for (const [compact, full] of targets)
      if (full.size === 1 && !this.alias.has(compact)) this.alias.set(compact, [...full][0]!);
  }

  /** The schema whose entity `schema` shares (itself, unless `plan` joined it to another). */
  private head(schema: Schema): Schema {
    let h = schema;
    for (let i = 0; i < 8 && this.alias.has(h); i++) h = this.alias.get(h)!;
    return h;
  }

  /** `head` and the schemas joined to it, head first. */
  private members(head: Schema): Schema[] {
    return [head, ...[...this.alias.keys()].filter((s) => s !== head && this.head(s) === head)];
  }

  private build(members: Schema[], name0: string, component: string | undefined, path: string) {
    const schema = members[0]!;
    const fields = new Map<string, ImportType>();
    const left = new Set<string>();
    const old = new Set<string>();
    const widened: string[] = [];
    const anyValue: string[] = [];
    for (const member of members)
      for (const [wire, s] of objectShape(member).props) {
        if (fields.has(wire) || left.has(wire) || old.has(wire)) continue;
        const any = toType(s) ? undefined : anyValueType(s);
        if (any && s.writeOnly !== true && isName(wire)) anyValue.push(wire);
        const t = s.writeOnly === true ? undefined : (toType(s) ?? any);
        if (s.deprecated === true) old.add(wire);
        else if (!isName(wire) || !t) left.add(wire);
        else fields.set(wire, t);
        const union = t && fields.has(wire) ? scalarUnion(s) : undefined;
        if (union) widened.push(`${wire} (${union.join(' | ')})`);
      }
    const source = (s: Schema) => {
      const c = this.components.get(s);
      return c ? `#/components/schemas/${c}` : `inline schema at ${this.seenAt.get(s) ?? path}`;
    };
    if (fields.size === 0) {
      this.log.skipped.push({
        what: `schema ${component ?? `inline at ${path}`}`,
        reason: 'no_fields',
        why: 'no field with a usable name and type',
      });
      return undefined;
    }
    const name = this.names.take(name0);
    const what = `entity ${name}`;
    if (left.size)
      this.log.review.push({ what, note: `fields left out (name or type not mappable): ${[...left].join(', ')}` });
    if (old.size) this.log.review.push({ what, note: `deprecated fields left out: ${[...old].join(', ')}` });
    if (widened.length)
      this.log.review.push({
        what,
        note: `fields of several scalar types, typed as the widest: ${widened.join(', ')}`,
      });
    if (anyValue.length)
      this.log.review.push({
        what,
        note: `fields the document gives no type (any JSON value), typed object: ${anyValue.join(', ')}`,
      });
    const compact = members.slice(1).filter((m) => this.components.has(m) || !sameFields(m, schema));
    for (const m of compact)
      this.log.review.push({
        what,
        note: `compact and full rows of one resource: the list answers \`${source(m)}\` (${fieldList(m)}), the get \`${source(schema)}\`; one entity with the fields of both (the get's types), named after the get's schema: list rows may carry fewer fields`,
      });
    if (!component && name0 !== inlineName(path))
      this.log.review.push({
        what,
        note: `named after its parent resource: inline schemas at other paths (or a component) would also be \`${inlineName(path)}\` and have other fields`,
      });
    const entity: ImportEntity = {
      name,
      description: oneLine(schema.description) || oneLine(schema.title),
      id: '',
      fields,
      relations: [],
      source: [source(schema), ...compact.map((m) => `list rows: ${source(m)}`)].join('; '),
    };
    this.list.push(entity);
    return entity;
  }
}

/** The entity name of an inline schema answered at `path`: its last literal segment, singular (`/breweries` -> Brewery). */
const inlineName = (path: string) => pascalName(singular(lastLiteral(path) ?? 'item'));

/**
 * An inline name qualified by the parent resource: the literal before the `{param}` the path's
 * last literal follows (`/users/{id}/items` -> UserItem); the name itself at a top-level path.
 */
function qualified(path: string, base: string): string {
  const segs = resourceOf(path).split('/').filter(Boolean);
  const last = segs.findLastIndex((s) => s !== '{}');
  const parent = segs[last - 1] === '{}' ? segs.slice(0, last - 1).findLast((s) => s !== '{}') : undefined;
  return parent ? pascalName(singular(parent.replace(/\.\w+$/, ''))) + base : base;
}

/** The fields of schemas as `name:type`, sorted: inline schemas with the same key are the same shape. */
function shapeKey(members: Schema[]): string {
  const out = new Map<string, string>();
  for (const m of members)
    for (const [k, v] of objectShape(m).props) if (!out.has(k)) out.set(k, `${k}:${typeOf(v) ?? '?'}`);
  return [...out.values()].sort().join(',');
}

const propNames = (s: Schema) => [...objectShape(s).props.keys()];
const overlaps = (a: Schema, b: Schema) => propNames(a).some((k) => objectShape(b).props.has(k));
const sameFields = (a: Schema, b: Schema) => shapeKey([a]) === shapeKey([b]);

function fieldList(s: Schema): string {
  const names = propNames(s);
  return names.length > 6 ? `${names.slice(0, 6).join(', ')}, ...` : names.join(', ');
}

/** The last path segment that is not a `{param}`, cleaned of an extension (`pets.json` -> pets). */
export function lastLiteral(path: string): string | undefined {
  const lits = path.split('/').filter((s) => s && !s.startsWith('{'));
  return lits[lits.length - 1]?.replace(/\.\w+$/, '');
}
