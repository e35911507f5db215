/**
 * `importOpenApi` on real documents (fixtures/openapi: the Swagger Petstore, the Gitea API and
 * the demo vendor's document; a Swagger 2.0 Petstore converted on the way): every import packs
 * with the teachability check, counts and specific mappings hold, and importing twice gives
 * byte-identical files.
 */
import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importAndPack } from '../_helpers/import.js';

const cap = (cgs: { capabilities: Array<{ name: string }> }, name: string) =>
  cgs.capabilities.find((c) => c.name === name) as any;
const ent = (cgs: { entities: Array<{ name: string }> }, name: string) =>
  cgs.entities.find((e) => e.name === name) as any;

t.test('Swagger Petstore 3.0: entities, kinds, ids, auth, and what is skipped', async (t) => {
  const { result, cgs } = await importAndPack('petstore.json');
  t.same(
    cgs.entities.map((e) => e.name),
    ['Pet', 'Order', 'User', 'Value'],
    'Value: the inventory map, the login token and the logout with no content, each read whole',
  );
  t.equal(
    cgs.capabilities.length,
    19,
    'createWithArray and createWithList send their array bodies whole; 3 value answers',
  );
  t.ok(
    result.log.skipped.some((s) => s.what.startsWith('GET /pet/findByTags') && s.why === 'deprecated in the document'),
    'a deprecated operation is skipped',
  );
  t.equal(cgs.entry_id, 'swagger-petstore');
  t.same(
    cgs.auth,
    { scheme: 'bearer', env: 'SWAGGER_PETSTORE_TOKEN' },
    'OAuth2 as a bearer token from the environment',
  );
  t.equal(cgs.backend.base_url, 'http://petstore.swagger.io/v2');
  const get = cap(cgs, 'getPetById');
  t.match(
    get,
    { kind: 'get', entity: 'Pet', id_param: 'id', http: { method: 'GET', path: '/pet/{id}' } },
    'petId becomes the id',
  );
  t.match(cap(cgs, 'findPetsByStatus'), { kind: 'query', entity: 'Pet', returns: 'rows' });
  t.match(
    cap(cgs, 'findPetsByStatus').params[0],
    { name: 'status', type: 'enum', values: ['available', 'pending', 'sold'], many: true, required: true },
    'a query array of enum items: one status or a list, sent as repeated keys',
  );
  t.match(cap(cgs, 'getPetById').params[0], { name: 'id', type: 'integer' });
  t.match(cap(cgs, 'addPet'), { kind: 'create', http: { method: 'POST', path: '/pet' } });
  t.match(
    cap(cgs, 'updatePet'),
    { kind: 'update', id_param: 'id', http: { method: 'PUT', path: '/pet' } },
    'PUT on the collection with the id in the body',
  );
  t.match(cap(cgs, 'deletePet'), { kind: 'delete', http: { headers: { api_key: '{api_key}' } } }, 'a header parameter');
  t.match(cap(cgs, 'uploadFile'), { kind: 'action', entity: 'Pet', returns: 'none' });
  t.equal(ent(cgs, 'User').id_field, 'username', 'the get-by-name path parameter names the id field');
  const updateUser = cap(cgs, 'updateUser');
  t.same(
    updateUser.http.body.username,
    '{usernameBody}',
    'a body property named like a path parameter gets the Body suffix',
  );
  t.match(
    cap(cgs, 'getInventory'),
    { kind: 'get', singleton: true, entity: 'Value', http: { path: '/store/inventory', response: { value: 'value' } } },
    'a map response is one JSON value, not skipped',
  );
  t.notOk(result.log.skipped.some((s) => s.what.startsWith('GET /store/inventory')));
  t.match(
    result.files['import-report.md'],
    /## Value answers[\s\S]*\| getInventory \| JSON value .*GET \/store\/inventory/,
  );
  t.match(result.files['import-report.md'], /SWAGGER_PETSTORE_TOKEN/);
});

