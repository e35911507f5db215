/**
 * Test helper for the session graph: a `fault` catalog of rows that name other rows by id (an
 * Item names its Parent by `parentId`; a Parent nests its items) and a fault vendor serving them.
 * Parent lists send partial rows (`id`, `name`; `code` only from a get), as many vendors do;
 * `getChild` is a get scoped by more than the id (its parent's id too).
 *
 * @example
 * const g = await startGraphVendor();
 * t.teardown(() => g.close());
 * g.reg; g.v.hits('/parents/2');
 */
import { Registry } from '../../pack/index.js';
import { registryEntry, startFaultVendor, type FaultVendor } from './fault-vendor.js';

export function graphCatalog(url: string): string {
  return `
catalog:
  entry_id: fault
  version: 1
  label: Graph vendor
  description: Items and the parents they name.
  backend: {url: "${url}"}
  auth: {scheme: none}
entities:
  Item:
    description: An item.
    fields:
      id: {type: integer, description: Item id}
      name: {type: string, description: Item name}
      parentId: {type: integer, description: Parent id}
  Parent:
    description: A parent of items.
    fields:
      id: {type: integer, description: Parent id}
      name: {type: string, description: Parent name}
      code: {type: string, description: Parent code}
    relations:
      items: {description: Its items., target: Item, cardinality: many, capability: listItems, bind: {parentId: id}}
  Child:
    description: A child, fetched within its parent.
    fields:
      id: {type: integer, description: Child id}
      parentId: {type: integer, description: Parent id}
      name: {type: string, description: Child name}
capabilities:
  listItems: {kind: query, entity: Item, description: List items., params: [name, parentId]}
  listParents: {kind: query, entity: Parent, description: List parents., params: [name]}
  getParent: {kind: get, entity: Parent, description: One parent., params: [id]}
  updateParent: {kind: update, entity: Parent, description: Change a parent., params: [id, name]}
  deleteParent: {kind: delete, entity: Parent, description: Remove a parent., params: [id]}
  listChildren: {kind: query, entity: Child, description: List children., params: [name]}
  getChild:
    kind: get
    entity: Child
    description: One child of a parent.
    params: {id: {required: true}, parentId: {required: true}}
mappings:
  listItems: {method: GET, path: /items, query: [name, parentId]}
  listParents: {method: GET, path: /parents, query: [name]}
  getParent: GET /parents/{id}
  updateParent: PATCH /parents/{id}
  deleteParent: DELETE /parents/{id}
  listChildren: {method: GET, path: /children, query: [name]}
  getChild: GET /parents/{parentId}/children/{id}
`;
}

export function graphRegistry(url: string): Registry {
  return new Registry([registryEntry(graphCatalog(url))]);
}

type Row = Record<string, unknown>;

export interface GraphVendor {
  v: FaultVendor;
  reg: Registry;
  /** The vendor's data (tests may change it between runs). */
  data: { items: Row[]; parents: Row[]; children: Row[] };
  close(): Promise<void>;
}

/** 10 items naming 3 parents (1, 2, 3, 1, 2, ...), 3 parents, 2 children of parent 1. */
export async function startGraphVendor(): Promise<GraphVendor> {
  const data = {
    items: Array.from({ length: 10 }, (_, i) => ({ id: i + 1, name: `item ${i + 1}`, parentId: (i % 3) + 1 })),
    parents: [1, 2, 3].map((id) => ({ id, name: `parent ${id}`, code: `P-${id}` })),
    children: [1, 2].map((id) => ({ id, parentId: 1, name: `child ${id}` })),
  };
  const by = (rows: Row[], id: string | undefined) => rows.find((r) => String(r.id) === id);
  const v = await startFaultVendor({
    'GET /items': (req) => ({
      json: data.items.filter(
        (r) =>
          (!req.query.has('name') || r.name === req.query.get('name')) &&
          (!req.query.has('parentId') || String(r.parentId) === req.query.get('parentId')),
      ),
    }),
    'GET /parents': (req) => ({
      json: data.parents
        .filter((r) => !req.query.has('name') || r.name === req.query.get('name'))
        .map((r) => ({ id: r.id, name: r.name })),
    }),
    'GET /parents/:id': (req) => {
      const row = by(data.parents, req.params.id);
      return row ? { json: row } : { status: 404, json: { message: 'no such parent' } };
    },
    'PATCH /parents/:id': (req) => {
      const row = by(data.parents, req.params.id);
      if (!row) return { status: 404, json: { message: 'no such parent' } };
      Object.assign(row, JSON.parse(req.body) as Row);
      return { json: row };
    },
    'DELETE /parents/:id': (req) => {
      data.parents = data.parents.filter((r) => String(r.id) !== req.params.id);
      return { status: 204, text: '' };
    },
    'GET /children': { json: data.children },
    'GET /parents/:parentId/children/:id': (req) => {
      const row = data.children.find(
        (r) => String(r.id) === req.params.id && String(r.parentId) === req.params.parentId,
      );
      return row ? { json: row } : { status: 404, json: { message: 'no such child' } };
    },
  });
  return { v, reg: graphRegistry(v.url), data, close: () => v.close() };
}
