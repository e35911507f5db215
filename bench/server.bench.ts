/**
 * The HTTP server end to end: a clean one-step read of 25 rows, `POST /execute/{ph}/{s}` with
 * the program `e1(limit=25)` (Accept: application/json), against the same request made directly
 * to the vendor (the exact request target svc sends, seen by the vendor), with autocannon.
 *
 * The vendor (json-server demo vendor) and svc each run in a child process
 * (`bench/serve-child.ts`); autocannon runs here. In one process, the load generator, svc and the
 * vendor share one event loop, so an svc request would pay for the vendor's and autocannon's work
 * on the same thread; `SVC_BENCH_INPROCESS=1` runs that arrangement for comparison
 * (docs/benchmarks.md has the figures of both).
 *
 * Three sides (direct, svc with the same program text, svc-new with a new text every request)
 * and two loads, interleaved in rounds (the order reversed every other round) to spread the
 * machine's noise: 1 connection for latency (added p50 = svc p50 - direct p50) and 10 connections
 * for throughput. Targets: svc throughput at least 50 % of direct; svc adds under 1 ms to the p50
 * latency (checked for both svc sides).
 */
import autocannon from 'autocannon';
import { median, type Benchmark, type BenchResult, type Check, type Metric } from './harness.js';
import { cpuMs, startChild, startInProcess, type Child } from './processes.js';

export const benchmark: Benchmark = {
  name: 'server',
  title: 'HTTP: one-step read of 25 rows through svc vs the same request to the vendor (autocannon)',
  run,
};

const PROGRAM = 'e1(limit=25)';
const ROWS = 25;
/** Connections of the latency and of the throughput load. */
const LATENCY_CONNECTIONS = 1;
const THROUGHPUT_CONNECTIONS = 10;
/** Seconds of one autocannon run; rounds of (direct, svc) pairs per load. */
const SECONDS = 3;
const ROUNDS = 5;
const WARMUP_SECONDS = 2;
/** Pause after each run before reading the servers' counters. */
const SETTLE_MS = 250;

/**
 * `svc` sends the same program text every time (the request: a session's plans are cached
 * by program text, so it compiles once); `svc-new` appends a different comment to every request,
 * so every request is compiled (no cache hit): what a program the session has not run before costs.
 */
type Side = 'direct' | 'svc' | 'svc-new';

interface Sample {
  side: Side;
  connections: number;
  /** 2xx answers per second. */
  rps: number;
  ok: number;
  latencies: number[];
  non2xx: number;
  errors: number;
  timeouts: number;
  /** CPU ms of each server process per 2xx answer during the run. */
  vendorCpu: number;
  svcCpu: number;
  /** Requests the vendor received during the run. */
  vendorRequests: number;
  /** Medians (ms) inside the servers: vendor arrival -> answer end; svc arrival -> answer end; svc's vendor call. */
  vendorHandler: number;
  svcHandler: number;
  svcCall: number;
}

interface Target {
  side: Side;
  opts: autocannon.Options;
}

/** One autocannon run, with exact (float) response times from the `response` events. */
function cannon(opts: autocannon.Options): Promise<{ result: autocannon.Result; latencies: number[] }> {
  const latencies: number[] = [];
  return new Promise((resolve, reject) => {
    const instance = autocannon(opts, (err, result) => (err ? reject(err as Error) : resolve({ result, latencies })));
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
    });
  });
}

async function measure(t: Target, connections: number, seconds: number, vendor: Child, svc: Child): Promise<Sample> {
  const [v0, s0] = [await vendor.usage(), await svc.usage()];
  const { result, latencies } = await cannon({ ...t.opts, connections, duration: seconds });
  // Let requests still in flight when autocannon stopped finish (svc completes its vendor call),
  // so they count in this run and not the next.
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  const [v1, s1] = [await vendor.usage(), await svc.usage()];
  const ok = result['2xx'];
  return {
    side: t.side,
    connections,
    rps: ok / result.duration,
    ok,
    latencies,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    vendorCpu: cpuMs(v0, v1) / Math.max(1, ok),
    svcCpu: cpuMs(s0, s1) / Math.max(1, ok),
    vendorRequests: v1.requests - v0.requests,
    vendorHandler: v1.window.handlerP50,
    svcHandler: s1.window.handlerP50,
    svcCall: s1.window.outgoingP50,
  };
}

