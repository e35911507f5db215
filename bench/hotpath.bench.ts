/**
 * The hot path at the floor (issue 21): what svc adds to a clean 25-row read, next to what the
 * cheapest intermediaries add. Six targets, on four servers each in its own process (svc's three
 * targets are one svc), all sent the same read by the same client code (an undici Pool per target):
 *
 *   direct      GET <the vendor target svc sends> on the demo vendor (json-server)
 *   bare        the same target through `bench/forward-bare.ts` (undici pool, body piped back)
 *   parse+TOON  the same target through `bench/forward-toon.ts` (JSON parsed, rows encoded as TOON)
 *   svc TOON    POST /execute/{ph}/{s} `e3` (no Accept: the default format, TOON)
 *   svc JSON    the same with Accept: application/json
 *   svc MCP     the same read as an agent sends it: a tools/call of `svc` on /mcp (`hotpath-mcp.ts`)
 *
 * Warm-up first: every target gets 10 connections for 2 s (thousands of reads), so each server is
 * measured as it runs in production, its code compiled by the JIT: 50 reads after its start, a
 * svc process adds about 0.22 ms more to the p50 than the same build warmed up, a bare forwarder
 * about 0.25 ms more (each measured side by side with a warmed-up twin).
 * Latency: 500 sequential rounds (after 50 warm-up rounds), one request to each target per round,
 * in a new random order every round; added p50 = p50(target) - p50(direct). Load: 10 connections per
 * target for 3 s, 3 rounds (order reversed every other round); throughput ratio = median of the
 * rounds' svc ÷ bare ratios; CPU per request = each server process's CPU time (/proc/<pid>/stat)
 * over the run ÷ the answers it gave.
 *
 * `SVC_BENCH_BASELINE=<dir>` adds svc from another build (`<dir>/dist/bench/serve-child.js`, e.g.
 * `git archive HEAD` built in /tmp) as two more targets, "base TOON" and "base JSON": an A/B of a
 * change side by side in one run, which a shared machine's noise does not blur.
 * `SVC_BENCH_BASE_NODE_ARGS="<flags>"` starts that base with node flags: with `SVC_BENCH_BASELINE`
 * naming this very build, an A/B of a runtime setting (`--max-semi-space-size=64`).
 */
import { join } from 'node:path';
import { Pool } from 'undici';
import { median, shuffler, type Benchmark, type BenchResult, type Check, type Metric } from './harness.js';
import { mcpRows, mcpTarget } from './hotpath-mcp.js';
import { procCpuMs, startChild, startScript, type Child, type Script } from './processes.js';

export const benchmark: Benchmark = {
  name: 'hotpath',
  title: 'hot path: a clean 25-row read through svc vs a bare and a parse-and-TOON forwarder (issue 21)',
  run,
};

const PROGRAM = 'e3';
/** What `e3` reads (`POST /execute` with no seeds numbers every brewery entity): the MCP target's seed. */
const SEED = { api: 'brewery', entity: 'Review' };
const ROWS = 25;
const ROUNDS = 500;
const WARMUP_ROUNDS = 50;
const LOAD_CONNECTIONS = 10;
const LOAD_SECONDS = 3;
/** Load per target before any measurement: JIT warm-up (see the module comment). */
const WARMUP_LOAD_SECONDS = 2;
/** `SVC_BENCH_HOTPATH_ROUNDS` raises it (CPU per request moves by ±30 % between runs on a shared machine). */
const LOAD_ROUNDS = Number(process.env.SVC_BENCH_HOTPATH_ROUNDS) || 3;

/** One target: a server process and the request the client sends it. */
export interface Target {
  name: string;
  /** The process whose CPU is charged to this target (the vendor's is reported apart). */
  pid: number;
  origin: string;
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  /** The request body, or what makes each request's (MCP: a new JSON-RPC id per call). */
  body?: string | (() => string);
}

/** The body of `t`'s next request. */
export const bodyOf = (t: Target): string | null => (typeof t.body === 'function' ? t.body() : (t.body ?? null));

/** Send one request with `pool` (the same code for every target); resolves to the body text. */
export async function send(pool: Pool, t: Target): Promise<string> {
  const res = await pool.request({ method: t.method, path: t.path, headers: t.headers, body: bodyOf(t) });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`${t.name} answered ${res.statusCode}: ${text.slice(0, 200)}`);
  return text;
}

