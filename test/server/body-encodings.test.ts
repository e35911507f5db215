/**
 * Form and multipart bodies (issue 42, convention 2): a mapping's `body_encoding: form` sends its
 * body as `application/x-www-form-urlencoded` (nested objects `a[b]=1`, lists `a[]=1`, numbers
 * and booleans as text) and `body_encoding: multipart` as `multipart/form-data` text fields; a
 * dry-run of such a write reviews it like any other. Over real sockets: the svc server, a vendor
 * on 127.0.0.1 that records what it receives (decoded here with the platform's own parsers), and
 * a brewery catalog whose createBrewery posts a form and createBeer a multipart body.
 */
import t, { type Test } from 'tap';
import { join } from 'node:path';
import { compileSource, readSourceDir } from '../../pack/index.js';
import { editedCatalog, packedCatalog } from '../_helpers/catalog-copy.js';
import { startFaultVendor, type RecordedRequest } from '../_helpers/fault-vendor.js';
import { openSession, ROOT, runProgram, startStack } from '../_helpers/server.js';

/** The brewery catalog with createBrewery sent as a nested form and createBeer as multipart, packed. */
async function encodedCatalog(t: Test): Promise<string> {
  return packedCatalog(t, 'brewery', [
    {
      file: 'mappings.yaml',
      from: '  createBrewery: POST /breweries\n',
      to: [
        '  createBrewery:',
        '    method: POST',
        '    path: /breweries',
        '    body_encoding: form',
        '    body:',
        '      brewery: {name: "{name}", city: "{city}", country: "{country}", kind: "{kind}", founded: "{founded}", website: "{website}"}',
        '      tags: [craft, "{country}"]',
        '      verified: false',
        '',
      ].join('\n'),
    },
    {
      file: 'mappings.yaml',
      from: '  createBeer: POST /beers\n',
      to: '  createBeer: {method: POST, path: /beers, body_encoding: multipart}\n',
    },
  ]);
}

/** The fields of a multipart body as the platform's FormData parser reads them. */
async function multipartFields(r: RecordedRequest): Promise<Array<[string, string]>> {
  const form = await new Response(r.body, {
    headers: { 'content-type': String(r.headers['content-type']) },
  }).formData();
  return [...form.entries()].map(([k, v]) => [k, typeof v === 'string' ? v : `(file ${v.name})`]);
}

t.test('a form create and a multipart create reach the vendor with their fields', async (t) => {
  const vendor = await startFaultVendor({
    'POST /breweries': { status: 201, json: { id: 'b-9', name: 'Pen', city: 'Berlin', country: 'DE', founded: 2019 } },
    'POST /beers': { status: 201, json: { id: 41, breweryId: 'b-9', name: 'Nib', style: 'IPA', abv: 6.5 } },
  });
  t.teardown(() => vendor.close());
  const stack = await startStack(t, { vendorUrl: vendor.url, catalogDir: await encodedCatalog(t) });
  const { path } = await openSession(stack.url, { entry_id: 'brewery', seeds: ['brewery:Brewery'] });

  const form = 'brewery:createBrewery(name="Pen & Ale", city="Berlin", country="DE", founded=2019)';
  const dry = await runProgram(stack.url, path, form, 'mode=plan', { accept: 'text/plain' });
  t.equal(dry.status, 200, dry.text);
  t.match(
    dry.text,
    /^dry-run pc0: review, 1 write; run it with its token pc0/,
    'a dry-run of a form write mints its token',
  );
  t.match(
    dry.text,
    /WRITE brewery:Brewery createBrewery\(name="Pen & Ale", city="Berlin", country="DE", founded=2019, kind="micro"\)/,
    'the review names the write and every value it sends',
  );
  t.equal(vendor.requests.length, 0, 'a dry-run sends nothing');

  const made = await runProgram(stack.url, path, form, 'force=true', { accept: 'application/json' });
  t.equal(made.status, 200, made.text);
  t.match(made.text, /b-9/, 'the row the vendor answered');
  const [sent] = vendor.hits('/breweries', 'POST');
  t.equal(sent!.headers['content-type'], 'application/x-www-form-urlencoded');
  t.same(
    [...new URLSearchParams(sent!.body)],
    [
      ['brewery[city]', 'Berlin'],
      ['brewery[country]', 'DE'],
      ['brewery[founded]', '2019'],
      ['brewery[kind]', 'micro'],
      ['brewery[name]', 'Pen & Ale'],
      ['tags[]', 'craft'],
      ['tags[]', 'DE'],
      ['verified', 'false'],
    ],
    'nested keys (in name order, as the CGS holds them), a list as repeated a[] keys in its order, numbers and booleans as text, the absent website left out',
  );

  const beer = 'brewery:createBeer(breweryId="b-9", name="Nib", style="IPA", abv=6.5)';
  const dryBeer = await runProgram(stack.url, path, beer, 'mode=plan', { accept: 'text/plain' });
  t.match(dryBeer.text, /WRITE brewery:Beer createBeer\(breweryId="b-9", name="Nib", style="IPA", abv=6.5/);
  const beerMade = await runProgram(stack.url, path, beer, 'force=true', { accept: 'application/json' });
  t.equal(beerMade.status, 200, beerMade.text);
  const [mp] = vendor.hits('/beers', 'POST');
  t.match(String(mp!.headers['content-type']), /^multipart\/form-data; boundary=/);
  t.same(
    await multipartFields(mp!),
    [
      ['abv', '6.5'],
      ['available', 'true'],
      ['breweryId', 'b-9'],
      ['name', 'Nib'],
      ['style', 'IPA'],
    ],
    'one text field per parameter given (the default of available included)',
  );
});

t.test('a form body whose template is not a map of fields does not pack', async (t) => {
  const src = await editedCatalog(t, 'brewery', [
    {
      file: 'mappings.yaml',
      from: '  createBeer: POST /beers\n',
      to: '  createBeer: {method: POST, path: /beers, body_encoding: form, body: "{name}"}\n',
    },
  ]);
  const compiled = compileSource(await readSourceDir(src));
  const bad = compiled.diagnostics.find((d) => d.code === 'bad_mapping');
  t.ok(bad, JSON.stringify(compiled.diagnostics));
  t.match(bad!.message, /body of `createBeer` is sent as form fields, but its template is not an object/);
});

t.test('body_encoding: json is the default and leaves the packed catalog as it was', async (t) => {
  const plain = compileSource(await readSourceDir(join(ROOT, 'fixtures', 'catalogs', 'brewery')));
  const src = await editedCatalog(t, 'brewery', [
    {
      file: 'mappings.yaml',
      from: '  createBeer: POST /beers\n',
      to: '  createBeer: {method: POST, path: /beers, body_encoding: json}\n',
    },
  ]);
  const json = compileSource(await readSourceDir(src));
  t.same(json.diagnostics, []);
  t.ok(plain.cgs_hash);
  t.equal(json.cgs_hash, plain.cgs_hash, 'the same CGS hash');
  t.notOk('body_encoding' in json.cgs!.capabilities.find((c) => c.name === 'createBeer')!.http);
});
