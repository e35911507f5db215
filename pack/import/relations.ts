/**
 * Relations an agent can follow: from nested list paths (`/breweries/{id}/beers` -> Brewery.beers),
 * from `<entity>Id` / `<entity>_id` fields (Beer.breweryId -> Beer.brewery, a ref field) and, the
 * other way, from a list that filters by such a field (Beer.reviews through listReviews(beerId)).
 */
import { lastLiteral } from './entities.js';
import type { ImportCapability, ImportEntity, ImportLog } from './model.js';
import { camelName, pascalName } from './names.js';

const reads = (caps: ImportCapability[], entity: string, kind: 'get' | 'query') =>
  caps.filter((c) => c.entity === entity && c.kind === kind);

/** The entity's teachable get: its first get, taking only the id. */
function getOf(caps: ImportCapability[], e: ImportEntity): ImportCapability | undefined {
  const g = reads(caps, e.name, 'get').find((c) => !c.singleton);
  return g && g.id_param && g.params.filter((p) => p.required).length === 1 ? g : undefined;
}

function addRelation(
  e: ImportEntity,
  base: string,
  rel: Omit<ImportEntity['relations'][number], 'name'>,
  log: ImportLog,
) {
  if (e.relations.some((r) => r.target === rel.target && r.cardinality === rel.cardinality)) return;
  const name = camelName(base);
  if (e.fields.has(name) || e.relations.some((r) => r.name === name)) {
    log.review.push({
      what: `entity ${e.name}`,
      note: `relation \`${name}\` to ${rel.target} not added: the name is taken`,
    });
    return;
  }
  e.relations.push({ name, ...rel });
}

/** Adds relations to `entities` (in place) from the capabilities. */
export function buildRelations(entities: ImportEntity[], caps: ImportCapability[], log: ImportLog): void {
  const byName = new Map(entities.map((e) => [e.name, e]));
  // Nested lists: the parent's get path plus one literal segment.
  for (const q of caps) {
    if (q.kind !== 'query') continue;
    const m = /^(.*\/\{([^}]+)\})\/[^/{}]+$/.exec(q.path);
    const required = q.params.filter((p) => p.required);
    if (!m || required.length !== 1 || required[0]!.name !== m[2]) continue;
    const parentPath = m[1]!;
    const get = caps.find(
      (c) => c.kind === 'get' && c.path.replace(/\{[^}]*\}/g, '{}') === parentPath.replace(/\{[^}]*\}/g, '{}'),
    );
    const parent = get && byName.get(get.entity);
    if (!parent || !getOf(caps, parent)) continue;
    addRelation(
      parent,
      lastLiteral(q.path) ?? q.entity,
      {
        description: q.description,
        target: q.entity,
        cardinality: 'many',
        capability: q.name,
        bind: { [m[2]]: parent.id },
      },
      log,
    );
  }
  // <entity>Id fields: a ref and a relation to that entity; the reverse through a filtering list.
  for (const child of entities) {
    for (const [field, t] of [...child.fields]) {
      const stem = /^(.+?)(Id|_id)$/.exec(field)?.[1];
      const parent = stem ? byName.get(pascalName(stem)) : undefined;
      const get = parent && getOf(caps, parent);
      if (!parent || !get || parent === child || !['string', 'integer'].includes(t.type)) continue;
      child.fields.set(field, {
        type: 'ref',
        entity: parent.name,
        ...(t.description ? { description: t.description } : {}),
      });
      addRelation(
        child,
        stem!,
        {
          // The relation row says it all (`e2(1).brewery[..]  r3 -> e1 row`).
          description: '',
          target: parent.name,
          cardinality: 'one',
          capability: get.name,
          bind: { [get.id_param!]: field },
        },
        log,
      );
      const list = reads(caps, child.name, 'query').find((q) => {
        const p = q.params.find((x) => x.name === field);
        return p && p.in === 'query' && q.params.every((x) => !x.required || x === p);
      });
      if (list)
        addRelation(
          parent,
          lastLiteral(list.path) ?? child.name,
          {
            description: '',
            target: child.name,
            cardinality: 'many',
            capability: list.name,
            bind: { [field]: parent.id },
          },
          log,
        );
    }
  }
}
