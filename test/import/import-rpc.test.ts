/**
 * Writes no read explains, and path keys that carry more than a path, in `svc import openapi`:
 * fixtures/openapi/rpc.yaml has no list or get at all. RPC calls on one path told apart by a
 * header and a fragment (`/#X-Vault-Target=Vault.CreateSecret`) take the entity of their answer;
 * an action on `/vaults/{vaultName}/seal` takes the resource its path names; a write answering
 * nothing takes its request body; a fixed query in a path key and a required parameter of one
 * value are mapping constants; the fragment is never sent. Then the imported catalog served by
 * a real svc server against a node:http vendor on 127.0.0.1.
 */
import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeArtifacts } from '../../pack/index.js';
import { readsByName } from '../../pack/import/capabilities.js';
import { collectOperations, splitPathKey } from '../../pack/import/operations.js';
import { startFaultVendor } from '../_helpers/fault-vendor.js';
import { importAndPack } from '../_helpers/import.js';
import { openSession, runProgram, startStack } from '../_helpers/server.js';

const cap = (cgs: { capabilities: Array<{ name: string }> }, name: string) =>
  cgs.capabilities.find((c) => c.name === name) as any;
const names = (c: { params: Array<{ name: string }> }) => c.params.map((p) => p.name);

t.test('a path key splits into the path sent, a fixed query and a fragment', async (t) => {
  t.same(splitPathKey('/#X-Amz-Target=Kms.CreateKey'), {
    path: '/',
    query: {},
    fragment: 'X-Amz-Target=Kms.CreateKey',
  });
  t.same(splitPathKey('/items?action=archive&force'), { path: '/items', query: { action: 'archive', force: '' } });
  t.same(splitPathKey('/logout#token'), { path: '/logout', query: {}, fragment: 'token' });
  t.same(splitPathKey('/items/{id}'), { path: '/items/{id}', query: {} });
});

t.test('a path key whose query names a parameter sends the parameter there, not a constant', async (t) => {
  const doc = {
    paths: {
      '/search?term={term}&amount={amount}&v=2': {
        get: {
          parameters: [
            { name: 'term', in: 'path', required: true, schema: { type: 'string' } },
            { name: 'amount', in: 'query', schema: { type: 'integer' } },
          ],
          responses: {},
        },
      },
    },
  };
  const [op] = collectOperations(doc).ops;
  t.equal(op!.path, '/search');
  t.same(
    op!.params.map((p) => [p.name, p.in, p.required]),
    [
      ['term', 'query', true],
      ['amount', 'query', false],
    ],
    'a path parameter named in the query is a query parameter; a query one stays',
  );
  t.same(op!.fixed?.query, { v: '2' }, 'only the true constant is fixed');
});

t.test('a POST name says it reads only when it lists, searches or gets without a write word', async (t) => {
  for (const n of ['ListKeys', 'findByStatus', 'search', 'DescribeInstances', 'getUsers', 'get_report'])
    t.ok(readsByName(n), `${n} reads`);
  for (const n of ['getOrCreateKey', 'GetAndResetToken', 'CreateKey', 'describeAndDelete', 'target', 'forget'])
    t.notOk(readsByName(n), `${n} does not say it only reads`);
});