/** Rows in an answer: a JSON array, a JSON object with `rows`, a TOON `rows[N]{...}:` header, or MCP's. */
function rowCount(text: string): number {
  const toon = /^rows\[(\d+)\]/m.exec(text);
  if (toon) return Number(toon[1]);
  const v = JSON.parse(text) as unknown;
  if (Array.isArray(v)) return v.length;
  return 'jsonrpc' in (v as object) ? mcpRows(text) : ((v as { rows?: unknown[] }).rows?.length ?? -1);
}

/**
 * Open a session, run the program once, and take the vendor target it sent (the request of every
 * other target). Throws unless every target answers 200 with 25 rows.
 */
export async function prepareSvc(
  vendor: Child,
  svc: Child,
): Promise<{ path: string; target: string; runId: string | undefined }> {
  const open = await fetch(`${svc.url}/execute`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ entry_id: 'brewery' }),
  });
  const session = (await open.json()) as { prompt_hash?: string; session?: string };
  if (open.status !== 201 || !session.prompt_hash) throw new Error(`POST /execute answered ${open.status}`);
  const path = `/execute/${session.prompt_hash}/${session.session}`;
  const before = await vendor.usage();
  const res = await fetch(svc.url + path, {
    method: 'POST',
    headers: { 'content-type': 'text/plain', accept: 'application/json' },
    body: PROGRAM,
  });
  const answer = (await res.json()) as { rows?: unknown[]; _meta?: { svc?: { run_id?: string } } };
  const after = await vendor.usage();
  if (res.status !== 200 || answer.rows?.length !== ROWS)
    throw new Error(`svc answered ${res.status} with ${answer.rows?.length} rows, want 200 and ${ROWS}`);
  if (after.requests - before.requests !== 1) throw new Error('one program run must make one vendor request');
  return { path, target: after.lastTargets[after.lastTargets.length - 1]!, runId: answer._meta?.svc?.run_id };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/**
 * Sequential rounds: one request to each target per round, in a new random order every round (a
 * fixed rotation would always put the same target before another, and a request runs faster
 * right after one to the same process: svc JSON after svc TOON).
 */
async function latencies(targets: Target[], pools: Pool[]): Promise<number[][]> {
  // In round order (not sorted): a round's times of two targets are paired.
  const out = targets.map(() => [] as number[]);
  const shuffle = shuffler(21);
  const order = targets.map((_, i) => i);
  for (let r = 0; r < WARMUP_ROUNDS + ROUNDS; r++) {
    shuffle(order);
    for (const i of order) {
      const t0 = performance.now();
      await send(pools[i]!, targets[i]!);
      if (r >= WARMUP_ROUNDS) out[i]!.push(performance.now() - t0);
    }
  }
  return out;
}

interface Load {
  rps: number;
  /** CPU ms of the target's process and of the vendor per answer. */
  cpu: number;
  vendorCpu: number;
}

/** `connections` loops sending back to back for `seconds`; CPU from /proc over the same window. */
export async function load(t: Target, pool: Pool, vendorPid: number, connections: number, seconds: number) {
  const c0 = procCpuMs(t.pid);
  const v0 = procCpuMs(vendorPid);
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  let ok = 0;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < end) {
        await send(pool, t);
        ok++;
      }
    }),
  );
  const dt = (performance.now() - t0) / 1000;
  const cpu = procCpuMs(t.pid) - c0;
  const vendorCpu = procCpuMs(vendorPid) - v0;
  return { rps: ok / dt, cpu: cpu / ok, vendorCpu: vendorCpu / ok, ok } satisfies Load & { ok: number };
}

/** The svc children's environment: serve-child subscribes to no diagnostics channel. */
const QUIET = { SVC_BENCH_TIMINGS: '0' };

const ms = (x: number) => `${x.toFixed(2)} ms`;