async function json(res: Response): Promise<unknown> {
  const text = await res.text();
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new Error(`not JSON (${res.status}): ${text.slice(0, 200)}`);
  }
}

/**
 * Open the session, run the program once and check the answer (200, 25 rows, exactly one vendor
 * request); the request target the vendor saw becomes the direct request. Throws when wrong.
 */
let fresh = 0;

async function prepare(
  vendor: Child,
  svc: Child,
): Promise<{ svcTarget: Target; svcNewTarget: Target; directTarget: Target; target: string }> {
  const open = await fetch(`${svc.url}/execute`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ entry_id: 'brewery' }),
  });
  const session = (await json(open)) as { prompt_hash?: string; session?: string };
  if (open.status !== 201 || !session.prompt_hash || !session.session)
    throw new Error(`POST /execute answered ${open.status}`);
  const path = `/execute/${session.prompt_hash}/${session.session}`;
  const headers = { 'content-type': 'text/plain', accept: 'application/json' };
  const before = await vendor.usage();
  const res = await fetch(svc.url + path, { method: 'POST', headers, body: PROGRAM });
  const answer = (await json(res)) as {
    rows?: Array<{ id: string }>;
    count?: number;
    _meta?: { svc?: { run_id?: string } };
  };
  const after = await vendor.usage();
  if (res.status !== 200 || answer.rows?.length !== ROWS || answer.count !== ROWS)
    throw new Error(`svc answered ${res.status} with ${answer.rows?.length} rows, want 200 and ${ROWS}`);
  if (after.requests - before.requests !== 1)
    throw new Error(`one program run made ${after.requests - before.requests} vendor requests, want 1`);
  const target = after.lastTargets[after.lastTargets.length - 1]!;
  const direct = await fetch(vendor.url + target, { headers: { accept: 'application/json' } });
  const rows = (await json(direct)) as Array<{ id: string }>;
  if (direct.status !== 200 || !Array.isArray(rows) || rows.length !== ROWS)
    throw new Error(
      `the vendor answered ${direct.status} with ${Array.isArray(rows) ? rows.length : 'no'} rows for ${target}`,
    );
  if (rows.map((r) => r.id).join() !== answer.rows.map((r) => r.id).join())
    throw new Error('svc and the vendor returned different rows');
  return {
    target,
    svcTarget: { side: 'svc', opts: { url: svc.url + path, method: 'POST', headers, body: PROGRAM } },
    svcNewTarget: {
      side: 'svc-new',
      opts: {
        url: svc.url + path,
        requests: [{ method: 'POST', headers, setupRequest: (r) => ({ ...r, body: `${PROGRAM} # ${++fresh}` }) }],
      },
    },
    directTarget: {
      side: 'direct',
      opts: { url: vendor.url + target, method: 'GET', headers: { accept: 'application/json' } },
    },
  };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

interface Summary {
  rps: number;
  rpsRounds: number[];
  p50: number;
  p99: number;
  ok: number;
  vendorCpu: number;
  svcCpu: number;
  vendorHandler: number;
  svcHandler: number;
  svcCall: number;
}

function summarize(samples: Sample[]): Summary {
  const lat = samples.flatMap((s) => s.latencies).sort((a, b) => a - b);
  return {
    rps: median(samples.map((s) => s.rps)),
    rpsRounds: samples.map((s) => s.rps),
    p50: percentile(lat, 50),
    p99: percentile(lat, 99),
    ok: samples.reduce((n, s) => n + s.ok, 0),
    vendorCpu: median(samples.map((s) => s.vendorCpu)),
    svcCpu: median(samples.map((s) => s.svcCpu)),
    vendorHandler: median(samples.map((s) => s.vendorHandler)),
    svcHandler: median(samples.map((s) => s.svcHandler)),
    svcCall: median(samples.map((s) => s.svcCall)),
  };
}

