/**
 * Test helper: a vendor that wraps every answer and request body, as fixtures/openapi/envelopes.yaml
 * describes (json-server cannot wrap). Widgets answer `{"widgets": [...], "meta": {"total"}, "links"}`
 * and `{"widget": {...}}`; gadgets `{"object": "list", "data": [...], "has_more"}` and
 * `{"data": {...}}`; orders `{"data": [...], "next_page": {"offset"}}`; boxes
 * `{"items": [...], "total", "next"}` and a bare box (which has a list of its own). A create takes
 * its fields wrapped the same way (422 otherwise) and answers the created row, wrapped, with its id.
 * A real node:http server on 127.0.0.1 (the fault vendor's), recording every request.
 *
 * @example
 * const v = await startEnvelopeVendor();
 * t.teardown(() => v.close());
 */
import { startFaultVendor, type FaultVendor, type RecordedRequest, type Reply } from './fault-vendor.js';

type Row = Record<string, unknown>;

/** The vendor's rows, as it stores them (answers wrap them). */
export interface EnvelopeData {
  widgets: Row[];
  gadgets: Row[];
  orders: Row[];
  boxes: Row[];
}

export const ENVELOPE_DATA: EnvelopeData = {
  widgets: [
    { id: 1, name: 'Sprocket', color: 'red', price: 2.5 },
    { id: 2, name: 'Gizmo', color: 'blue', price: 7 },
    { id: 3, name: 'Doohickey', color: 'red', price: 1.25 },
  ],
  gadgets: [
    { id: 'gd_1', name: 'Lever', size: 3 },
    { id: 'gd_2', name: 'Pulley', size: 5 },
  ],
  orders: [
    { id: 10, widgetId: 1, quantity: 4 },
    { id: 11, widgetId: 2, quantity: 1 },
  ],
  boxes: [
    { code: 'bx-1', label: 'Spares', items: [{ sku: 'w-1', quantity: 2 }] },
    { code: 'bx-2', label: 'Returns', items: [] },
  ],
};

const int = (q: URLSearchParams, k: string, d: number) => (q.has(k) ? Number(q.get(k)) : d);
const notFound: Reply = { status: 404, json: { error: { message: 'not found' } } };

/** The fields of a create's body under `key`, or a 422 when the body is not wrapped so. */
function unwrap(req: RecordedRequest, key: string): Row | Reply {
  let body: unknown;
  try {
    body = JSON.parse(req.body);
  } catch {
    return { status: 400, json: { error: { message: 'malformed JSON' } } };
  }
  const inner = (body as Row | null)?.[key];
  if (inner === null || typeof inner !== 'object' || Array.isArray(inner) || Object.keys(body as Row).length !== 1)
    return { status: 422, json: { error: { message: `the body must be {"${key}": {...}}` } } };
  return inner;
}

const isReply = (v: Row | Reply): v is Reply => typeof (v as Reply).status === 'number';

/** Start the vendor on 127.0.0.1 and a free port, over a copy of `data`. */
export async function startEnvelopeVendor(data: EnvelopeData = ENVELOPE_DATA): Promise<FaultVendor> {
  const db = structuredClone(data);
  let nextWidget = Math.max(0, ...db.widgets.map((w) => Number(w.id))) + 1;
  let nextGadget = db.gadgets.length + 1;
  return startFaultVendor({
    'GET /widgets': (req) => {
      const page = int(req.query, 'page', 1);
      const size = int(req.query, 'per_page', 25);
      const color = req.query.get('color');
      const all = db.widgets.filter((w) => color === null || w.color === color);
      const rows = all.slice((page - 1) * size, page * size);
      const next = page * size < all.length ? `/widgets?page=${page + 1}&per_page=${size}` : null;
      return { json: { widgets: rows, meta: { total: all.length, page }, links: { pages: { next } } } };
    },
    'GET /widgets/:id': (req) => {
      const w = db.widgets.find((x) => String(x.id) === req.params.id);
      return w ? { json: { widget: w } } : notFound;
    },
    'POST /widgets': (req) => {
      const fields = unwrap(req, 'widget');
      if (isReply(fields)) return fields;
      const w = { id: nextWidget++, ...fields };
      db.widgets.push(w);
      return { status: 201, json: { widget: w } };
    },
    'GET /gadgets': () => ({ json: { object: 'list', data: db.gadgets, has_more: false } }),
    'GET /gadgets/:id': (req) => {
      const g = db.gadgets.find((x) => x.id === req.params.id);
      return g ? { json: { data: g } } : notFound;
    },
    'POST /gadgets': (req) => {
      const fields = unwrap(req, 'data');
      if (isReply(fields)) return fields;
      const g = { id: `gd_${nextGadget++}`, ...fields };
      db.gadgets.push(g);
      return { json: { data: g, meta: { request_id: 'req-1' } } };
    },
    'GET /orders': (req) => {
      const offset = int(req.query, 'offset', 0);
      const limit = int(req.query, 'limit', 25);
      const rows = db.orders.slice(offset, offset + limit);
      const more = offset + limit < db.orders.length;
      return { json: { data: rows, next_page: more ? { offset: offset + limit } : null } };
    },
    'GET /boxes': () => ({ json: { items: db.boxes, total: db.boxes.length, next: null } }),
    'GET /boxes/:code': (req) => {
      const b = db.boxes.find((x) => x.code === req.params.code);
      return b ? { json: b } : notFound;
    },
  });
}