t.test('a Swagger 2.0 document is converted, then imported', async (t) => {
  const doc = {
    swagger: '2.0',
    info: { title: 'Tiny', version: '1' },
    host: 'api.tiny.example',
    basePath: '/v1',
    schemes: ['https'],
    securityDefinitions: { key: { type: 'apiKey', in: 'header', name: 'X-Key' } },
    security: [{ key: [] }],
    paths: {
      '/widgets': {
        get: {
          operationId: 'listWidgets',
          parameters: [
            { name: 'offset', in: 'query', type: 'integer' },
            { name: 'limit', in: 'query', type: 'integer', default: 20, maximum: 50 },
            { name: 'color', in: 'query', type: 'string', enum: ['red', 'blue'] },
          ],
          responses: { 200: { description: 'ok', schema: { type: 'array', items: { $ref: '#/definitions/Widget' } } } },
        },
      },
      '/widgets/{widgetId}': {
        get: {
          operationId: 'getWidget',
          parameters: [{ name: 'widgetId', in: 'path', required: true, type: 'integer' }],
          responses: { 200: { description: 'ok', schema: { $ref: '#/definitions/Widget' } } },
        },
      },
    },
    definitions: {
      Widget: {
        type: 'object',
        properties: {
          id: { type: 'integer' },
          color: { type: 'string' },
          made: { type: 'string', format: 'date-time' },
        },
      },
    },
  };
  const dir = mkdtempSync(join(tmpdir(), 'svc-import-'));
  writeFileSync(join(dir, 'swagger.json'), JSON.stringify(doc));
  const { cgs } = await importAndPack(dir);
  t.equal(cgs.backend.base_url, 'https://api.tiny.example/v1');
  t.same(cgs.auth, { scheme: 'api_key', in: 'header', name: 'X-Key', env: 'TINY_API_KEY' });
  const list = cap(cgs, 'listWidgets');
  t.match(list.http.pagination, {
    style: 'offset',
    offset_param: 'offset',
    size_param: 'limit',
    page_size: 20,
    max_page_size: 50,
  });
  t.same(
    list.params.map((p: { name: string }) => p.name),
    ['color'],
    'paging parameters belong to pagination',
  );
  t.match(ent(cgs, 'Widget').fields, [{ name: 'id' }, { name: 'color' }, { name: 'made', type: 'datetime' }]);
});

t.test('Gitea (346 operations): imports, packs and teaches every capability', async (t) => {
  const started = Date.now();
  const { result, cgs } = await importAndPack('gitea.json', {
    entryId: 'gitea',
    baseUrl: 'https://gitea.example/api/v1',
  });
  t.comment(
    `gitea: ${cgs.entities.length} entities, ${cgs.capabilities.length} capabilities, ${result.log.skipped.length} skipped, ${Date.now() - started} ms`,
  );
  t.ok(cgs.capabilities.length >= 250, `${cgs.capabilities.length} capabilities`);
  t.ok(cgs.entities.length >= 40, `${cgs.entities.length} entities`);
  t.same(
    cgs.auth,
    { scheme: 'api_key', in: 'header', name: 'Authorization', env: 'GITEA_API_KEY' },
    'of basic and API keys, the API key in a header (one secret fills it)',
  );
  t.equal(cgs.backend.base_url, 'https://gitea.example/api/v1');
  const issues = cap(cgs, 'issueListIssues');
  t.match(issues, {
    kind: 'query',
    entity: 'Issue',
    http: {
      path: '/repos/{owner}/{repo}/issues',
      pagination: { style: 'page', page_param: 'page', size_param: 'limit' },
    },
  });
  t.same(
    issues.params.filter((p: { required: boolean }) => p.required).map((p: { name: string }) => p.name),
    ['owner', 'repo'],
    'nested path parameters are required',
  );
  t.notOk(
    issues.params.some((p: { name: string }) => p.name === 'page' || p.name === 'limit'),
    'paging parameters are not arguments',
  );
  const names = new Set(cgs.capabilities.map((c) => c.name));
  t.equal(names.size, cgs.capabilities.length, 'capability names are unique');
  t.ok(
    result.log.skipped.every((s) => s.why.length > 0),
    'every skipped item says why',
  );
});

t.test('importing twice gives byte-identical files', async (t) => {
  for (const name of ['petstore.json', 'demo-vendor.yaml', 'gitea.json']) {
    const a = await importAndPack(name);
    const b = await importAndPack(name);
    t.same(Object.keys(a.result.files), [
      'catalog.yaml',
      'entities.yaml',
      'capabilities.yaml',
      'mappings.yaml',
      'import-report.md',
    ]);
    for (const f of Object.keys(a.result.files)) t.equal(a.result.files[f], b.result.files[f], `${name}: ${f}`);
    t.equal(a.cgs_hash, b.cgs_hash, `${name}: the same CGS hash`);
  }
});

t.test('--include and --exclude select operations by path or operationId', async (t) => {
  const { cgs } = await importAndPack('demo-vendor.yaml', { include: ['/beers/**', '/beers', '/breweries/*'] });
  t.same([...new Set(cgs.capabilities.map((c) => c.entity))].sort(), ['Beer', 'Brewery', 'Review']);
  const ex = await importAndPack('demo-vendor.yaml', { exclude: ['delete*', 'replace*'] });
  t.notOk(ex.cgs.capabilities.some((c) => /^(delete|replace)/.test(c.name)));
});
