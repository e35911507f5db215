/**
 * Compiling programs (parse + resolve + type-check + plan + commit id + review) against the
 * bundled catalogs, side by side in the same run with graphql-js `parse` + `validate` of GraphQL
 * queries of similar size over an equivalent schema. Targets (issue 43, with one grammar
 * implementation: every program through Chevrotain): a one-line program in at most a fifth of the
 * time graphql-js takes to parse and validate a one-field query (ratio <= 0.2), a 200-line program
 * in at most 1.5 times its time for a comparable document (ratio <= 1.5).
 */
import { buildSchema, parse, validate } from 'graphql';
import { compileProgram } from '../compiler/index.js';
import { SymbolTable } from '../compiler/symbols.js';
import { compileSource, readSourceDir, Registry, registryEntry, type RegistryEntry } from '../pack/index.js';
import { packageRoot } from '../cli/package-root.js';
import { join } from 'node:path';
import type { Benchmark, BenchResult, Metric } from './harness.js';

export const benchmark: Benchmark = {
  name: 'compile',
  title: 'compile programs vs graphql-js parse+validate (µs per program, medians)',
  run,
};

const SDL = `
enum Kind { micro brewpub regional large }
type Brewery { id: ID! name: String city: String country: String kind: Kind founded: Int website: String beers(style: String): [Beer] }
type Beer { id: Int! breweryId: ID name: String style: String abv: Float ibu: Int available: Boolean released: String brewery: Brewery reviews(rating: Int): [Review] }
type Review { id: Int! beerId: Int rating: Int author: String text: String createdAt: String }
type Query {
  breweries(city: String, country: String, kind: Kind, limit: Int): [Brewery]
  brewery(id: ID!): Brewery
  beers(style: String, breweryId: ID, available: Boolean, name: String, limit: Int): [Beer]
  beer(id: Int!): Beer
}
type Mutation { createReview(beerId: Int!, rating: Int!, author: String!, text: String): Review }
`;

function tenLines(): [string, string] {
  const svc = [
    '# Berlin breweries, their beers, and a review',
    'b = e1(city="Berlin", kind="micro")[id,name]',
    'e2(breweryId=b.id, available=true)[name,abv]',
    'ipa = e2(style="IPA", limit=20)[id,name]',
    'e3(beerId=ipa.id, rating=5)[author,text]',
    'e1("b-1").r1[name,style]',
    'e2(7).r2[name,city]',
    'm6(beerId=7, rating=4, author="ana", text=<<EOT',
    'Crisp and clean.',
    'EOT)',
  ].join('\n');
  const gql = `query {
  breweries(city: "Berlin", kind: micro) { id name beers { name abv } }
  beers(style: "IPA", limit: 20) { id name reviews(rating: 5) { author text } }
  brewery(id: "b-1") { beers { name style } }
  beer(id: 7) { brewery { name city } }
}`;
  return [svc, gql];
}

function twoHundredLines(): [string, string] {
  const svc: string[] = [];
  const gql: string[] = ['query {'];
  for (let i = 0; i < 100; i++) {
    svc.push(`b${i} = e1(city="City ${i}", kind="micro")[id,name]`, `e2(breweryId=b${i}.id, available=true)[name,abv]`);
    gql.push(`  q${i}: breweries(city: "City ${i}", kind: micro) { id name beers { name abv } }`);
  }
  gql.push('}');
  return [svc.join('\n'), gql.join('\n')];
}

/**
 * Issue 43's ratios (svc compile ÷ graphql-js parse + validate), by case. (Issue 21's 0.1 and 0.5
 * held with a second, hand-written parser for well-formed programs; issue 43 removed it.)
 */
const TARGETS: Record<string, number> = { 'one line': 0.2, '200 lines': 1.5 };

/**
 * Median µs per call of `a` and of `b`, over `batches` batches of `n` calls each, the two
 * interleaved batch by batch (order swapped every other batch, after a warm-up batch of each), so a
 * burst of load on this shared machine falls on both sides, not on one.
 */
function interleaved(a: () => unknown, b: () => unknown, n: number, batches = 9): [number, number] {
  const batch = (fn: () => unknown) => {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) fn();
    return Number(process.hrtime.bigint() - t0) / 1000 / n;
  };
  batch(a);
  batch(b);
  const pa: number[] = [];
  const pb: number[] = [];
  for (let k = 0; k < batches; k++) {
    if (k % 2) {
      pb.push(batch(b));
      pa.push(batch(a));
    } else {
      pa.push(batch(a));
      pb.push(batch(b));
    }
  }
  const median = (v: number[]) => v.sort((x, y) => x - y)[v.length >> 1]!;
  return [median(pa), median(pb)];
}

async function run(): Promise<BenchResult> {
  const entries: RegistryEntry[] = [];
  for (const name of ['brewery', 'helpdesk']) {
    const c = compileSource(await readSourceDir(join(packageRoot(), 'fixtures', 'catalogs', name)));
    if (!c.cgs || !c.cgs_hash) throw new Error(`fixture catalog ${name} does not compile`);
    entries.push(registryEntry(c.cgs, c.cgs_hash, name));
  }
  const registry = new Registry(entries);
  const symbols = new SymbolTable();
  symbols.expose(registry, [
    { api: 'brewery', entity: 'Brewery' },
    { api: 'brewery', entity: 'Beer' },
    { api: 'brewery', entity: 'Review' },
  ]);
  const schema = buildSchema(SDL);

  const cases: Array<[string, string, string, number]> = [
    [
      'one line',
      'e1(city="Berlin", limit=10)[name,city]',
      '{ breweries(city: "Berlin", limit: 10) { name city } }',
      20_000,
    ],
    ['10 lines', ...tenLines(), 500],
    ['200 lines', ...twoHundredLines(), 40],
  ];
  const metrics: Metric[] = [];
  const checks = [];
  for (const [label, svc, gql, n] of cases) {
    const check = compileProgram(svc, { registry, symbols });
    if (check.kind !== 'plan')
      throw new Error(`${label} program does not compile: ${JSON.stringify(check.diagnostics.slice(0, 2))}`);
    if (validate(schema, parse(gql)).length) throw new Error(`${label} GraphQL query is invalid`);
    const [ours, theirs] = interleaved(
      () => compileProgram(svc, { registry, symbols }),
      () => validate(schema, parse(gql)),
      n,
    );
    const ratio = ours / theirs;
    metrics.push(
      {
        label: `svc compile, ${label}`,
        value: ours,
        unit: 'us',
        note: `${Math.round(1e6 / ours).toLocaleString('en')} programs/s`,
      },
      {
        label: `graphql parse+validate, ${label}`,
        value: theirs,
        unit: 'us',
        note: `${Math.round(1e6 / theirs).toLocaleString('en')} queries/s; ratio svc/graphql ${ratio.toFixed(2)}`,
      },
    );
    const limit = TARGETS[label];
    if (limit !== undefined)
      checks.push({
        target: `${label}: compile ≤ ${limit}× graphql-js parse+validate of a comparable document`,
        pass: ratio <= limit,
        actual: `ratio ${ratio.toFixed(2)} (${ours.toFixed(1)} µs vs ${theirs.toFixed(1)} µs)`,
      });
  }
  return { metrics, checks };
}
