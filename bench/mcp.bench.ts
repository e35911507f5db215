/**
 * The MCP surface end to end: the `svc` tool doing a fused clean read of 25 rows (`e1[id,name]`
 * on brewery:Beer, one vendor page) through the official SDK `Client` +
 * `StreamableHTTPClientTransport`, next to the same read over HTTP (`POST /execute/{ph}/{s}`,
 * text/plain program, Accept: application/json) and the same request sent straight to the vendor
 * (the exact request target svc sends, seen by the vendor).
 *
 * The vendor (json-server demo vendor) and svc each run in a child process
 * (`bench/serve-child.ts`, as for `server`); the clients run here, one call at a time (latency).
 * Besides the three reads, four floors, to tell where MCP's time goes:
 *   - `mcp-raw`: the same tools/call sent with plain `fetch` on a second MCP session (its answer
 *     read as text: JSON, or an SSE stream's last `data:` line): MCP without the SDK client;
 *   - `ping` / `ping-raw`: an MCP `ping` round trip through the SDK client / plain `fetch`: the
 *     protocol floor (transport, JSON-RPC, SSE framing; no tool, no vendor);
 *   - `health`: `GET /v1/health`, the HTTP floor of the same server;
 *   - `floor-mcp` / `floor-http`: svc's two answers, fixed, from a server without svc's code
 *     (`mcp-floor.ts`): through the SDK's transport and svc's web adapter / from plain node:http.
 *     Their difference is about what the SDK transport alone adds to a read of these rows (every
 *     MCP message, svc's tools/call included, goes through it).
 * Every side runs in blocks of BLOCK calls, in rounds (the order reversed every other round), so
 * all sides see the same machine. Target: the MCP read (SDK client) adds at most 1.5 ms to the p50
 * of the same read on HTTP; svc's own share of each is reported beside it.
 * `SVC_BENCH_BASELINE=<dir>`: an A/B against svc of another build, see `mcp-baseline.ts`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { baselineMetrics, ownShare } from './mcp-baseline.js';
import { floorCalls, rowIds, type FloorAnswers } from './mcp-floor.js';
import { median, type Benchmark, type BenchResult, type Check, type Metric } from './harness.js';
import { cpuMs, startChild, type Child } from './processes.js';

export const benchmark: Benchmark = {
  name: 'mcp',
  title: 'MCP: fused clean read of 25 rows via the SDK client vs HTTP vs the vendor directly (1 call at a time)',
  run,
};

const PROGRAM = 'e1[id,name]';
const SEED = { api: 'brewery', entity: 'Beer' };
const ROWS = 25;
/** Calls per block, measured rounds (every side once per round), warm-up rounds. */
const BLOCK = 50;
const ROUNDS = 12;
const WARMUP_ROUNDS = 2;
/** Target: what the MCP read (SDK client) may add to the p50 of the same read on HTTP. */
const TARGET_MS = 1.5;

export type Side = 'direct' | 'http' | 'mcp' | 'mcp-raw' | 'ping' | 'ping-raw' | 'health' | Floor;
type Floor = 'floor-mcp' | 'floor-http';
const FLOORS: Floor[] = ['floor-mcp', 'floor-http'];
const isFloor = (side: Side): side is Floor => side === 'floor-mcp' || side === 'floor-http';
const SIDES: Side[] = ['direct', 'http', 'mcp', 'mcp-raw', 'ping', 'ping-raw', 'health', ...FLOORS];
/** Sides whose call reads 25 rows from the vendor through svc (one vendor request each). */
const READS: Side[] = ['http', 'mcp', 'mcp-raw'];
/** Rows a side's call answers: the reads', direct's and the floors' (svc's answers, fixed) 25. */
const rowsOf = (side: Side) => (side === 'direct' || READS.includes(side) || isFloor(side) ? ROWS : 0);

/** One call; resolves to the ids of the rows it got (empty for the floors). */
type Call = () => Promise<Array<string | number>>;

