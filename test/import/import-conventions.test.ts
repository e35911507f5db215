/**
 * Importer conventions on fixtures/openapi/kiosk.yaml (a small document written for these tests):
 * ids whose schema constrains them (`format: uuid`) stay teachable, a union of scalar types is its
 * widest type, every capability has a meaning, and of several auth schemes the one a single
 * secret fills is chosen. Each is named in import-report.md.
 */
import t from 'tap';
import type { Capability, Cgs } from '../../pack/cgs.js';
import { importAndPack } from '../_helpers/import.js';

const { result, cgs } = await importAndPack('kiosk.yaml');
const report = result.files['import-report.md']!;
const cap = (c: Cgs, name: string): Capability => {
  const found = c.capabilities.find((x) => x.name === name);
  if (!found) throw new Error(`no capability ${name} among ${c.capabilities.map((x) => x.name).join(', ')}`);
  return found;
};

t.test('capabilities on a row whose id is a uuid are imported and teachable', async (t) => {
  t.same(result.log.skipped, [], 'nothing skipped');
  for (const name of ['getOrder', 'deleteOrders', 'refundOrderNow'])
    t.match(
      cap(cgs, name).params.find((p) => p.name === 'id'),
      { type: 'string', format: 'uuid' },
      name,
    );
  t.match(report, /Constraints carried over: format 3\./);
});

t.test('a union of scalar types is its widest type, and the report says so', async (t) => {
  t.match(cap(cgs, 'getShelf'), { kind: 'get', http: { path: '/shelves/{id}' } });
  t.match(cap(cgs, 'getShelf').params, [{ name: 'id', type: 'string', required: true }], 'oneOf [string, integer]');
  t.match(
    cap(cgs, 'createShelf').params.find((p) => p.name === 'aisle'),
    { type: 'string', required: true },
    'anyOf [integer, string, null]',
  );
  t.match(cap(cgs, 'relabelShelf'), { kind: 'update' });
  const shelf = cgs.entities.find((e) => e.name === 'Shelf')!;
  t.match(shelf.fields, [{ name: 'id', type: 'string' }, { name: 'label' }, { name: 'aisle', type: 'string' }]);
  t.match(report, /\| getShelf \| id \| one of string \\\| integer: taken as string, the widest \|/);
  t.match(report, /entity Shelf: fields of several scalar types, typed as the widest: id \(string \\\| integer\)/);
});

t.test('every capability has a meaning: summary, first sentence, operationId in words, method and path', async (t) => {
  const meaning = (name: string) => cap(cgs, name).description;
  t.equal(meaning('getOrder'), 'Fetch one order with its lines', 'the summary wins over the description');
  t.equal(
    meaning('createOrder'),
    'Places an order for the current cart',
    "the description's first sentence, markdown and HTML reduced to text",
  );
  t.equal(meaning('listOrdersForStore'), 'list orders for store', 'the operationId in words');
  t.equal(meaning('refundOrderNow'), 'refund order now');
  const restock = cgs.capabilities.find((c) => c.http.path === '/shelves/{id}/restock')!;
  t.equal(restock.description, 'POST /shelves/{shelfId}/restock', 'method and path');
  t.equal(meaning('deleteOrders'), '', '`DELETE /orders/{orderId}` only restates `delete e1`');
  t.match(report, /\| listOrdersForStore \| query \| Order \| `GET \/orders \(listOrdersForStore\)` \| operationId \|/);
  t.match(report, /\| createOrder \| .* \| description \|/);
  t.match(report, /\| getOrder \| .* \| summary \|/);
  t.match(report, /\| deleteOrders \| .* \| - \(restated the kind and entity\) \|/);
  t.match(report, /`POST \/shelves\/\{shelfId\}\/restock` \| method and path \|/);
});