t.test('writes with no read get the entity of their answer, their path or their body', async (t) => {
  const { result, cgs } = await importAndPack('rpc.yaml');
  const entities = Object.fromEntries(cgs.entities.map((e) => [e.name, e]));
  t.same(Object.keys(entities), ['Key', 'SecretMetadata', 'TagSecretRequest', 'Vault', 'Certificate', 'Key2']);
  t.equal(entities.SecretMetadata!.id_field, 'SecretId', 'the id of an answer entity: its field named ...Id');
  t.same(
    entities.Vault!.fields.map((f) => [f.name, f.type]),
    [['vaultName', 'string']],
    'a path entity has its id field, typed from the parameter',
  );

  const list = cap(cgs, 'listSecrets');
  t.match(list, { kind: 'query', entity: 'SecretMetadata', returns: 'rows' }, 'ListSecrets answering rows is a query');
  t.match(list.http, { method: 'POST', path: '/', response: { path: 'Secrets' } });

  const create = cap(cgs, 'createSecret');
  t.match(create, { kind: 'action', entity: 'SecretMetadata', returns: 'row' }, 'the answer row is read');
  t.same(create.http.headers, { 'X-Vault-Target': 'Vault.CreateSecret' }, 'the one-value header is a constant');
  t.equal(create.http.path, '/', 'the fragment is not in the path');
  t.same(names(create), ['Name', 'Value'], 'the constant header is not a parameter');
  t.equal(create.http.response.path, 'Secret');

  t.match(
    cap(cgs, 'describeSecret'),
    { kind: 'action', returns: 'row' },
    'a POST reading one row stays an action (dry-run first)',
  );
  t.match(cap(cgs, 'tagSecret'), { kind: 'action', entity: 'TagSecretRequest', returns: 'none' });

  const seal = cap(cgs, 'sealVault');
  t.match(seal, { kind: 'action', entity: 'Vault', returns: 'none', id_param: 'vaultName' }, 'acts on the vault row');
  t.same(seal.http.query, { 'api-version': '2024-01-01' }, 'a required query of one value is a constant');
  t.same(names(seal), ['vaultName']);
  t.match(cap(cgs, 'deleteVault'), { kind: 'delete', entity: 'Vault', id_param: 'vaultName' });

  t.match(
    cap(cgs, 'deleteKey'),
    { kind: 'delete', entity: 'Key2', id_param: 'keyId' },
    'a resource named like an entity read only by singleton gets (rows without an id) is its own entity',
  );
  t.same(
    entities.Key2!.fields.map((f) => f.name),
    ['keyId'],
  );

  const labels = cap(cgs, 'setVaultLabels');
  t.same(names(labels), ['vaultName', 'body'], 'a JSON body that is a list is one parameter');
  t.match(labels.params[1], { name: 'body', type: 'array', items: { type: 'string' }, required: true });
  t.equal(labels.http.body, '{body}', 'sent as the whole body');

  const revoke = cap(cgs, 'postCertificatesRevoke');
  t.match(revoke, { kind: 'action', entity: 'Certificate', returns: 'row' }, 'a fixed query makes no create');
  t.match(revoke.http, { method: 'POST', path: '/certificates', query: { action: 'revoke' } });
  t.same(names(revoke), ['serial']);

  t.same(
    result.log.skipped.map((s) => [s.what, s.reason]),
    [['POST /reboot (reboot)', 'no_entity']],
    'only the write with nothing to hang on is skipped',
  );
  const report = result.files['import-report.md']!;
  t.match(
    report,
    '| Vault | vaultName | 1 | - | the path `/vaults/{vaultName}` of `POST /vaults/{vaultName}/seal (sealVault)`',
  );
  t.match(report, '| SecretMetadata | SecretId | 3 | - | #/components/schemas/SecretMetadata: the answer of');
  t.match(report, '| TagSecretRequest | SecretId | 2 | - | #/components/schemas/TagSecretRequest: the request body of');
  t.match(report, '`createSecret` header `X-Vault-Target: Vault.CreateSecret`');
  t.match(report, '`postCertificatesRevoke` query `action=revoke`');
  t.match(report, /Path fragments \(`#\.\.\.`, never sent; the mapping's path is the path alone\): `listSecrets`/);
  t.match(
    result.files['mappings.yaml'],
    /sealVault:\n {4}method: POST\n {4}path: \/vaults\/\{vaultName\}\/seal\n {4}query:\n {6}api-version: 2024-01-01\n/,
  );
});

t.test('the imported RPC action sends its constant header, no fragment, and reads its answer row', async (t) => {
  const { cgs, cgs_hash } = await importAndPack('rpc.yaml');
  const dir = await mkdtemp(join(tmpdir(), 'svc-import-rpc-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeArtifacts(cgs, cgs_hash, dir);
  const secret = { SecretId: 's-1', Name: 'db', CreatedAt: '2026-01-02T03:04:05Z' };
  const vendor = await startFaultVendor({
    'POST /v1/': (req) =>
      req.headers['x-vault-target'] === 'Vault.CreateSecret'
        ? { json: { Secret: secret } }
        : { status: 400, json: { message: `unknown target ${String(req.headers['x-vault-target'])}` } },
    'POST /v1/vaults/main/seal': { status: 202, json: {} },
    'PUT /v1/vaults/main/labels': { json: {} },
  });
  t.teardown(() => vendor.close());
  const stack = await startStack(t, {
    vendorUrl: vendor.url,
    catalogDir: dir,
    loadOptions: { backendOverrides: { 'key-vault': `${vendor.url}/v1` } },
  });
  const { path } = await openSession(stack.url, { entry_id: 'key-vault', seeds: ['key-vault:SecretMetadata'] });
  const a = await runProgram(stack.url, path, 'key-vault:createSecret(Name="db", Value="hunter2")', 'force=true', {
    accept: 'application/json',
  });
  t.equal(a.status, 200, a.text);
  t.same(a.body.rows, [secret], 'the answer row under `Secret` is read');
  const [sent] = vendor.hits('/v1/', 'POST');
  t.ok(sent, 'the vendor got the call at the path alone');
  t.equal(sent!.url, '/v1/', 'no fragment and no query on the wire');
  t.equal(sent!.headers['x-vault-target'], 'Vault.CreateSecret', 'the constant header is sent');
  t.same(JSON.parse(sent!.body), { Name: 'db', Value: 'hunter2' }, 'the body holds the parameters only');

  const s = await runProgram(stack.url, path, 'key-vault:sealVault(vaultName="main")', 'force=true', {
    accept: 'application/json',
  });
  t.equal(s.status, 200, s.text);
  const [sealed] = vendor.hits('/v1/vaults/main/seal', 'POST');
  t.equal(sealed!.url, '/v1/vaults/main/seal?api-version=2024-01-01', 'the constant query is sent');

  const l = await runProgram(
    stack.url,
    path,
    'key-vault:setVaultLabels(vaultName="main", body=["red", "blue"])',
    'force=true',
    {
      accept: 'application/json',
    },
  );
  t.equal(l.status, 200, l.text);
  const [labelled] = vendor.hits('/v1/vaults/main/labels', 'PUT');
  t.same(JSON.parse(labelled!.body), ['red', 'blue'], 'the list parameter is the whole JSON body');
});