interface Block {
  side: Side;
  latencies: number[];
  /** Answers without the expected rows. */
  bad: number;
  vendorRequests: number;
  /** CPU ms per call: svc process, vendor process, this (client) process. */
  svcCpu: number;
  vendorCpu: number;
  clientCpu: number;
  /** Medians (ms) inside the servers during the block. */
  svcHandler: number;
  svcCall: number;
  vendorHandler: number;
}

async function json(res: Response): Promise<any> {
  const text = await res.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`not JSON (${res.status}): ${text.slice(0, 200)}`);
  }
}

/** The JSON-RPC message of an MCP answer: plain JSON, or the last `data:` event of an SSE stream. */
function rpcMessage(contentType: string | null, text: string): any {
  if (!contentType?.startsWith('text/event-stream')) return JSON.parse(text);
  let data: string | undefined;
  for (const event of text.split('\n\n')) {
    const lines = event
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).replace(/^ /, ''));
    if (lines.length) data = lines.join('\n');
  }
  if (data === undefined) throw new Error(`an SSE answer without data: ${text.slice(0, 200)}`);
  return JSON.parse(data);
}

async function connect(url: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: 'svc-bench', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`));
  await client.connect(transport);
  return { client, transport };
}

interface Prepared {
  calls: Record<Exclude<Side, Floor>, Call>;
  target: string;
  /** Bytes of one answer's body: the vendor's, svc's over HTTP, svc's over MCP (an SSE event). */
  bytes: { direct: number; http: number; mcp: number };
  /** svc's answers as received (the floor server's answers). */
  answers: FloorAnswers;
  close(): Promise<void>;
}

/**
 * Open the MCP and HTTP sessions, run the read once on each side and check it (25 rows, the same
 * ids everywhere, one vendor request per svc read); the request target the vendor saw becomes the
 * direct request. Throws when wrong.
 */
async function prepare(vendor: Child, svc: Child): Promise<Prepared> {
  const sdk = await connect(svc.url);
  // A second MCP session for the plain-fetch calls (its own JSON-RPC ids; the SDK client of it stays idle).
  const raw = await connect(svc.url);
  const close = async () => {
    for (const c of [sdk, raw]) {
      await c.transport.terminateSession().catch(() => undefined);
      await c.client.close().catch(() => undefined);
    }
  };
  try {
    const ctx = (await sdk.client.callTool({
      name: 'svc_context',
      arguments: { intent: 'mcp benchmark', seeds: [SEED] },
    })) as CallToolResult;
    const ref = (ctx._meta?.svc as { logical_session_ref?: string } | undefined)?.logical_session_ref;
    if (ctx.isError || !ref) throw new Error(`svc_context failed: ${JSON.stringify(ctx.content).slice(0, 300)}`);
    const args = { logical_session_ref: ref, program: PROGRAM };

    const open = await fetch(`${svc.url}/execute`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ entry_id: SEED.api, seeds: [`${SEED.api}:${SEED.entity}`] }),
    });
    const session = (await json(open)) as { prompt_hash?: string; session?: string };
    if (open.status !== 201 || !session.prompt_hash || !session.session)
      throw new Error(`POST /execute answered ${open.status}`);
    const httpUrl = `${svc.url}/execute/${session.prompt_hash}/${session.session}`;
    const httpHeaders = { 'content-type': 'text/plain', accept: 'application/json' };

    const mcpUrl = `${svc.url}/mcp`;
    const rawHeaders = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': raw.transport.sessionId!,
      'mcp-protocol-version': raw.transport.protocolVersion!,
    };
    let id = 0;
    const rpc = async (method: string, params: Record<string, unknown>) => {
      const res = await fetch(mcpUrl, {
        method: 'POST',
        headers: rawHeaders,
        body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }),
      });
      const m = rpcMessage(res.headers.get('content-type'), await res.text());
      if (res.status !== 200 || m.error) throw new Error(`raw ${method} answered ${res.status}: ${JSON.stringify(m)}`);
      return m.result;
    };

    const calls: Omit<Record<Exclude<Side, Floor>, Call>, 'direct'> = {
      http: async () => {
        const res = await fetch(httpUrl, { method: 'POST', headers: httpHeaders, body: PROGRAM });
        return rowIds(((await json(res)) as { rows?: unknown }).rows);
      },
      mcp: async () => {
        const r = (await sdk.client.callTool({ name: 'svc', arguments: args })) as CallToolResult;
        return r.isError ? [] : rowIds((r.structuredContent as { rows?: unknown } | undefined)?.rows);
      },
      'mcp-raw': async () => {
        const r = (await rpc('tools/call', { name: 'svc', arguments: args })) as CallToolResult;
        return r.isError ? [] : rowIds((r.structuredContent as { rows?: unknown } | undefined)?.rows);
      },
      ping: async () => {
        await sdk.client.ping();
        return [];
      },
      'ping-raw': async () => {
        await rpc('ping', {});
        return [];
      },
      health: async () => {
        const res = await fetch(`${svc.url}/v1/health`, { headers: { accept: 'application/json' } });
        if (res.status !== 200) throw new Error(`GET /v1/health answered ${res.status}`);
        await res.arrayBuffer();
        return [];
      },
    };

    // Each read once: 25 rows, one vendor request, the same target and ids on every side.
    let target: string | undefined;
    let ids: string | undefined;
    for (const side of READS) {
      const before = await vendor.usage();
      const got = await calls[side as keyof typeof calls]();
      const after = await vendor.usage();
      if (got.length !== ROWS) throw new Error(`${side} answered ${got.length} rows, want ${ROWS}`);
      if (after.requests - before.requests !== 1)
        throw new Error(`one ${side} read made ${after.requests - before.requests} vendor requests, want 1`);
      const t = after.lastTargets[after.lastTargets.length - 1]!;
      if (target !== undefined && t !== target) throw new Error(`${side} sent ${t}, the others ${target}`);
      if (ids !== undefined && got.join() !== ids) throw new Error(`${side} returned other rows than the others`);
      target = t;
      ids = got.join();
    }
    const directUrl = vendor.url + target!;
    const direct: Call = async () => {
      const res = await fetch(directUrl, { headers: { accept: 'application/json' } });
      return rowIds(await json(res));
    };
    if ((await direct()).join() !== ids) throw new Error(`the vendor returned other rows for ${target}`);
    // One answer of each side as received (its size, and the floor server's answers; not timed).
    const answer = async (url: string, init: RequestInit) => (await fetch(url, init)).text();
    const texts = {
      direct: await answer(directUrl, { headers: { accept: 'application/json' } }),
      http: await answer(httpUrl, { method: 'POST', headers: httpHeaders, body: PROGRAM }),
      mcp: await answer(mcpUrl, {
        method: 'POST',
        headers: rawHeaders,
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: ++id,
          method: 'tools/call',
          params: { name: 'svc', arguments: args },
        }),
      }),
    };
    const bytes = {
      direct: Buffer.byteLength(texts.direct),
      http: Buffer.byteLength(texts.http),
      mcp: Buffer.byteLength(texts.mcp),
    };
    const type = texts.mcp.startsWith('{') ? 'application/json' : 'text/event-stream';
    const answers = { mcp: rpcMessage(type, texts.mcp).result as CallToolResult, http: texts.http };
    return { calls: { direct, ...calls }, target: target!, bytes, answers, close };
  } catch (e) {
    await close();
    throw e;
  }
}

async function block(side: Side, call: Call, vendor: Child, svc: Child): Promise<Block> {
  const [v0, s0] = [await vendor.usage(), await svc.usage()];
  const c0 = process.cpuUsage();
  const latencies: number[] = [];
  let bad = 0;
  const rows = rowsOf(side);
  for (let i = 0; i < BLOCK; i++) {
    const t0 = performance.now();
    const got = await call();
    latencies.push(performance.now() - t0);
    if (got.length !== rows) bad++;
  }
  const c1 = process.cpuUsage(c0);
  const [v1, s1] = [await vendor.usage(), await svc.usage()];
  return {
    side,
    latencies,
    bad,
    vendorRequests: v1.requests - v0.requests,
    svcCpu: cpuMs(s0, s1) / BLOCK,
    vendorCpu: cpuMs(v0, v1) / BLOCK,
    clientCpu: (c1.user + c1.system) / 1000 / BLOCK,
    svcHandler: s1.window.handlerP50,
    svcCall: s1.window.outgoingP50,
    vendorHandler: v1.window.handlerP50,
  };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export interface Summary {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  svcCpu: number;
  vendorCpu: number;
  clientCpu: number;
  svcHandler: number;
  svcCall: number;
  vendorHandler: number;
}

function summarize(blocks: Block[]): Summary {
  const lat = blocks.flatMap((b) => b.latencies).sort((a, b) => a - b);
  const med = (f: (b: Block) => number) => median(blocks.map(f));
  return {
    n: lat.length,
    p50: percentile(lat, 50),
    p90: percentile(lat, 90),
    p99: percentile(lat, 99),
    svcCpu: med((b) => b.svcCpu),
    vendorCpu: med((b) => b.vendorCpu),
    clientCpu: med((b) => b.clientCpu),
    svcHandler: med((b) => b.svcHandler),
    svcCall: med((b) => b.svcCall),
    vendorHandler: med((b) => b.vendorHandler),
  };
}

const fmt = (ms: number) => `${ms.toFixed(2)} ms`;
const us = (ms: number) => `${(ms * 1000).toFixed(0)} µs`;

async function run(): Promise<BenchResult> {
  const vendor = await startChild('vendor');
  let svc: Child | undefined;
  let prepared: Prepared | undefined;
  const baseline = process.env.SVC_BENCH_BASELINE;
  let base: { svc: Child; prepared?: Prepared } | undefined;
  let floor: Child | undefined;
  const dir = mkdtempSync(join(tmpdir(), 'svc-mcp-floor-'));
  try {
    svc = await startChild('svc', [vendor.url]);
    prepared = await prepare(vendor, svc);
    writeFileSync(join(dir, 'answers.json'), JSON.stringify(prepared.answers));
    floor = await startChild('mcp-floor', [join(dir, 'answers.json')]);
    const floors = await floorCalls(floor.url, PROGRAM);
    if (baseline) {
      base = { svc: await startChild('svc', [vendor.url], join(baseline, 'dist', 'bench')) };
      base.prepared = await prepare(vendor, base.svc);
    }
    const { target, bytes } = prepared;
    const calls = { ...prepared.calls, 'floor-mcp': floors.mcp, 'floor-http': floors.http };
    const blocks: Block[] = [];
    const baseBlocks: Block[] = [];
    for (let r = 0; r < WARMUP_ROUNDS + ROUNDS; r++) {
      const order = r % 2 ? [...SIDES].reverse() : SIDES;
      for (const side of order) {
        // With a baseline, each svc side runs on both builds, the first alternating by round.
        const runs: Array<[Block[], Call, Child]> = [[blocks, calls[side], isFloor(side) ? floor : svc]];
        if (base?.prepared && side !== 'direct' && !isFloor(side))
          runs[r % 2 ? 'unshift' : 'push']([baseBlocks, base.prepared.calls[side], base.svc]);
        for (const [into, call, server] of runs) {
          const b = await block(side, call, vendor, server);
          if (r >= WARMUP_ROUNDS) into.push(b);
        }
      }
    }
    const summaries = (of: Block[]) =>
      Object.fromEntries(SIDES.map((side) => [side, summarize(of.filter((b) => b.side === side))])) as Record<
        Side,
        Summary
      >;
    const s = summaries(blocks);
    const { direct, http, mcp, ping, health } = s;
    const raw = s['mcp-raw'];
    const pingRaw = s['ping-raw'];
    const added = (x: Summary) => x.p50 - direct.p50;
    const bad = [...blocks, ...baseBlocks].reduce((n, b) => n + b.bad, 0);
    const vendorPerBlock = blocks.map((b) => ({
      side: b.side,
      extra: b.vendorRequests - (READS.includes(b.side) || b.side === 'direct' ? BLOCK : 0),
    }));
    const oneCall = vendorPerBlock.every((b) => b.extra === 0);
    const line = (x: Summary, extra = '') =>
      `p90 ${fmt(x.p90)}, p99 ${fmt(x.p99)}; n=${x.n}${extra ? `; ${extra}` : ''}`;
    const metrics: Metric[] = [
      { label: 'direct p50', value: direct.p50, unit: 'ms', note: line(direct, `GET ${target} on the vendor`) },
      { label: 'HTTP p50', value: http.p50, unit: 'ms', note: line(http, `POST /execute/{ph}/{s} ${PROGRAM}`) },
      { label: 'MCP p50 (SDK client)', value: mcp.p50, unit: 'ms', note: line(mcp, `tools/call svc ${PROGRAM}`) },
      {
        label: 'MCP p50 (plain fetch)',
        value: raw.p50,
        unit: 'ms',
        note: line(raw, 'the same tools/call, answer read as text'),
      },
      { label: 'added p50: HTTP', value: added(http), unit: 'ms', note: `p90 ${fmt(http.p90 - direct.p90)} added` },
      {
        label: 'added p50: MCP (SDK client)',
        value: added(mcp),
        unit: 'ms',
        note: `p90 ${fmt(mcp.p90 - direct.p90)} added; ${fmt(mcp.p50 - http.p50)} over HTTP`,
      },
      {
        label: 'added p50: MCP (plain fetch)',
        value: added(raw),
        unit: 'ms',
        note: `p90 ${fmt(raw.p90 - direct.p90)} added; ${fmt(raw.p50 - http.p50)} over HTTP`,
      },
      // Floors: no tool, no vendor.
      { label: 'MCP ping p50 (SDK client)', value: ping.p50, unit: 'ms', note: line(ping) },
      { label: 'MCP ping p50 (plain fetch)', value: pingRaw.p50, unit: 'ms', note: line(pingRaw) },
      { label: 'HTTP GET /v1/health p50', value: health.p50, unit: 'ms', note: line(health) },
      // Where the time goes (medians of the blocks, inside the processes).
      {
        label: '  vendor: arrival to answer',
        value: direct.vendorHandler,
        unit: 'ms',
        note: `direct blocks; ${fmt(http.vendorHandler)} in HTTP blocks, ${fmt(mcp.vendorHandler)} in MCP blocks (SDK), ${fmt(raw.vendorHandler)} (plain fetch)`,
      },
      {
        label: '  svc: vendor call (undici)',
        value: mcp.svcCall,
        unit: 'ms',
        note: `MCP blocks (SDK); ${fmt(raw.svcCall)} plain fetch; ${fmt(http.svcCall)} in HTTP blocks`,
      },
      {
        label: '  svc arrival to answer: HTTP',
        value: http.svcHandler,
        unit: 'ms',
        note: `svc's own share (minus the vendor call) ${fmt(http.svcHandler - http.svcCall)}; client side ${fmt(http.p50 - http.svcHandler)}`,
      },
      {
        label: '  svc arrival to answer: MCP',
        value: mcp.svcHandler,
        unit: 'ms',
        note: `own share ${fmt(mcp.svcHandler - mcp.svcCall)} (${fmt(mcp.svcHandler - mcp.svcCall - (http.svcHandler - http.svcCall))} more than HTTP); client side ${fmt(mcp.p50 - mcp.svcHandler)} SDK, ${fmt(raw.p50 - raw.svcHandler)} plain fetch (raw blocks: ${fmt(raw.svcHandler)} in svc)`,
      },
      {
        label: '  svc arrival to answer: ping',
        value: ping.svcHandler,
        unit: 'ms',
        note: `the MCP transport's floor in svc; GET /v1/health ${fmt(health.svcHandler)}; client side ${fmt(ping.p50 - ping.svcHandler)} SDK, ${fmt(pingRaw.p50 - pingRaw.svcHandler)} plain fetch`,
      },
      {
        label: 'svc CPU per call: HTTP read',
        value: http.svcCpu * 1000,
        unit: 'us',
        note: `MCP read ${us(mcp.svcCpu)} (SDK), ${us(raw.svcCpu)} (plain fetch); MCP ping ${us(ping.svcCpu)}; health ${us(health.svcCpu)}`,
      },
      {
        label: 'client CPU per call: direct',
        value: direct.clientCpu * 1000,
        unit: 'us',
        note: `HTTP ${us(http.clientCpu)}; MCP SDK ${us(mcp.clientCpu)}, plain fetch ${us(raw.clientCpu)}; ping SDK ${us(ping.clientCpu)}, plain fetch ${us(pingRaw.clientCpu)}`,
      },
      {
        label: 'answer body bytes: MCP',
        value: bytes.mcp,
        unit: 'bytes',
        note: `SSE event with TOON text + structuredContent + _meta; HTTP ${bytes.http} B (JSON), vendor ${bytes.direct} B`,
      },
      {
        label: 'rows per read',
        value: ROWS,
        unit: 'count',
        note: `every read side; svc sends GET ${target}; blocks of ${BLOCK}, ${ROUNDS} rounds after ${WARMUP_ROUNDS} warm-up rounds`,
      },
    ];
    const overHttp = ownShare(mcp) - ownShare(http);
    // The floor server makes no vendor call: its arrival to answer is all its own.
    const floorGap = s['floor-mcp'].svcHandler - s['floor-http'].svcHandler;
    metrics.push({
      label: '  floor: MCP − HTTP, no svc code',
      value: floorGap,
      unit: 'ms',
      note: `svc's two answers, fixed: arrival to answer ${fmt(s['floor-mcp'].svcHandler)} through the SDK transport and svc's web adapter, ${fmt(s['floor-http'].svcHandler)} from plain node:http`,
    });
    metrics.push({
      label: "  svc's own share: MCP − HTTP",
      value: overHttp,
      unit: 'ms',
      note: `${fmt(ownShare(mcp))} vs ${fmt(ownShare(http))} (arrival to answer minus the vendor call); plain fetch ${fmt(ownShare(raw) - ownShare(http))} more; the SDK transport alone: ${fmt(floorGap)}`,
    });
    if (baseBlocks.length) metrics.push(...baselineMetrics(s, { ...summaries(baseBlocks), direct }, baseline!));
    const checks: Check[] = [
      {
        target: `every read answered ${ROWS} rows (direct, HTTP, MCP)`,
        pass: bad === 0,
        actual: `${bad} wrong of ${[...blocks, ...baseBlocks].reduce((n, b) => n + b.latencies.length, 0)} calls`,
      },
      {
        target: 'one vendor request per read (svc or direct), none for the floors',
        pass: oneCall,
        actual: oneCall
          ? `exactly ${BLOCK} per read block, 0 per floor block`
          : vendorPerBlock
              .filter((b) => b.extra !== 0)
              .map((b) => `${b.side} ${b.extra > 0 ? '+' : ''}${b.extra}`)
              .join(', '),
      },
      {
        target: `MCP (SDK client) adds at most ${TARGET_MS} ms to the p50 latency of the same read on HTTP`,
        pass: mcp.p50 - http.p50 <= TARGET_MS,
        actual: `${fmt(mcp.p50 - http.p50)} added (${fmt(mcp.p50)} vs ${fmt(http.p50)}); over direct: MCP ${fmt(added(mcp))}, HTTP ${fmt(added(http))}, MCP by plain fetch ${fmt(added(raw))}`,
      },
    ];
    return { metrics, checks };
  } finally {
    await prepared?.close();
    await base?.prepared?.close();
    await base?.svc.stop();
    await svc?.stop();
    await floor?.stop();
    await vendor.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
