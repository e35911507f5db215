/**
 * Teaching economy of an import: text the teaching table would repeat or that says nothing an
 * agent needs, cut once the entities and capabilities are settled (before relations copy
 * capability descriptions). Every rule is about the shape of the text, never about one vendor:
 * - a description that only restates the entity's name (`FullRepository`: "Full Repository"), or
 *   a capability's that only says its kind and entity ("Update an issue" on an update of Issue,
 *   "Delete a label") is left empty: the row says `update e1` already;
 * - a parameter whose enum holds exactly the values of the entity's field of the same name takes
 *   the field's order, so the table teaches it by the field instead of spelling it out again;
 * - a response field enum of more than `MAX_FIELD_ENUM` values is a string: the runtime does not
 *   check response values, no filter takes the field's type from it (a filter carries its own
 *   enum), and the values stay in the field's description, in the catalog;
 * - a relation description that only restates the relation's, entity's and target's names
 *   (`economizeRelations`, once relations are built).
 */
import type { CapabilityKind, ImportCapability, ImportEntity, ImportLog, ImportType } from './model.js';
import { oneLine, singular } from './names.js';

/** A response field enum with more values than this is taught as a string. */
export const MAX_FIELD_ENUM = 6;

const ARTICLES = new Set(['a', 'an', 'the']);

/**
 * Verbs that say no more than a capability's kind; with the HTTP methods of that kind, for a
 * meaning made of the method and path (`DELETE /orders/{orderId}` on a delete of Order).
 */
const KIND_VERBS: Record<CapabilityKind, Set<string>> = {
  get: new Set(['get', 'retrieve', 'fetch', 'read', 'show', 'find']),
  query: new Set(['list', 'get', 'retrieve', 'fetch', 'find', 'search']),
  create: new Set(['create', 'add', 'new', 'make', 'post']),
  update: new Set(['update', 'edit', 'modify', 'change', 'put', 'patch']),
  delete: new Set(['delete', 'remove', 'destroy']),
  action: new Set(),
};

/** Lower-case singular words of a name or a sentence. */
const wordsOf = (s: string) =>
  s
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w && !ARTICLES.has(w))
    .map(singular);

/** Whether `text` only restates `name` (its words, in any order, nothing else). */
function restatesName(text: string, name: string): boolean {
  const own = new Set(wordsOf(name));
  const ws = wordsOf(text);
  return ws.length > 0 && ws.every((w) => own.has(w));
}

/**
 * Whether a capability description says only its kind and (words of) its entity's name; path
 * parameters (`{orderId}`) of a method-and-path meaning say nothing more either.
 */
function restatesKind(c: ImportCapability): boolean {
  const ws = wordsOf(c.meaning_from === 'method and path' ? c.description.replace(/\{[^}]*\}/g, '') : c.description);
  const own = new Set(wordsOf(c.entity));
  return ws.length >= 2 && KIND_VERBS[c.kind].has(ws[0]!) && ws.slice(1).every((w) => own.has(w));
}

const sameValues = (a: (string | number)[], b: (string | number)[]) =>
  a.length === b.length && a.every((v) => b.includes(v));

/** The field enum `t` as a string, its values kept in the description. */
function plainEnum(t: ImportType & { type: 'enum' }): ImportType {
  const values = `one of ${t.values.join(', ')}`;
  const description = oneLine(t.description ? `${t.description} (${values})` : values, 400);
  return { type: 'string', description };
}

/** Words a relation's description may add to its names without saying anything (`a brewery's beers`). */
const FILLER = new Set(['of', 'this', 'for', 'to', 'by', 'in', 'on', 's', 'row', 'its', 'their', 'all']);

/**
 * Empties (in place) each relation description that says no more than the relation row does: its
 * words are a list verb, filler and words of the relation's, its entity's and its target's names
 * (a nested list's "List a brewery's beers" on Brewery.beers).
 */
export function economizeRelations(entities: ImportEntity[]): void {
  for (const e of entities)
    for (const r of e.relations) {
      const known = new Set([...wordsOf(`${e.name} ${r.name} ${r.target}`), ...KIND_VERBS.query]);
      if (wordsOf(r.description).every((w) => known.has(w) || FILLER.has(w))) r.description = '';
    }
}

/** Applies the rules above in place; long enums left as strings are noted for review. */
export function economize(entities: ImportEntity[], caps: ImportCapability[], log: ImportLog): void {
  const byName = new Map(entities.map((e) => [e.name, e]));
  for (const c of caps) {
    if (c.description && restatesKind(c)) c.description = '';
    const entity = byName.get(c.entity);
    for (const p of c.params) {
      const f = entity?.fields.get(p.name);
      if (p.type.type === 'enum' && f?.type === 'enum' && sameValues(p.type.values, f.values))
        p.type = { ...p.type, values: [...f.values] };
    }
  }
  for (const e of entities) {
    if (e.description && restatesName(e.description, e.name)) e.description = '';
    const plain: string[] = [];
    for (const [name, t] of e.fields) {
      if (t.type !== 'enum' || t.values.length <= MAX_FIELD_ENUM || typeof t.values[0] !== 'string' || name === e.id)
        continue;
      if (caps.some((c) => c.entity === e.name && c.params.some((p) => p.name === name))) continue;
      e.fields.set(name, plainEnum(t));
      plain.push(name);
    }
    if (plain.length)
      log.review.push({
        what: `entity ${e.name}`,
        note: `enum fields of more than ${MAX_FIELD_ENUM} values typed string (values in the description): ${plain.join(', ')}`,
      });
  }
}
