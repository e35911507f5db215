/**
 * Form and multipart request bodies in `svc import openapi` (issue 42, convention 2): a write
 * whose body is `application/x-www-form-urlencoded` or `multipart/form-data` gets its properties
 * as parameters and `body_encoding` in its mapping; JSON wins when several media types are
 * offered; a file part (`format: binary`, or an `encoding` contentType such as image/png) is
 * listed as skipped with why, and an operation that needs one is skipped; a list whose `encoding`
 * asks for another style than svc's brackets is named in the report. fixtures/openapi/forms.yaml
 * is a small document written for this test. Then the imported catalog served by a real svc
 * server: its form create reaches a vendor on 127.0.0.1 as nested form fields.
 */
import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeArtifacts } from '../../pack/index.js';
import { startFaultVendor } from '../_helpers/fault-vendor.js';
import { importAndPack } from '../_helpers/import.js';
import { openSession, runProgram, startStack } from '../_helpers/server.js';

const cap = (cgs: { capabilities: Array<{ name: string }> }, name: string) =>
  cgs.capabilities.find((c) => c.name === name) as any;
const names = (c: { params: Array<{ name: string }> }) => c.params.map((p) => p.name);

t.test('form and multipart bodies become parameters with their encoding', async (t) => {
  const { result, cgs } = await importAndPack('forms.yaml');
  const customer = cap(cgs, 'createCustomer');
  t.equal(customer.http.body_encoding, 'form', 'the form create sends a form');
  t.same(names(customer), ['email', 'name', 'vip', 'address', 'tags']);
  t.match(customer.params[0], { name: 'email', type: 'string', required: true, format: 'email' });
  t.match(customer.params[3], { name: 'address', type: 'object' }, 'an object property: sent as address[city]=…');
  t.match(customer.params[4], { name: 'tags', type: 'array', items: { type: 'string' } });
  t.same(customer.http.body, {
    email: '{email}',
    name: '{name}',
    vip: '{vip}',
    address: '{address}',
    tags: '{tags}',
  });

  const job = cap(cgs, 'createJob');
  t.equal(job.http.body_encoding, 'multipart', 'the multipart create sends multipart');
  t.same(
    names(job),
    ['title', 'copies', 'color'],
    'its text fields, not the file parts (format: binary, an image contentType)',
  );
  t.match(job.params[1], { name: 'copies', type: 'integer', required: true, minimum: 1 });

  const update = cap(cgs, 'updateCustomer');
  t.equal(update.http.body_encoding, undefined, 'JSON is preferred when the document offers it too');
  t.same(names(update), ['id', 'name', 'vip'], 'the JSON schema gave the parameters');
  t.equal(cap(cgs, 'uploadArtwork'), undefined, 'an operation that needs a file is not imported');

  t.match(
    result.files['mappings.yaml'],
    /createCustomer:\n {4}method: POST\n {4}path: \/customers\n {4}body_encoding: form\n/,
  );
  t.match(
    result.files['mappings.yaml'],
    /createJob:\n {4}method: POST\n {4}path: \/jobs\n {4}body_encoding: multipart\n/,
  );

  t.same(
    result.log.skipped.filter((s) => /\(createJob\)|uploadArtwork/.test(s.what)),
    [
      {
        what: 'POST /jobs (createJob) body part proof',
        reason: 'file_part',
        why: 'a file part of the multipart body: svc sends text fields only',
      },
      {
        what: 'POST /jobs (createJob) body part cover',
        reason: 'file_part',
        why: 'a file part of the multipart body: svc sends text fields only',
      },
      {
        what: 'POST /jobs/{id}/artwork (uploadArtwork)',
        reason: 'body',
        why: 'required file part `artwork` of the multipart body (svc sends text fields only)',
      },
    ],
  );
  const report = result.files['import-report.md']!;
  t.match(
    report,
    '| createCustomer | tags | encoding style form, explode: true, but sent as bracketed fields (a[b]=1, a[]=1) |',
    "a list the document's encoding sends another way is named for review",
  );
  t.notMatch(report, '| createCustomer | address |', 'deepObject is the bracket convention: nothing to say');
  t.match(
    report,
    '| `POST /jobs (createJob) body part proof` | `file_part` | a file part of the multipart body: svc sends text fields only |',
  );
  t.match(
    report,
    '| `POST /jobs/{id}/artwork (uploadArtwork)` | `body` | required file part `artwork` of the multipart body',
  );
  t.match(
    report,
    'Request bodies: 1 JSON; form (`body_encoding: form`, application/x-www-form-urlencoded): `createCustomer`; multipart (`body_encoding: multipart`, multipart/form-data text fields): `createJob`.',
    'the report says which writes send a form or multipart body',
  );
});

t.test('the imported form create sends its object and list parameters as bracketed fields', async (t) => {
  const { cgs, cgs_hash } = await importAndPack('forms.yaml');
  const dir = await mkdtemp(join(tmpdir(), 'svc-import-forms-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeArtifacts(cgs, cgs_hash, dir);
  const vendor = await startFaultVendor({
    'POST /v1/customers': { status: 201, json: { id: 'c-1', email: 'ana@example.com', vip: true } },
  });
  t.teardown(() => vendor.close());
  const stack = await startStack(t, {
    vendorUrl: vendor.url,
    catalogDir: dir,
    loadOptions: { backendOverrides: { 'print-shop': `${vendor.url}/v1` } },
  });
  const { path } = await openSession(stack.url, { entry_id: 'print-shop', seeds: ['print-shop:Customer'] });
  const program =
    'print-shop:createCustomer(email="ana@example.com", vip=true, address={city: "Oslo", country: "NO"}, tags=["a", "b"])';
  const a = await runProgram(stack.url, path, program, 'force=true', { accept: 'application/json' });
  t.equal(a.status, 200, a.text);
  const [sent] = vendor.hits('/v1/customers', 'POST');
  t.equal(sent!.headers['content-type'], 'application/x-www-form-urlencoded');
  t.same(
    [...new URLSearchParams(sent!.body)],
    [
      ['address[city]', 'Oslo'],
      ['address[country]', 'NO'],
      ['email', 'ana@example.com'],
      ['tags[]', 'a'],
      ['tags[]', 'b'],
      ['vip', 'true'],
    ],
  );
});