const fmt = (ms: number) => `${ms.toFixed(2)} ms`;
const rate = (x: number) => Math.round(x).toLocaleString('en');

/** SVC_BENCH_INPROCESS=1: both servers in this process, for comparison (CPU figures are then the whole process's). */
const INPROCESS = !!process.env.SVC_BENCH_INPROCESS;

async function run(): Promise<BenchResult> {
  const start = INPROCESS ? startInProcess : startChild;
  const vendor = await start('vendor');
  let svc: Child | undefined;
  try {
    svc = await start('svc', [vendor.url]);
    const { svcTarget, svcNewTarget, directTarget, target } = await prepare(vendor, svc);
    for (const t of [directTarget, svcTarget, svcNewTarget])
      await measure(t, THROUGHPUT_CONNECTIONS, WARMUP_SECONDS, vendor, svc);
    const samples: Sample[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 ? [svcTarget, svcNewTarget, directTarget] : [directTarget, svcNewTarget, svcTarget];
      for (const connections of [LATENCY_CONNECTIONS, THROUGHPUT_CONNECTIONS]) {
        for (const t of order) samples.push(await measure(t, connections, SECONDS, vendor, svc));
      }
    }
    const pick = (side: Side, connections: number) =>
      summarize(samples.filter((s) => s.side === side && s.connections === connections));
    const dl = pick('direct', LATENCY_CONNECTIONS);
    const sl = pick('svc', LATENCY_CONNECTIONS);
    const dt = pick('direct', THROUGHPUT_CONNECTIONS);
    const st = pick('svc', THROUGHPUT_CONNECTIONS);
    const nl = pick('svc-new', LATENCY_CONNECTIONS);
    const nt = pick('svc-new', THROUGHPUT_CONNECTIONS);
    const addedNew = nl.p50 - dl.p50;
    const newRatio = median(dt.rpsRounds.map((d, i) => nt.rpsRounds[i]! / d));
    // Each round's svc run against the direct run next to it (same machine conditions); the median of those.
    const pairRatios = dt.rpsRounds.map((d, i) => st.rpsRounds[i]! / d);
    const ratio = median(pairRatios);
    const added = sl.p50 - dl.p50;
    const failures = samples.reduce((n, s) => n + s.non2xx + s.errors + s.timeouts, 0);
    // Requests in flight when autocannon stops still reach the vendor (and count): at most one per connection.
    const svcSamples = samples.filter((s) => s.side !== 'direct');
    const extraVendor = svcSamples.map((s) => s.vendorRequests - s.ok);
    const oneCall = extraVendor.every((x, i) => x >= 0 && x <= svcSamples[i]!.connections);
    const rounds = (xs: number[]) => xs.map(rate).join(', ');
    const metrics: Metric[] = [
      ...(INPROCESS
        ? [
            {
              label: 'arrangement',
              value: 1,
              unit: 'count' as const,
              note: 'SVC_BENCH_INPROCESS: autocannon, svc and the vendor in one process; CPU figures are the whole process',
            },
          ]
        : []),
      {
        label: `direct req/s (${THROUGHPUT_CONNECTIONS} conn)`,
        value: Math.round(dt.rps),
        unit: 'count',
        note: `median of ${ROUNDS} runs of ${SECONDS} s: ${rounds(dt.rpsRounds)}; p50 ${fmt(dt.p50)}, p99 ${fmt(dt.p99)}`,
      },
      {
        label: `svc req/s (${THROUGHPUT_CONNECTIONS} conn)`,
        value: Math.round(st.rps),
        unit: 'count',
        note: `${rounds(st.rpsRounds)}; p50 ${fmt(st.p50)}, p99 ${fmt(st.p99)}`,
      },
      {
        label: 'svc / direct throughput',
        value: Number(ratio.toFixed(2)),
        unit: 'count',
        note: `median of the rounds' ratios ${pairRatios.map((x) => x.toFixed(2)).join(', ')}`,
      },
      {
        label: `direct p50 (${LATENCY_CONNECTIONS} conn)`,
        value: dl.p50,
        unit: 'ms',
        note: `p99 ${fmt(dl.p99)}; ${rate(dl.rps)} req/s; ${dl.ok} answers`,
      },
      {
        label: `svc p50 (${LATENCY_CONNECTIONS} conn)`,
        value: sl.p50,
        unit: 'ms',
        note: `p99 ${fmt(sl.p99)}; ${rate(sl.rps)} req/s; ${sl.ok} answers`,
      },
      { label: 'added p50 (svc - direct)', value: added, unit: 'ms', note: `p99 ${fmt(sl.p99 - dl.p99)} added` },
      {
        label: 'new program every request',
        value: addedNew,
        unit: 'ms',
        note: `added p50, no compile cache hit (svc p50 ${fmt(nl.p50)}, p99 ${fmt(nl.p99)}); throughput ${newRatio.toFixed(2)} of direct (${rate(nt.rps)} req/s)`,
      },
      // Where the added latency goes (1 connection, medians inside the processes).
      {
        label: '  vendor: arrival to answer',
        value: dl.vendorHandler,
        unit: 'ms',
        note: `direct runs; ${fmt(sl.vendorHandler)} in svc runs (json-server 0.17 waits on two 1 ms timers before every answer)`,
      },
      {
        label: '  svc: vendor call (undici)',
        value: sl.svcCall,
        unit: 'ms',
        note: `the vendor's time + ${fmt(sl.svcCall - sl.vendorHandler)} of the svc -> vendor hop`,
      },
      {
        label: '  svc: arrival to answer',
        value: sl.svcHandler,
        unit: 'ms',
        note: `svc's own share (arrival to answer minus the vendor call): ${fmt(sl.svcHandler - sl.svcCall)}`,
      },
      {
        label: '  client <-> server hop',
        value: sl.p50 - sl.svcHandler,
        unit: 'ms',
        note: `svc; ${fmt(dl.p50 - dl.vendorHandler)} direct (client p50 minus the server's arrival to answer)`,
      },
      {
        label: 'vendor CPU per request',
        value: dt.vendorCpu * 1000,
        unit: 'us',
        note: `direct at ${THROUGHPUT_CONNECTIONS} conn; ${(dl.vendorCpu * 1000).toFixed(0)} µs at ${LATENCY_CONNECTIONS} conn`,
      },
      {
        label: 'svc CPU per request',
        value: st.svcCpu * 1000,
        unit: 'us',
        note: `svc process at ${THROUGHPUT_CONNECTIONS} conn (the vendor's share: ${(st.vendorCpu * 1000).toFixed(0)} µs); ${(sl.svcCpu * 1000).toFixed(0)} µs at ${LATENCY_CONNECTIONS} conn`,
      },
      {
        label: 'rows per answer',
        value: ROWS,
        unit: 'count',
        note: `both sides; svc sends GET ${target} (the direct request)`,
      },
    ];
    const checks: Check[] = [
      {
        target: 'every request answered 2xx (no non-2xx, errors or timeouts)',
        pass: failures === 0,
        actual: `${failures} failed of ${samples.reduce((n, s) => n + s.ok, 0) + failures}`,
      },
      {
        target: 'one vendor request per svc request',
        pass: oneCall,
        actual: `vendor requests - svc answers per run: ${extraVendor.join(', ')} (in flight at the end: up to one per connection)`,
      },
      {
        target: `svc throughput at least 50 % of direct (${THROUGHPUT_CONNECTIONS} connections)`,
        pass: ratio >= 0.5,
        actual: `ratio ${ratio.toFixed(2)} (medians ${rate(st.rps)} vs ${rate(dt.rps)} req/s)`,
      },
      {
        target: `svc adds under 1 ms to the p50 latency (${LATENCY_CONNECTIONS} connection)`,
        pass: added < 1,
        actual: `${fmt(added)} added (${fmt(sl.p50)} vs ${fmt(dl.p50)})`,
      },
      {
        target: `svc adds under 1 ms to the p50 latency with a new program text every request`,
        pass: addedNew < 1,
        actual: `${fmt(addedNew)} added (${fmt(nl.p50)} vs ${fmt(dl.p50)})`,
      },
    ];
    return { metrics, checks };
  } finally {
    await svc?.stop();
    await vendor.stop();
  }
}