async function run(): Promise<BenchResult> {
  const vendor = await startChild('vendor');
  const stops: Array<() => Promise<void>> = [() => vendor.stop()];
  try {
    // svc without the diagnostics subscribers of serve-child (SVC_BENCH_TIMINGS=0), as it runs in production.
    const svc = await startChild('svc', [vendor.url], undefined, QUIET);
    stops.unshift(() => svc.stop());
    const bare: Script = await startScript('forward-bare', [vendor.url]);
    stops.unshift(() => bare.stop());
    const toonFwd: Script = await startScript('forward-toon', [vendor.url]);
    stops.unshift(() => toonFwd.stop());
    const { path, target } = await prepareSvc(vendor, svc);
    const baseline = process.env.SVC_BENCH_BASELINE;
    const baseArgs = process.env.SVC_BENCH_BASE_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
    const base = baseline
      ? await startChild('svc', [vendor.url], join(baseline, 'dist', 'bench'), QUIET, baseArgs)
      : undefined;
    if (base) stops.unshift(() => base.stop());
    const basePath = base ? (await prepareSvc(vendor, base)).path : '';
    const get = (name: string, url: string, pid: number): Target => ({
      name,
      pid,
      origin: url,
      method: 'GET',
      path: target,
      headers: { accept: 'application/json' },
    });
    const svcTarget = (name: string, headers: Record<string, string>, server = svc, at = path): Target => ({
      name,
      pid: server.pid,
      origin: server.url,
      method: 'POST',
      path: at,
      headers: { 'content-type': 'text/plain', ...headers },
      body: PROGRAM,
    });
    const targets: Target[] = [
      get('direct', vendor.url, vendor.pid),
      get('bare forwarder', bare.url, bare.pid),
      get('parse+TOON forwarder', toonFwd.url, toonFwd.pid),
      svcTarget('svc TOON', {}),
      svcTarget('svc JSON', { accept: 'application/json' }),
      ...(base
        ? [
            svcTarget('base TOON', {}, base, basePath),
            svcTarget('base JSON', { accept: 'application/json' }, base, basePath),
          ]
        : []),
      await mcpTarget('svc MCP', vendor, svc, SEED, target, ROWS),
    ];
    const MCP = targets.length - 1;
    const seq = targets.map((t) => new Pool(t.origin, { connections: 1 }));
    for (let i = 0; i < targets.length; i++) {
      const n = rowCount(await send(seq[i]!, targets[i]!));
      if (n !== ROWS) throw new Error(`${targets[i]!.name} answered ${n} rows, want ${ROWS}`);
    }
    const warm = targets.map((t) => new Pool(t.origin, { connections: LOAD_CONNECTIONS }));
    for (let i = 0; i < targets.length; i++)
      await load(targets[i]!, warm[i]!, vendor.pid, LOAD_CONNECTIONS, WARMUP_LOAD_SECONDS);
    await Promise.all(warm.map((p) => p.close()));
    const rounds = await latencies(targets, seq);
    await Promise.all(seq.map((p) => p.close()));
    const lat = rounds.map((xs) => [...xs].sort((a, b) => a - b));
    const p50 = lat.map((xs) => percentile(xs, 50));
    /** The median over rounds of target `a`'s time minus `b`'s in the same round: steadier than p50(a) − p50(b). */
    const paired = (a: number, b: number) => median(rounds[a]!.map((x, r) => x - rounds[b]![r]!));
    const added = p50.map((x) => x - p50[0]!);
    /** Percentile `p` of target `a` minus the same of `b`: how the two distributions lie at their low end, middle and tail. */
    const gap = (a: number, b: number, p: number) => percentile(lat[a]!, p) - percentile(lat[b]!, p);

    const pools = targets.map((t) => new Pool(t.origin, { connections: LOAD_CONNECTIONS }));
    const loads: Load[][] = targets.map(() => []);
    for (let i = 0; i < targets.length; i++) await load(targets[i]!, pools[i]!, vendor.pid, LOAD_CONNECTIONS, 1);
    for (let r = 0; r < LOAD_ROUNDS; r++) {
      const order = targets.map((_, i) => i);
      if (r % 2) order.reverse();
      for (const i of order)
        loads[i]!.push(await load(targets[i]!, pools[i]!, vendor.pid, LOAD_CONNECTIONS, LOAD_SECONDS));
    }
    await Promise.all(pools.map((p) => p.close()));
    const rps = loads.map((ls) => median(ls.map((l) => l.rps)));
    const cpu = loads.map((ls) => median(ls.map((l) => l.cpu)));
    const vcpu = loads.map((ls) => median(ls.map((l) => l.vendorCpu)));
    const ratioTo = (i: number, base: number) => median(loads[i]!.map((l, r) => l.rps / loads[base]![r]!.rps));
    const BARE = 1;
    const TOONF = 2;
    const SVC_TOON = 3;
    const SVC_JSON = 4;

    const metrics: Metric[] = targets.map((t, i) => ({
      label: `${t.name} p50`,
      value: p50[i]!,
      unit: 'ms',
      note:
        i === 0
          ? `p90 ${ms(percentile(lat[i]!, 90))}; n=${ROUNDS}; GET ${target}`
          : `adds ${ms(added[i]!)}; p90 ${ms(percentile(lat[i]!, 90))} (adds ${ms(percentile(lat[i]!, 90) - percentile(lat[0]!, 90))})`,
    }));
    for (const i of [SVC_TOON, SVC_JSON])
      metrics.push({
        label: `${targets[i]!.name} − bare, paired`,
        value: paired(i, BARE),
        unit: 'ms',
        note: `median over ${ROUNDS} rounds of the difference within a round (p10s: ${ms(gap(i, BARE, 10))}, p50s: ${ms(gap(i, BARE, 50))}, p90s: ${ms(gap(i, BARE, 90))})`,
      });
    if (base)
      for (const i of [SVC_TOON, SVC_JSON])
        metrics.push({
          label: `A/B: ${targets[i]!.name} − ${targets[i + 2]!.name}, paired`,
          value: paired(i, i + 2),
          unit: 'ms',
          note: `median over ${ROUNDS} rounds; the base starts second (a first-started svc measured tens of µs slower)`,
        });
    const overHttp = paired(MCP, SVC_TOON);
    metrics.push({
      label: 'svc MCP − svc TOON, paired',
      value: overHttp,
      unit: 'ms',
      note: `median over ${ROUNDS} rounds (p50s: ${ms(added[MCP]! - added[SVC_TOON]!)}); − svc JSON ${ms(paired(MCP, SVC_JSON))}`,
    });
    for (let i = 0; i < targets.length; i++)
      metrics.push({
        label: `${targets[i]!.name} req/s (${LOAD_CONNECTIONS} conn)`,
        value: Math.round(rps[i]!),
        unit: 'count',
        note: `${i ? `${ratioTo(i, 0).toFixed(2)} of direct, ${ratioTo(i, BARE).toFixed(2)} of bare; ` : ''}CPU ${(cpu[i]! * 1000).toFixed(0)} µs/req${i ? `, vendor ${(vcpu[i]! * 1000).toFixed(0)} µs/req` : ''}; rounds ${loads[i]!.map((l) => Math.round(l.rps)).join(', ')}`,
      });
    const checks: Check[] = [];
    for (const i of [SVC_TOON, SVC_JSON]) {
      const name = targets[i]!.name;
      checks.push({
        target: `${name}: added p50 ≤ 0.5 ms over direct`,
        pass: added[i]! <= 0.5,
        actual: `${ms(added[i]!)} (bare forwarder ${ms(added[BARE]!)}, parse+TOON ${ms(added[TOONF]!)})`,
      });
      checks.push({
        target: `${name}: added p50 within 0.2 ms of the bare forwarder's`,
        pass: added[i]! - added[BARE]! <= 0.2,
        actual: `${ms(added[i]! - added[BARE]!)} more (${ms(added[i]!)} vs ${ms(added[BARE]!)})`,
      });
    }
    for (const i of [SVC_TOON, SVC_JSON]) {
      checks.push({
        target: `${targets[i]!.name}: CPU per request ≤ 0.4 ms (${LOAD_CONNECTIONS} conn)`,
        pass: cpu[i]! <= 0.4,
        actual: `${ms(cpu[i]!)} (${(cpu[i]! / cpu[TOONF]!).toFixed(1)}× parse+TOON's ${ms(cpu[TOONF]!)}; bare ${ms(cpu[BARE]!)})`,
      });
      checks.push({
        target: `${targets[i]!.name}: CPU per request ≤ 1.5× the parse+TOON forwarder's (${LOAD_CONNECTIONS} conn)`,
        pass: cpu[i]! <= 1.5 * cpu[TOONF]!,
        actual: `${(cpu[i]! / cpu[TOONF]!).toFixed(2)}× (${ms(cpu[i]!)} vs ${ms(cpu[TOONF]!)})`,
      });
      checks.push({
        target: `${targets[i]!.name}: throughput ≥ 0.9 of the bare forwarder (${LOAD_CONNECTIONS} conn)`,
        pass: ratioTo(i, BARE) >= 0.9,
        actual: `${ratioTo(i, BARE).toFixed(2)} (${Math.round(rps[i]!)} vs ${Math.round(rps[BARE]!)} req/s)`,
      });
    }
    checks.push({
      // Issue 43: MCP goes through the SDK's transport only, and may add up to 1.5 ms over HTTP.
      target: `svc MCP: a read adds at most 1.5 ms over svc's HTTP read (default format; paired)`,
      pass: overHttp <= 1.5,
      actual: `${ms(overHttp)} (added over direct ${ms(added[MCP]!)} vs ${ms(added[SVC_TOON]!)}); CPU ${ms(cpu[MCP]!)} vs ${ms(cpu[SVC_TOON]!)} per request; throughput ${ratioTo(MCP, BARE).toFixed(2)} of bare's (HTTP ${ratioTo(SVC_TOON, BARE).toFixed(2)})`,
    });
    return { metrics, checks };
  } finally {
    for (const stop of stops) await stop();
  }
}
