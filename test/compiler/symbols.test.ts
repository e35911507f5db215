import t from 'tap';
import { SymbolTable } from '../../compiler/symbols.js';
import { renderWave, teachingRules, waveRows, TEACHING_HEADER } from '../../compiler/teaching.js';
import { compileProgram } from '../../compiler/compile.js';
import { compileSource, Registry } from '../../pack/index.js';
import { fixtureRegistry, GOLDEN_SEEDS } from '../_helpers/registry.js';

t.test('symbols are assigned in order of first exposure and never change', async (t) => {
  const registry = await fixtureRegistry();
  const table = new SymbolTable();
  const w1 = table.expose(registry, [{ api: 'brewery', entity: 'Beer' }]);
  t.same(
    w1.entities.map((e) => `${e.sym}=${e.entity}`),
    ['e1=Beer'],
  );
  t.equal(w1.domain_revision, 1);
  t.same(
    w1.capabilities.map((c) => `${c.sym}=${c.capability}`),
    ['m1=listBreweryBeers', 'm2=createBeer', 'm3=retireBeer', 'm4=deleteBeer'],
  );
  t.same(
    w1.relations.map((r) => `${r.sym}=${r.entity}.${r.relation}`),
    ['r1=Beer.brewery', 'r2=Beer.reviews'],
  );

  const w2 = table.expose(registry, [
    { api: 'brewery', entity: 'Brewery' },
    { api: 'brewery', entity: 'Beer' },
  ]);
  t.same(
    w2.entities.map((e) => `${e.sym}=${e.entity}`),
    ['e2=Brewery'],
    'the wave holds only new rows',
  );
  t.same(w2.repeated, [{ api: 'brewery', entity: 'Beer' }], 'a repeated seed is reported, not re-taught');
  t.equal(w2.domain_revision, 2);
  t.match(table.lookup('e1'), { kind: 'entity', entity: 'Beer' }, 'e1 still means Beer');
  t.match(table.lookup('m1'), { kind: 'capability', capability: 'listBreweryBeers' });

  const w3 = table.expose(registry, [{ api: 'brewery', entity: 'Beer' }]);
  t.equal(w3.entities.length, 0);
  t.equal(w3.domain_revision, 2, 'no new entity: the revision stays');
  t.equal(table.domainRevision, 2);
});

t.test('federation keys entities by (catalog, entity)', async (t) => {
  const registry = await fixtureRegistry();
  const table = new SymbolTable();
  table.expose(registry, [{ api: 'brewery', entity: 'Brewery' }]);
  const w = table.expose(registry, [{ api: 'helpdesk', entity: 'Ticket' }]);
  t.same(
    w.entities.map((e) => `${e.sym}=${e.api}:${e.entity}`),
    ['e2=helpdesk:Ticket'],
  );
  t.same(table.apis(), ['brewery', 'helpdesk']);
  t.equal(table.entitySymbol('helpdesk', 'Ticket')?.sym, 'e2');
  t.equal(table.entitySymbol('brewery', 'Ticket'), undefined);
});

t.test('unknown seeds are ignored by the table (callers validate them)', async (t) => {
  const registry = await fixtureRegistry();
  const table = new SymbolTable();
  const w = table.expose(registry, [
    { api: 'brewery', entity: 'Nope' },
    { api: 'nope', entity: 'Beer' },
  ]);
  t.equal(w.entities.length, 0);
  t.equal(table.domainRevision, 0);
});

t.test('toJSON/fromJSON round-trips and keeps counting', async (t) => {
  const registry = await fixtureRegistry();
  const a = new SymbolTable();
  a.expose(registry, [{ api: 'brewery', entity: 'Brewery' }]);
  const b = SymbolTable.fromJSON(JSON.parse(JSON.stringify(a.toJSON())));
  t.same(b.toJSON(), a.toJSON());
  const w = b.expose(registry, [{ api: 'brewery', entity: 'Review' }]);
  t.equal(w.entities[0]?.sym, 'e2');
  t.equal(w.capabilities[0]?.sym, `m${a.toJSON().capabilities.length + 1}`);
  t.equal(b.domainRevision, 2);
});

