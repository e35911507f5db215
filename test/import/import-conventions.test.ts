/**
 * Importer conventions on fixtures/openapi/kiosk.yaml (a small document written for these tests):
 * ids whose schema constrains them (`format: uuid`) stay teachable, a union of scalar types is its
 * widest type, every capability has a meaning, and of several auth schemes the one a single
 * secret fills is chosen. Each is named in import-report.md.
 */
import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
  const near = cap(cgs, 'listShelves').params.find((p) => p.name === 'near');
  t.match(near, { type: 'string' }, 'anyOf of two string schemas is a string');
  t.notOk(near?.format ?? near?.pattern, 'without the branches’ own constraints');
  t.match(
    report,
    /\| listShelves \| near \| one of several string schemas: taken as string, without their own constraints \|/,
  );
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

t.test('of several auth schemes, the one a single secret fills is chosen, and the report says why', async (t) => {
  t.same(cgs.auth, { scheme: 'bearer', env: 'KIOSK_TOKEN' }, 'bearer over basic, though basic is listed first');
  t.match(report, /Scheme `bearer`\. Set these environment variables where svc runs: `KIOSK_TOKEN`\./);
  t.match(
    report,
    /- auth: scheme `bearerAuth` \(http bearer\) chosen: of the schemes offered, one secret fills it; also offered: basicAuth \(http basic\)/,
  );
});

t.test('auth preference: bearer, API key in a header, in the query, basic, then OAuth2', async (t) => {
  const doc = (schemes: Record<string, object>) => ({
    openapi: '3.0.3',
    info: { title: 'Pick', version: '1' },
    servers: [{ url: 'https://pick.example' }],
    security: Object.keys(schemes).map((k) => ({ [k]: [] })),
    paths: {
      '/things': {
        get: {
          operationId: 'listThings',
          responses: {
            '200': {
              description: 'ok',
              content: {
                'application/json': {
                  schema: { type: 'array', items: { type: 'object', properties: { id: { type: 'integer' } } } },
                },
              },
            },
          },
        },
      },
    },
    components: { securitySchemes: schemes },
  });
  const BASIC = { type: 'http', scheme: 'basic' };
  const OAUTH = { type: 'oauth2', flows: { clientCredentials: { tokenUrl: 'https://pick.example/t', scopes: {} } } };
  const QUERY = { type: 'apiKey', in: 'query', name: 'key' };
  const HEADER = { type: 'apiKey', in: 'header', name: 'X-Key', description: 'Your key from the settings page.' };
  const cases: [string, Record<string, object>, object, RegExp][] = [
    [
      'header key over query key and basic',
      { basic: BASIC, q: QUERY, h: HEADER },
      { scheme: 'api_key', in: 'header', name: 'X-Key', env: 'PICK_API_KEY' },
      /scheme `h` \(API key in the header\) chosen: of the schemes offered, one secret fills it; also offered: basic \(http basic\), q \(API key in the query\); its description: Your key from the settings page\./,
    ],
    [
      'query key over basic',
      { basic: BASIC, q: QUERY },
      { scheme: 'api_key', in: 'query', name: 'key', env: 'PICK_API_KEY' },
      /scheme `q` \(API key in the query\) chosen/,
    ],
    [
      'basic over an OAuth2 token, which expires',
      { o: OAUTH, basic: BASIC },
      { scheme: 'basic', username_env: 'PICK_USERNAME', password_env: 'PICK_PASSWORD' },
      /scheme `basic` \(http basic\) chosen: of the schemes offered, basic is preferred to an OAuth2 token, which expires; also offered: o \(oauth2\)[\s\S]*an empty password is valid \(set PICK_PASSWORD to the empty string/,
    ],
  ];
  for (const [name, schemes, auth, note] of cases) {
    const dir = mkdtempSync(join(tmpdir(), 'svc-import-auth-'));
    writeFileSync(join(dir, 'openapi.json'), JSON.stringify(doc(schemes)));
    const r = await importAndPack(join(dir, 'openapi.json'));
    t.same(r.cgs.auth, auth, name);
    t.match(r.result.files['import-report.md'], note, `${name}: the report says why`);
  }
});
