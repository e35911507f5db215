/**
 * What the session graph saves, side by side in one run, against a local node:http vendor that
 * answers every request after 2 ms (standing for a remote API) with a demo-like catalog:
 * (a) a fan-out over 25 beers naming 5 breweries, `x = brew:Beer()` then `brew:Brewery(x.breweryId)`,
 *     with the graph vs `graph: false`: vendor calls and p50 latency of the program;
 * (b) list-then-get across two runs of one session (server/execute/graphs.ts views), max age 60 s
 *     vs 0: vendor calls and p50 latency of the get run.
 * Rounds alternate which variant goes first. Targets: calls with ÷ without ≤ 0.3 in (a), and the
 * latency with the graph ≤ the latency without, in both.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { compileProgram } from '../compiler/index.js';
import type { Plan } from '../compiler/plan.js';
import { compileSource, Registry } from '../pack/index.js';
import { executePlan, PooledHttpClient, type ExecuteOptions } from '../runtime/index.js';
import { SessionGraphs } from '../server/execute/graphs.js';
import { DEFAULT_LIMITS } from '../server/limits.js';
import { median, type Benchmark, type BenchResult, type Metric } from './harness.js';

export const benchmark: Benchmark = {
  name: 'graph',
  title: 'the session graph: vendor calls and latency with it vs without (vendor answering after 2 ms)',
  run,
};

const LATENCY_MS = 2;
const ROUNDS = 30;
const WARMUP = 3;

const CATALOG = `
catalog: {entry_id: brew, version: 1, label: Brew, description: Breweries and beers, backend: {url: "http://127.0.0.1:1"}, auth: {scheme: none}}
entities:
  Brewery:
    description: A brewery.
    fields: {id: string, name: string, city: string, country: string}
  Beer:
    description: A beer.
    fields: {id: integer, breweryId: {type: ref, entity: Brewery, description: Its brewery}, name: string, abv: number}
capabilities:
  listBreweries: {kind: query, entity: Brewery, description: Breweries., params: [city]}
  getBrewery: {kind: get, entity: Brewery, description: One brewery., params: [id]}
  listBeers: {kind: query, entity: Beer, description: Beers., params: [name]}
  getBeer: {kind: get, entity: Beer, description: One beer., params: [id]}
mappings:
  listBreweries: {method: GET, path: /breweries, query: [city]}
  getBrewery: GET /breweries/{id}
  listBeers: {method: GET, path: /beers, query: [name]}
  getBeer: GET /beers/{id}
`;

const BREWERIES = Array.from({ length: 5 }, (_, i) => ({
  id: `b-${i + 1}`,
  name: `Brewery ${i + 1}`,
  city: ['Berlin', 'Brussels', 'Prague', 'Dublin', 'Oslo'][i]!,
  country: ['DE', 'BE', 'CZ', 'IE', 'NO'][i]!,
}));
const BEERS = Array.from({ length: 25 }, (_, i) => ({
  id: i + 1,
  breweryId: `b-${(i % 5) + 1}`,
  name: `Beer ${i + 1}`,
  abv: 4 + (i % 7) / 2,
}));

function body(path: string): unknown {
  if (path === '/beers') return BEERS;
  if (path === '/breweries') return BREWERIES;
  const m = /^\/(beers|breweries)\/([^/]+)$/.exec(path);
  const rows: Array<{ id: unknown }> = m?.[1] === 'beers' ? BEERS : BREWERIES;
  return rows.find((r) => String(r.id) === decodeURIComponent(m?.[2] ?? ''));
}

interface Variant {
  label: string;
  calls: number[];
  ms: number[];
}

async function run(): Promise<BenchResult> {
  let requests = 0;
  const server = createServer((req, res) => {
    requests++;
    const found = body(new URL(req.url ?? '/', 'http://x').pathname);
    setTimeout(() => {
      res.writeHead(found ? 200 : 404, { 'content-type': 'application/json' });
      res.end(JSON.stringify(found ?? { message: 'not found' }));
    }, LATENCY_MS);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const http = new PooledHttpClient();
  try {
    const c = compileSource([{ file: 'brew.yaml', text: CATALOG }]);
    if (!c.cgs || !c.cgs_hash) throw new Error(JSON.stringify(c.diagnostics));
    const base_url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const registry = new Registry([
      {
        entry_id: 'brew',
        label: 'Brew',
        tags: [],
        version: 1,
        cgs: c.cgs,
        cgs_hash: c.cgs_hash,
        base_url,
        artifact: 'brew',
      },
    ]);
    const plan = (text: string): Plan => {
      const p = compileProgram(text, { registry });
      if (p.kind !== 'plan') throw new Error(`${text} does not compile`);
      return p.plan;
    };
    /** One run: its vendor calls and wall time. */
    const once = async (p: Plan, opts: ExecuteOptions, into?: Variant) => {
      const n = requests;
      const t0 = performance.now();
      const r = await executePlan(p, registry, { http, ...opts });
      const ms = performance.now() - t0;
      if (r.status !== 'succeeded') throw new Error(JSON.stringify(r.errors));
      into?.calls.push(requests - n);
      into?.ms.push(ms);
    };

    // (a) A fan-out naming 5 distinct breweries 25 times, with the graph (a session view) and without.
    const fanout = plan('x = brew:Beer()\nbrew:Brewery(x.breweryId)');
    const fanGraphs = new SessionGraphs({ ...DEFAULT_LIMITS, graphMaxAgeMs: 0 }, Date.now);
    const a: Variant[] = [
      { label: 'fan-out, graph', calls: [], ms: [] },
      { label: 'fan-out, graph: false', calls: [], ms: [] },
    ];
    const fanRun = async (i: number, round: number, v?: Variant) => {
      const opts: ExecuteOptions = {
        graph:
          i === 0 ? await fanGraphs.view({ prompt_hash: 'bench', session: `a${round}`, entity_writes: {} }) : false,
      };
      await once(fanout, opts, v);
    };

    // (b) List the breweries in one run, get one by id (fields in the list rows) in the next.
    const list = plan('brew:Brewery()');
    const get = plan('brew:Brewery("b-3")[name, city]');
    const aged = new SessionGraphs({ ...DEFAULT_LIMITS, graphMaxAgeMs: 60_000 }, Date.now);
    const zero = new SessionGraphs({ ...DEFAULT_LIMITS, graphMaxAgeMs: 0 }, Date.now);
    const b: Variant[] = [
      { label: 'get run, max age 60 s', calls: [], ms: [] },
      { label: 'get run, max age 0', calls: [], ms: [] },
    ];
    const twoRuns = async (i: number, round: number, v?: Variant) => {
      const graphs = i === 0 ? aged : zero;
      const key = { prompt_hash: 'bench', session: `b${round}`, entity_writes: {} };
      await once(list, { graph: await graphs.view(key) });
      await once(get, { graph: await graphs.view(key) }, v);
    };

    for (let round = 0; round < WARMUP + ROUNDS; round++) {
      const keep = round >= WARMUP;
      for (const i of round % 2 ? [1, 0] : [0, 1]) await fanRun(i, round, keep ? a[i] : undefined);
      for (const i of round % 2 ? [1, 0] : [0, 1]) await twoRuns(i, round, keep ? b[i] : undefined);
    }

    const metrics: Metric[] = [];
    for (const v of [...a, ...b]) {
      metrics.push({ label: `${v.label}: vendor calls`, value: median(v.calls), unit: 'count' });
      const sorted = [...v.ms].sort((x, y) => x - y);
      metrics.push({
        label: `${v.label}: p50`,
        value: median(v.ms),
        unit: 'ms',
        note: `min ${sorted[0]!.toFixed(2)} ms, max ${sorted[sorted.length - 1]!.toFixed(2)} ms, n=${v.ms.length}`,
      });
    }
    const callsOf = (v: Variant) => v.calls.reduce((s, x) => s + x, 0) / v.calls.length;
    const ratio = callsOf(a[0]!) / callsOf(a[1]!);
    const [p50a, p50aOff, p50b, p50bZero] = [...a, ...b].map((v) => median(v.ms)) as [number, number, number, number];
    return {
      metrics,
      checks: [
        {
          target: 'the graph saves vendor calls on repeated rows (fan-out: calls with ÷ without ≤ 0.3)',
          pass: ratio <= 0.3,
          actual: `${callsOf(a[0]!)} ÷ ${callsOf(a[1]!)} = ${ratio.toFixed(2)}`,
        },
        {
          target: 'fan-out latency with the graph ≤ latency without',
          pass: p50a <= p50aOff,
          actual: `p50 ${p50a.toFixed(2)} ms vs ${p50aOff.toFixed(2)} ms`,
        },
        {
          target: 'list then get across runs: the get with max age 60 s makes no vendor call and is no slower',
          pass: callsOf(b[0]!) === 0 && callsOf(b[1]!) === 1 && p50b <= p50bZero,
          actual: `${callsOf(b[0]!)} vs ${callsOf(b[1]!)} calls, p50 ${p50b.toFixed(2)} ms vs ${p50bZero.toFixed(2)} ms`,
        },
      ],
    };
  } finally {
    await http.close();
    server.closeAllConnections();
    server.close();
  }
}