t.test('teaching table: TSV, one row per symbol, no tabs or newlines in cells', async (t) => {
  const registry = await fixtureRegistry();
  const table = new SymbolTable();
  const wave = table.expose(registry, [
    { api: 'brewery', entity: 'Brewery' },
    { api: 'brewery', entity: 'Beer' },
  ]);
  const tsv = renderWave(wave, registry, table);
  const lines = tsv.split('\n');
  t.equal(lines[0], TEACHING_HEADER);
  t.equal(
    lines.length - 1,
    wave.entities.length + wave.capabilities.length + wave.relations.length,
    'one row per symbol',
  );
  for (const l of lines) t.equal(l.split('\t').length, 2, `two cells: ${l.slice(0, 40)}`);
  const rows = waveRows(wave, registry, table);
  const m = rows.find((r) => r.meaning.startsWith('create e1:'));
  t.ok(m, 'the create capability has a row, naming its entity by symbol');
  t.notMatch(m!.meaning, /needs review/, 'the kind says it writes; the rules say writes are reviewed');
  t.equal(m!.form, 'm1(name=$, city=$, country=$)', 'the form shows the required parameters');
  t.notMatch(m!.meaning, /required:/, 'required parameters typed like their field need no note');
  t.match(
    m!.meaning,
    /optional: kind \(default "micro"\), founded, website/,
    'parameters typed like their field show no type',
  );
  const e1 = rows.find((r) => r.sym === 'e1')!;
  t.match(e1.form, /^e1\(city=\$, country=\$, kind=\$\)\[\.\.\]$/);
  t.match(e1.meaning, /kind=micro\|brewpub\|regional\|large/, 'the enum is taught once, on the fields');
  t.match(e1.meaning, /one: e1\("<id>"\)/);
  t.match(e1.meaning, /search: e1\(q=\$\)/);
  const rel = rows.find((r) => r.sym === 'r1')!;
  t.equal(rel.form, 'e1("<id>").beers[..]', 'a relation is taught by its wire name');
  t.match(
    rel.meaning,
    /^r1 -> e2 rows: Beers this brewery brews\. \| sort: any field$/,
    'the meaning names its r# and target e#',
  );
  t.equal(rows.find((r) => r.sym === 'r2')?.form, 'e2(1).brewery[..]');
  t.equal(
    rows.find((r) => r.sym === 'r3')?.form,
    'e2(1).reviews(rating=$, author=$)[..]',
    'unbound parameters are filters',
  );
  t.notOk(
    wave.capabilities.some((c) => c.capability === 'listBreweryBeers'),
    'the list only Brewery.beers reaches has no m#',
  );
  t.notMatch(tsv, /^#/m, 'the shared rules are not repeated in a wave');
  t.notMatch(teachingRules(), /\.r\d/, 'the rules show relations by wire name, not r#');
  t.match(teachingRules(), /page\(pgN\)/);
  t.match(teachingRules(), /wait\(oN\)/);
  t.match(teachingRules(), /dry-run/);
});

t.test('a list that a relation reaches gets no m#, unless the relation is not exposed', async (t) => {
  const registry = await fixtureRegistry();
  const both = new SymbolTable();
  const w = both.expose(registry, [
    { api: 'helpdesk', entity: 'Ticket' },
    { api: 'helpdesk', entity: 'Customer' },
  ]);
  t.notOk(
    w.capabilities.some((c) => c.capability === 'listCustomerTickets'),
    'seed order does not matter: Customer.tickets teaches it',
  );
  const row = waveRows(w, registry, both).find((r) => r.form.includes('.tickets'))!;
  t.equal(row.form, 'e2("<id>").tickets(status=$)[..]');
  const r = compileProgram('e2("c-1").tickets(status="open")', { registry, symbols: both });
  t.equal(r.kind === 'plan' ? r.plan.steps.at(-1)?.capability : r.kind, 'listCustomerTickets');
  const alone = new SymbolTable();
  const w2 = alone.expose(registry, [{ api: 'helpdesk', entity: 'Ticket' }]);
  t.ok(
    w2.capabilities.some((c) => c.capability === 'listCustomerTickets'),
    'without Customer it keeps its m#',
  );
});

t.test('every relation row is a copyable form: it compiles to a step that follows that relation', async (t) => {
  const registry = await fixtureRegistry();
  const table = new SymbolTable();
  const wave = table.expose(registry, GOLDEN_SEEDS);
  const rows = waveRows(wave, registry, table).filter((r) => r.sym.startsWith('r'));
  t.equal(rows.length, wave.relations.length);
  for (const row of rows) {
    const rel = table.lookup(row.sym);
    if (rel?.kind !== 'relation') {
      t.fail(`${row.sym} is a relation`);
      continue;
    }
    t.match(
      row.form,
      new RegExp(`\\.${rel.relation}(\\([^)]*\\))?\\[\\.\\.\\]$`),
      `${row.sym}: the form ends with .${rel.relation}[..] (or its filters)`,
    );
    t.ok(row.meaning.startsWith(`${row.sym} -> `), `${row.sym}: ${row.meaning.slice(0, 40)}`);
    const r = compileProgram(row.form.replace(/(\([^)]*\))?\[\.\.\]$/, ''), { registry, symbols: table });
    t.equal(r.kind, 'plan', row.form);
    if (r.kind === 'plan')
      t.equal(r.plan.steps.at(-1)?.via?.relation, rel.relation, `${row.form} follows ${rel.entity}.${rel.relation}`);
  }
});

