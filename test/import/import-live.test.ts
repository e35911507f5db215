/**
 * The demo vendor's OpenAPI document (fixtures/openapi/demo-vendor.yaml), imported, packed and
 * served by a real svc server against the real json-server vendor: reads, a filter, a relation,
 * paging through every row with page(pgN), and a reviewed write (dry-run, then the live run with
 * its pcN). Every row is compared with what the vendor answers directly.
 */
import t, { type Test } from 'tap';
import { copyFileSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeArtifacts } from '../../pack/index.js';
import { startDemoVendor } from '../../cli/demo-vendor.js';
import { openSession, runProgram, startStack, PACKED, type Answer } from '../_helpers/server.js';
import { importAndPack } from '../_helpers/import.js';

type Row = Record<string, unknown>;

const { cgs, cgs_hash } = await importAndPack('demo-vendor.yaml', { entryId: 'demo' });
const dir = mkdtempSync(join(tmpdir(), 'svc-import-live-'));
for (const f of readdirSync(PACKED)) copyFileSync(join(PACKED, f), join(dir, f));
await writeArtifacts(cgs, cgs_hash, dir);
const vendor = await startDemoVendor();
t.teardown(() => vendor.close());
const stack = await startStack(t, {
  vendorUrl: vendor.url,
  catalogDir: dir,
  loadOptions: { backendOverrides: { demo: vendor.url } },
});
const BASE = stack.url;

async function direct(path: string): Promise<any> {
  const res = await fetch(vendor.url + path);
  if (res.status !== 200) throw new Error(`vendor ${path} answered ${res.status}`);
  return res.json();
}
const pick = (rows: Row[], fields: string[]) =>
  rows.map((r) => Object.fromEntries(fields.filter((f) => r[f] !== undefined).map((f) => [f, r[f]])));

function ok(t: Test, a: Answer, what: string): Row[] {
  t.equal(a.status, 200, `${what}: 200 ${a.status === 200 ? '' : a.text.slice(0, 300)}`);
  return (a.body.rows ?? []) as Row[];
}

t.test('reads, a filter and a relation return the vendor rows', async (t) => {
  const { path } = await openSession(BASE, { entry_id: 'demo', seeds: ['demo:Brewery', 'demo:Beer', 'demo:Review'] });
  const one = ok(t, await runProgram(BASE, path, 'demo:Brewery("b-1")'), 'get');
  t.same(one, [await direct('/breweries/b-1')]);
  const be = ok(t, await runProgram(BASE, path, 'demo:Brewery(country="BE", limit=100)[id,country]'), 'filter');
  t.same(be, pick(await direct('/breweries?country=BE'), ['id', 'country']));
  const beers = ok(t, await runProgram(BASE, path, 'demo:Brewery("b-1").beers(limit=100)[id,name]'), 'nested relation');
  t.same(beers, pick(await direct('/breweries/b-1/beers'), ['id', 'name']));
  const brewery = ok(t, await runProgram(BASE, path, 'demo:Beer(1).brewery[id,name]'), 'ref relation');
  const beer = await direct('/beers/1');
  t.same(brewery, pick([await direct(`/breweries/${beer.breweryId}`)], ['id', 'name']));
});

t.test('page(pgN) walks every beer exactly once', async (t) => {
  const { path } = await openSession(BASE, { entry_id: 'demo', seeds: ['demo:Beer'] });
  const all = pick(await direct('/beers'), ['id']);
  const rows: Row[] = [];
  let a = await runProgram(BASE, path, 'demo:Beer[id]');
  for (let i = 0; i < 20; i++) {
    rows.push(...ok(t, a, `page ${i + 1}`));
    if (!a.body.more) break;
    const h = /^page\((pg\d+)\)/.exec(String(a.body.more))![1]!;
    a = await runProgram(BASE, path, `page(${h})[id]`);
  }
  t.same(rows, all, `all ${all.length} beers in vendor order`);
  t.ok(rows.length > 25, 'more than one vendor page');
});

t.test('a write needs review: dry-run mints pcN, the live run with it creates the row', async (t) => {
  const opened = await openSession(BASE, { entry_id: 'demo', seeds: ['demo:Review'] });
  const wave = String(opened.answer.body.wave).split('\n');
  const row = wave.find((l) => /^m\d+\(/.test(l) && /\tcreate e\d+: Review a beer/.test(l));
  t.ok(row, 'the wave teaches createReview');
  const m = /^(m\d+)/.exec(row!)![1];
  const program = `${m}(beerId=7, rating=5, author="importer", text="Imported and reviewed.")`;
  const live = await runProgram(BASE, opened.path, program);
  t.equal(live.status, 409, `a live write without a token is refused: ${live.text.slice(0, 200)}`);
  const dry = await runProgram(BASE, opened.path, program, 'mode=plan');
  const ref = dry.body._meta?.svc?.plan_commit_ref as string;
  t.match(ref, /^pc\d+$/, 'the dry-run mints a pcN');
  const done = await runProgram(BASE, opened.path, program, `plan_commit_ref=${ref}`);
  const created = ok(t, done, 'the reviewed write');
  const stored = (await direct('/reviews?author=importer')) as Row[];
  t.equal(stored.length, 1, 'the vendor has the review');
  t.same(created, stored, 'the answer is the created row');
});
