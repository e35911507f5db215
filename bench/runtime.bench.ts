/**
 * The runtime's own cost per vendor call: a one-step read of 25 rows through executePlan vs the
 * same request made directly with the same HTTP client (undici pool) and JSON.parse, against a
 * fast local vendor (node:http on 127.0.0.1 answering a fixed 25-row JSON page), interleaved in
 * one run. Target: the runtime adds under 0.2 ms per vendor call.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { compileProgram } from '../compiler/index.js';
import { compileSource, Registry } from '../pack/index.js';
import { executePlan, PooledHttpClient, buildRequest } from '../runtime/index.js';
import type { Benchmark, BenchResult } from './harness.js';

export const benchmark: Benchmark = {
  name: 'runtime',
  title: 'one-step read of 25 rows: executePlan vs a direct call with the same client',
  run,
};

const CATALOG = `
catalog: {entry_id: fast, version: 1, label: Fast vendor, description: A local vendor for benchmarks, backend: {url: "http://127.0.0.1:1"}}
entities:
  Item:
    description: An item.
    fields: {id: integer, name: string, price: number, stock: integer, color: string, active: boolean, created: datetime, note: string}
capabilities:
  listItems: {kind: query, entity: Item, description: Items., params: [color, active]}
  getItem: {kind: get, entity: Item, description: One item., params: [id]}
mappings:
  listItems:
    method: GET
    path: /items
    pagination: {style: page, page_param: page, size_param: per_page, page_size: 25}
    response: {path: data, total: {path: total}}
  getItem: GET /items/{id}
`;

function page(): string {
  const data = Array.from({ length: 25 }, (_, i) => ({
    id: i + 1,
    name: `item ${i + 1}`,
    price: 9.5 + i,
    stock: 100 - i,
    color: 'red',
    active: true,
    created: '2025-01-02T03:04:05Z',
    note: 'x'.repeat(40),
    extra: 'dropped',
  }));
  return JSON.stringify({ data, total: 25 });
}

async function run(): Promise<BenchResult> {
  const body = page();
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const http = new PooledHttpClient();
  try {
    const c = compileSource([{ file: 'fast.yaml', text: CATALOG }]);
    if (!c.cgs || !c.cgs_hash) throw new Error(JSON.stringify(c.diagnostics));
    const registry = new Registry([
      {
        entry_id: 'fast',
        label: c.cgs.label,
        tags: [],
        version: 1,
        cgs: c.cgs,
        cgs_hash: c.cgs_hash,
        base_url: url,
        artifact: 'fast',
      },
    ]);
    const compiled = compileProgram('fast:Item(color="red", active=true)', { registry });
    if (compiled.kind !== 'plan') throw new Error('benchmark program does not compile');
    const cap = registry.capability('fast', 'listItems')!;
    const req = buildRequest(url, cap, { color: 'red', active: true }, { query: { page: '1', per_page: '25' } });
    const direct = async () => {
      const res = await http.request(req, { maxBodyBytes: 10 * 1024 * 1024 });
      return (JSON.parse(res.body.toString('utf8')) as { data: unknown[] }).data.length;
    };
    const viaSvc = async () => {
      const r = await executePlan(compiled.plan, registry, { http, env: {} });
      if (r.status !== 'succeeded' || r.returns[0]!.rows.length !== 25)
        throw new Error(`run failed: ${JSON.stringify(r.errors)}`);
      return r.returns[0]!.rows.length;
    };
    const n = 500;
    const batches = 9;
    const d: number[] = [];
    const s: number[] = [];
    for (let i = 0; i < n; i++) {
      await direct();
      await viaSvc();
    }
    for (let b = 0; b < batches; b++) {
      for (const [fn, out] of (b % 2
        ? [
            [viaSvc, s],
            [direct, d],
          ]
        : [
            [direct, d],
            [viaSvc, s],
          ]) as Array<[() => Promise<number>, number[]]>) {
        const t0 = process.hrtime.bigint();
        for (let i = 0; i < n; i++) await fn();
        out.push(Number(process.hrtime.bigint() - t0) / 1000 / n);
      }
    }
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
    const dm = med(d);
    const sm = med(s);
    const added = sm - dm;
    return {
      metrics: [
        {
          label: 'direct call (undici + JSON.parse)',
          value: dm,
          unit: 'us',
          note: `${Math.round(1e6 / dm).toLocaleString('en')} calls/s`,
        },
        {
          label: 'executePlan (same client)',
          value: sm,
          unit: 'us',
          note: `${Math.round(1e6 / sm).toLocaleString('en')} runs/s; ratio ${(sm / dm).toFixed(2)}`,
        },
        { label: 'added by the runtime', value: added, unit: 'us' },
      ],
      checks: [
        {
          target: 'the runtime adds under 0.2 ms per vendor call',
          pass: added < 200,
          actual: `${added.toFixed(1)} µs added (ratio ${(sm / dm).toFixed(2)})`,
        },
      ],
    };
  } finally {
    await http.close();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
}
