/**
 * Nested request bodies (fixtures/openapi/nested-bodies.yaml): the members of a body's nested
 * objects are taught as flat parameters (a member named like another parameter prefixed by its
 * parent's name), required only when every object around them is, at most two levels deep, and
 * sent nested by the `body` template; a required body none of whose parameters is required gets
 * `body_required`, so a call passing none sends `{}` (a wrapped one `{"options": {}}`). Packed and served by a
 * real svc server against a vendor on 127.0.0.1 that validates every body, the nested PUT, the
 * PATCH of one member and the key rotation of no parameter all pass.
 */
import t, { type Test } from 'tap';
import { copyFileSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { writeArtifacts } from '../../pack/index.js';
import { MAX_BODY_PARAMS, bodyLeaves } from '../../pack/import/body-members.js';
import { importAndPack } from '../_helpers/import.js';
import { openSession, runProgram, startStack, PACKED, type Answer } from '../_helpers/server.js';
import { startVaultVendor } from '../_helpers/vault-vendor.js';

type Row = Record<string, unknown>;

const { result, cgs, cgs_hash } = await importAndPack('nested-bodies.yaml', { entryId: 'vaults' });
const cap = (name: string) => cgs.capabilities.find((c) => c.name === name)!;
const mappings = (parse(result.files['mappings.yaml']!) as { mappings: Record<string, Row> }).mappings;
const report = result.files['import-report.md']!;

t.test('nested members are flat parameters, sent nested by the body template', async (t) => {
  const put = cap('putVault');
  t.same(
    put.params.map((p) => [p.name, p.required]),
    [
      ['name', true],
      ['location', true],
      ['tags', false],
      ['kind', true],
      ['size', false],
      ['propertiesName', false],
      ['keySource', false],
      ['keyName', false],
      ['identity', false],
    ],
    'properties.name clashes with the path parameter; an optional object makes its members optional',
  );
  t.equal(put.params.find((p) => p.name === 'identity')!.type, 'object', 'three levels down stays a JSON value');
  t.same(mappings.putVault!.body, {
    location: '{location}',
    tags: '{tags}',
    properties: {
      kind: '{kind}',
      size: '{size}',
      name: '{propertiesName}',
      encryption: { keySource: '{keySource}', keyName: '{keyName}', identity: '{identity}' },
    },
  });
  t.notOk(mappings.putVault!.body_required, 'a body with a required parameter is always sent');
  t.same(mappings.patchVault!.body, { tags: '{tags}', properties: { size: '{size}' } });
  t.equal(mappings.patchVault!.body_required, true);
  t.same(mappings.rotateVaultKeys!.body, { options: { force: '{force}', reason: '{reason}' } });
  t.same(mappings.rotateVaultKeys!.body_required, { options: {} }, 'a wrapped body keeps its wrapper');
  t.same(cap('rotateVaultKeys').http.body_required, { options: {} });
  t.notOk('body_required' in cap('putVault').http, 'the packed catalog keeps body_required only when set');
});

t.test('objects stay one JSON value past the parameter limit, or with a member of no mappable type', async (t) => {
  const obj = (n: number, extra: object = {}) => ({
    type: 'object',
    properties: { ...Object.fromEntries(Array.from({ length: n }, (_, i) => [`f${i}`, { type: 'string' }])), ...extra },
  });
  const leaves = (props: Record<string, object>) =>
    bodyLeaves(new Map(Object.entries(props)), new Set()).map((l) => [[...l.at, l.wire].join('.'), l.note]);
  t.same(leaves({ small: obj(2), big: obj(MAX_BODY_PARAMS) }), [
    ['small.f0', undefined],
    ['small.f1', undefined],
    [
      'big',
      `an object of ${MAX_BODY_PARAMS} members: taught as one JSON value (the body would pass ${MAX_BODY_PARAMS} parameters)`,
    ],
  ]);
  t.same(leaves({ file: obj(1, { data: { type: 'string', format: 'binary' } }) }), [
    ['file', 'member `data` has no mappable type: taught as one JSON value'],
  ]);
  t.same(leaves({ choice: { oneOf: [obj(1), obj(2)] } }), [['choice', undefined]], 'a union of objects is not opened');
});

t.test('the report names the nested members, the required bodies and what stays a JSON value', async (t) => {
  t.match(
    report,
    'Members of nested body objects, taught as parameters and sent nested: `putVault` (properties.kind as kind',
  );
  t.match(report, 'properties.name as propertiesName');
  t.match(report, 'properties.encryption.keySource as keySource');
  t.match(report, /\(`body_required`\): `patchVault`, `rotateVaultKeys`\./);
  t.match(report, /\| putVault \| identity \| nested deeper than 2 levels: taught as one JSON value \|/);
  t.match(report, /\| putVault \| keySource \| required in `properties.encryption`, which is optional/);
});

t.test('live: the nested PUT, a PATCH of one member and a rotation of no parameter pass the vendor', async (t) => {
  const vendor = await startVaultVendor();
  t.teardown(() => vendor.close());
  const dir = mkdtempSync(join(tmpdir(), 'svc-import-nested-'));
  for (const f of readdirSync(PACKED)) copyFileSync(join(PACKED, f), join(dir, f));
  await writeArtifacts(cgs, cgs_hash, dir);
  const stack = await startStack(t, {
    vendorUrl: vendor.url,
    catalogDir: dir,
    loadOptions: { backendOverrides: { vaults: `${vendor.url}/v1` } },
  });
  const { path, answer } = await openSession(stack.url, { entry_id: 'vaults', seeds: ['vaults:Vault'] });
  const run = (program: string, query = '') => runProgram(stack.url, path, program, query);
  const wave = String(answer.body.wave).split('\n');
  /** The m# the wave teaches for the capability whose meaning starts `meaning`. */
  const m = (meaning: string) => /(m\d+)\(/.exec(wave.find((l) => l.includes(meaning)) ?? '')?.[1];
  const write = async (program: string) => {
    const dry = await run(program, 'mode=plan');
    const ref = dry.body._meta?.svc?.plan_commit_ref as string;
    t.match(ref, /^pc\d+$/, `the dry-run of ${program} mints a pcN ${ref ? '' : dry.text.slice(0, 300)}`);
    return run(program, `plan_commit_ref=${ref}`);
  };
  const bodies = (method: string, p: string) => vendor.hits(p, method).map((r) => JSON.parse(r.body) as unknown);

  const put = m('Create or replace a vault');
  t.ok(put, `the wave teaches putVault: ${wave.join(' / ')}`);
  const created = await write(
    `vaults:Vault("v2").${put}(location="west", kind="premium", size=3, propertiesName="Second", keySource="kms")`,
  );
  t.match(ok(t, created, 'put'), [{ name: 'v2', location: 'west', properties: { kind: 'premium', name: 'Second' } }]);
  t.same(bodies('PUT', '/v1/vaults/v2'), [
    { location: 'west', properties: { kind: 'premium', size: 3, name: 'Second', encryption: { keySource: 'kms' } } },
  ]);
  await write(`vaults:Vault("v3").${put}(location="east", kind="standard")`);
  t.same(
    bodies('PUT', '/v1/vaults/v3'),
    [{ location: 'east', properties: { kind: 'standard' } }],
    'no empty optional objects',
  );

  const patch = m("Change a vault's tags or size");
  t.match(ok(t, await write(`vaults:Vault("v1").${patch}(size=5)`), 'patch'), [{ properties: { size: 5 } }]);
  t.same(bodies('PATCH', '/v1/vaults/v1'), [{ properties: { size: 5 } }]);

  const rotate = m("Rotate a vault's keys");
  t.equal((await write(`vaults:Vault("v1").${rotate}()`)).status, 200, 'a rotation of no parameter runs');
  await write(`vaults:Vault("v1").${rotate}(force=true)`);
  t.same(
    bodies('POST', '/v1/vaults/v1/rotate'),
    [{ options: {} }, { options: { force: true } }],
    'the frame, then the value',
  );
});

function ok(t: Test, a: Answer, what: string): Row[] {
  t.equal(a.status, 200, `${what}: 200 ${a.status === 200 ? '' : a.text.slice(0, 300)}`);
  return (a.body.rows ?? []) as Row[];
}
