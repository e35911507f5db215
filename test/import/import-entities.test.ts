/**
 * Schema wrappers (fixtures/openapi/wrappers.yaml): `allOf: [{$ref}, {description}]`, `allOf: [X]`
 * beside a description, `oneOf`/`anyOf` with `null`, 3.1 type lists and `nullable` hide no field
 * and no list: the fields, the rows, a row's wrapper and a total are found through them, and a
 * component keeps its name.
 */
import t from 'tap';
import { importAndPack } from '../_helpers/import.js';

t.test('wrappers of one schema hide no field and no list', async (t) => {
  const fleet = await importAndPack('wrappers.yaml', { entryId: 'fleet' });
  const c = (name: string) => fleet.cgs.capabilities.find((x) => x.name === name);
  t.match(c('listTrucks'), { kind: 'query', entity: 'Truck', http: { response: { path: 'Trucks' } } });
  t.match(c('getTruck'), { kind: 'get', entity: 'Truck', http: { response: { path: '' } } });
  t.match(c('listDepots'), {
    kind: 'query',
    entity: 'Depot',
    http: { response: { path: 'data', total: { path: 'total' } } },
  });
  t.match(c('getDepot'), { kind: 'get', entity: 'Depot', http: { response: { path: 'data' } } });
  const truck = fleet.cgs.entities.find((e) => e.name === 'Truck')!;
  t.same(
    truck.fields.map((f) => [f.name, f.type, f.description ?? '']),
    [
      ['TruckId', 'string', "The truck's id"],
      ['Plate', 'string', 'Its number plate'],
      ['Capacity', 'number', 'Load in tonnes'],
      ['Retired', 'boolean', ''],
      ['Depot', 'object', ''],
    ],
  );
  t.same(
    fleet.cgs.entities.map((e) => e.name),
    ['Truck', 'Depot'],
    'component names kept through the wrappers',
  );
  t.equal(fleet.result.log.skipped.filter((s) => s.reason === 'no_fields' || s.reason === 'no_json_answer').length, 0);
});