t.test('a relation whose wire name the language reads as something else is taught by its r#', async (t) => {
  const src = `
catalog: {entry_id: shop, version: 1, label: Shop, description: A shop, backend: {url: "http://127.0.0.1:1"}}
entities:
  Product:
    fields: {id: integer, name: string, makerId: {type: ref, entity: Maker}}
    relations:
      p1: {target: Maker, cardinality: one, capability: getMaker, bind: {id: makerId}}
      m1: {target: Maker, cardinality: one, capability: getMaker, bind: {id: makerId}}
      maker: {target: Maker, cardinality: one, capability: getMaker, bind: {id: makerId}}
  Maker:
    fields: {id: integer, name: string}
capabilities:
  listProducts: {kind: query, entity: Product, params: [name]}
  getProduct: {kind: get, entity: Product, params: [id]}
  getMaker: {kind: get, entity: Maker, params: [id]}
mappings: {listProducts: GET /p, getProduct: "GET /p/{id}", getMaker: "GET /m/{id}"}
`;
  const c = compileSource([{ file: 'shop.yaml', text: src }]);
  if (!c.cgs) return t.fail(JSON.stringify(c.diagnostics));
  const registry = new Registry([
    {
      entry_id: 'shop',
      label: 'Shop',
      tags: [],
      version: 1,
      cgs: c.cgs,
      cgs_hash: c.cgs_hash!,
      base_url: c.cgs.backend.base_url,
      artifact: '',
    },
  ]);
  const table = new SymbolTable();
  const rows = waveRows(table.expose(registry, [{ api: 'shop', entity: 'Product' }]), registry, table).filter((r) =>
    r.sym.startsWith('r'),
  );
  t.same(
    rows.map((r) => r.form),
    ['e1(1).r1[..]', 'e1(1).r2[..]', 'e1(1).maker[..]'],
    '`p1` and `m1` look like symbols: their rows show r#',
  );
  t.match(
    compileProgram('e1(1).p1', { registry, symbols: table }),
    { kind: 'error', diagnostics: [{ code: 'legacy_symbol' }] },
    'the wire name p1 would not compile',
  );
  for (const row of rows)
    t.equal(compileProgram(row.form.replace(/\[\.\.\]$/, ''), { registry, symbols: table }).kind, 'plan', row.form);
});

t.test('the first brewery wave with its rules stays within its token budget', async (t) => {
  const registry = await fixtureRegistry();
  const table = new SymbolTable();
  const w1 = renderWave(
    table.expose(registry, [
      { api: 'brewery', entity: 'Brewery' },
      { api: 'brewery', entity: 'Beer' },
    ]),
    registry,
    table,
  );
  // 2,802 characters (rules + newline + wave) before relations were taught by wire name; 2,784 after.
  // Nested projections added 45 to the rules; sorting 54 to the rules and 18 to each of the three
  // rows of a list that sorts (`| sort: any field`).
  // The compact table (2026-11-24): rules without `#`, parameters typed like their field untyped, writes
  // marked by their kind, relation rows `r1 -> e2 rows`: 2,050; forms with the required parameters
  // only: 1,930.
  t.ok(teachingRules().length + 1 + w1.length <= 1980, `rules ${teachingRules().length} + wave ${w1.length}`);
});

t.test('docs/teaching.md shows the waves the renderer produces today', async (t) => {
  const { readFileSync } = await import('node:fs');
  const doc = readFileSync('docs/teaching.md', 'utf8');
  const registry = await fixtureRegistry();
  const table = new SymbolTable();
  const w1 = renderWave(
    table.expose(registry, [
      { api: 'brewery', entity: 'Brewery' },
      { api: 'brewery', entity: 'Beer' },
    ]),
    registry,
    table,
  );
  const w2 = renderWave(
    table.expose(registry, [
      { api: 'brewery', entity: 'Beer' },
      { api: 'helpdesk', entity: 'Ticket' },
    ]),
    registry,
    table,
  );
  t.ok(doc.includes('```\n' + teachingRules() + '\n```'), 'the rules');
  t.ok(doc.includes('```\n' + w1 + '\n```'), 'the first wave');
  t.ok(doc.includes('```\n' + w2 + '\n```'), 'the second wave');
});
