/**
 * svc as replicas sharing a Redis session store (`SVC_MCP_TRANSPORT_KV_URL`), side by side in one
 * run. The benchmark starts its own `redis-server` (bench/redis-server.ts; missing: one FAIL line
 * saying how to install it), the json-server vendor, and three svc processes
 * (`serve-child.ts svc`) over one shared file artifact store (`SVC_RUN_ARTIFACTS_URL=file://<tmp>`):
 * `memory` (sessions in its own memory), and replicas `A` and `B` (sessions in Redis).
 *
 *   1. latency: the clean 25-row read `e3` (as in hotpath) on A and on memory, each on one session,
 *      500 sequential rounds after 50 warm-up rounds in a new random order every round; Check:
 *      added p50 of Redis over memory < 1 ms (two round trips: a plain read, then a compare-and-set
 *      that lands before the answer). Reported beside it: A on a new session every 25 rounds (a
 *      session's state grows with its reads: page handles and runs).
 *   2. throughput: 10 connections for 3 s, 3 rounds: A alone, and A + B with ONE session opened
 *      on A, requests alternating A, B, A, ... (memory alone for reference); reported, not checked.
 *   3. operations across replicas (bench/replicas-ops.ts): 50 sessions x 16 `wait=false` runs,
 *      each polled with `wait(oN)` on the replica that did not start it; Check: 0 errors.
 *
 * `SVC_BENCH_REPLICAS_DIR=<dir>` puts the artifact store under <dir> instead of the OS temp dir
 * (the file store fsyncs every snapshot: /dev/shm takes the disk out of the figures).
 * `SVC_BENCH_BASELINE=<dir>` adds a Redis replica of another build (`<dir>/dist/bench`, as in
 * `hotpath`) on the same Redis to part 1, on a session of its own: an A/B of the Redis store side
 * by side in one run.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Pool } from 'undici';
import { median, type Benchmark, type BenchResult, type Check, type Metric } from './harness.js';
import { prepareSvc } from './hotpath.bench.js';
import { startChild, type Child } from './processes.js';
import { RedisMissing, startRedisServer, type RedisServer } from './redis-server.js';
import { crossReplicaOps, errorKinds, OPS_PROGRAM, type OpsRound } from './replicas-ops.js';
import {
  latencies,
  readTarget,
  throughput,
  type Arrangement,
  type LatencyTarget,
  type Load,
} from './replicas-measure.js';

export const benchmark: Benchmark = {
  name: 'replicas',
  title: 'replicas sharing Redis: read latency vs memory, 2 vs 1 replica throughput, operations across replicas',
  run,
};

const ROUNDS = 500;
const WARMUP_ROUNDS = 50;
/** The rounds a session of the "new session" target serves. */
const RENEW_EVERY = 25;
const LOAD = { connections: 10, seconds: 3, rounds: 3 };
const SESSIONS = 50;
const OPS_PER_SESSION = 16;
const OPS_ROUNDS = 3;
/** Client connections to each replica for starts, and as many again for polls. */
const OPS_CONNECTIONS = 16;
const ADDED_P50_LIMIT_MS = 1;

const ms = (x: number) => `${x.toFixed(2)} ms`;
const KiB = (n: number) => `${(n / 1024).toFixed(1)} KiB`;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/** Sums the lengths of the values of hashes and lists (KEYS). */
const ITEM_BYTES = `local n = 0
for _, k in ipairs(KEYS) do
  local vs = redis.call('TYPE', k).ok == 'hash' and redis.call('HVALS', k) or redis.call('LRANGE', k, 0, -1)
  for _, v in ipairs(vs) do n = n + #v end
end
return n`;

/** Bytes a session keeps in Redis (`path` = `/execute/{ph}/{s}`): its core JSON, and its items (page handles, tokens, runs). */
interface StateBytes {
  core: number;
  items: number;
}

async function stateBytes(redis: RedisServer, path: string): Promise<StateBytes> {
  const m = path.slice('/execute/'.length);
  const core = Number(await redis.command(['HSTRLEN', `svc:s:${m}`, 'st']));
  const items = Number(await redis.command(['EVAL', ITEM_BYTES, '3', `svc:pg:${m}`, `svc:pc:${m}`, `svc:ru:${m}`]));
  return { core, items };
}

const bytesText = (b: StateBytes) => `core ${KiB(b.core)} + items ${KiB(b.items)}`;

/** The result when there is no redis-server to start: one FAIL line saying how to install it. */
function missing(e: RedisMissing): BenchResult {
  return { metrics: [], checks: [{ target: 'redis-server is installed', pass: false, actual: e.message }] };
}

interface Measured {
  lat: number[][];
  /** Bytes of the long session at the end, and the largest of the renewed ones. */
  bytes: { long: StateBytes; renewed: StateBytes };
  arrangements: Arrangement[];
  loads: Load[][];
  ops: OpsRound[];
}

async function run(): Promise<BenchResult> {
  let redis: RedisServer;
  try {
    redis = await startRedisServer();
  } catch (e) {
    if (e instanceof RedisMissing) return missing(e);
    throw e;
  }
  const dir = await mkdtemp(join(process.env.SVC_BENCH_REPLICAS_DIR || tmpdir(), 'svc-bench-replicas-'));
  const stops: Array<() => Promise<unknown>> = [() => rm(dir, { recursive: true, force: true }), () => redis.stop()];
  try {
    const vendor = await startChild('vendor');
    stops.unshift(() => vendor.stop());
    const artifacts = { SVC_RUN_ARTIFACTS_URL: pathToFileURL(dir).href };
    const replicaEnv = { ...artifacts, SVC_MCP_TRANSPORT_KV_URL: redis.url, SVC_MAX_RUNNING_OPS: '1000' };
    const started: Child[] = [];
    for (const env of [artifacts, replicaEnv, replicaEnv]) {
      const c = await startChild('svc', [vendor.url], undefined, env);
      stops.unshift(() => c.stop());
      started.push(c);
    }
    const [mem, a, b] = started as [Child, Child, Child];
    const baseline = process.env.SVC_BENCH_BASELINE;
    const base = baseline
      ? await startChild('svc', [vendor.url], join(baseline, 'dist', 'bench'), replicaEnv)
      : undefined;
    if (base) stops.unshift(() => base.stop());
    const memRead = readTarget('memory', mem, (await prepareSvc(vendor, mem)).path);
    // The one session of parts 1 and 2, opened on A.
    const aRead = readTarget('Redis A', a, (await prepareSvc(vendor, a)).path);
    const bRead = readTarget('Redis B', b, aRead.path);
    const renewed: StateBytes = { core: 0, items: 0 };
    const fresh: LatencyTarget = {
      ...readTarget('Redis A, new session', a, ''),
      renew: {
        every: RENEW_EVERY,
        open: async () => {
          if (fresh.path) {
            const b = await stateBytes(redis, fresh.path);
            renewed.core = Math.max(renewed.core, b.core);
            renewed.items = Math.max(renewed.items, b.items);
          }
          return (await prepareSvc(vendor, a)).path;
        },
      },
    };
    const baseRead = base ? [readTarget('Redis, base build', base, (await prepareSvc(vendor, base)).path)] : [];
    const lat = await latencies([memRead, aRead, fresh, ...baseRead], WARMUP_ROUNDS, ROUNDS);
    const bytes = { long: await stateBytes(redis, aRead.path), renewed };

    const pool = (origin: string, connections: number) => new Pool(origin, { connections });
    const arrangements: Arrangement[] = [
      { name: '1 Redis replica (A)', targets: [aRead], pools: [pool(a.url, LOAD.connections)] },
      {
        name: '2 Redis replicas (A, B)',
        targets: [aRead, bRead],
        pools: [pool(a.url, LOAD.connections), pool(b.url, LOAD.connections)],
      },
      { name: '1 memory svc', targets: [memRead], pools: [pool(mem.url, LOAD.connections)] },
    ];
    const loads = await throughput(arrangements, { redis, vendorPid: vendor.pid }, LOAD).finally(() =>
      Promise.all(arrangements.flatMap((x) => x.pools.map((p) => p.close()))),
    );

    const opsPools = [a, b, a, b].map((c) => pool(c.url, OPS_CONNECTIONS));
    const ops: OpsRound[] = [];
    try {
      const [sa, sb, pa, pb] = opsPools as [Pool, Pool, Pool, Pool];
      for (let r = 0; r < OPS_ROUNDS; r++)
        ops.push(await crossReplicaOps([sa, sb], [pa, pb], SESSIONS, OPS_PER_SESSION));
    } finally {
      await Promise.all(opsPools.map((p) => p.close()));
    }
    return report({ lat, bytes, arrangements, loads, ops });
  } finally {
    for (const stop of stops) await stop();
  }
}

function latencyMetrics({ lat, bytes }: Measured): Metric[] {
  const [mem, redis, fresh, base] = lat as [number[], number[], number[], number[] | undefined];
  const p50 = (xs: number[]) => percentile(xs, 50);
  const p90 = (xs: number[]) => percentile(xs, 90);
  const adds = (xs: number[]) => `adds ${ms(p50(xs) - p50(mem))}; p90 ${ms(p90(xs))} (adds ${ms(p90(xs) - p90(mem))})`;
  return [
    {
      label: 'memory store p50',
      value: p50(mem),
      unit: 'ms',
      note: `p90 ${ms(p90(mem))}; n=${ROUNDS}; e3, 25 rows, TOON`,
    },
    {
      label: 'Redis store p50',
      value: p50(redis),
      unit: 'ms',
      note: `${adds(redis)}; one session, ${bytesText(bytes.long)} at the end`,
    },
    {
      label: `Redis, new session every ${RENEW_EVERY} p50`,
      value: p50(fresh),
      unit: 'ms',
      note: `${adds(fresh)}; at most ${bytesText(bytes.renewed)}`,
    },
    ...(base
      ? [
          {
            label: 'Redis store p50, base build',
            value: p50(base),
            unit: 'ms' as const,
            note: `${adds(base)}; this build ${ms(p50(redis) - p50(base))} against it (SVC_BENCH_BASELINE)`,
          },
        ]
      : []),
  ];
}

function loadMetrics({ arrangements, loads }: Measured): Metric[] {
  const us = (x: number) => `${(x * 1000).toFixed(0)} µs`;
  const out: Metric[] = arrangements.map((x, i) => {
    const m = (k: keyof Load) => median(loads[i]!.map((l) => l[k]));
    return {
      label: `${x.name} req/s (${LOAD.connections} conn)`,
      value: Math.round(m('rps')),
      unit: 'count',
      note: `CPU per request: svc ${us(m('svcCpu'))}, Redis ${us(m('redisCpu'))}, vendor ${us(m('vendorCpu'))}; Redis scripts per request ${m('scripts').toFixed(2)}; rounds ${loads[i]!.map((l) => Math.round(l.rps)).join(', ')}`,
    };
  });
  const ratio = (i: number) => median(loads[i]!.map((l, r) => l.rps / loads[0]![r]!.rps));
  out.push({
    label: 'throughput 2 replicas ÷ 1',
    value: Number(ratio(1).toFixed(2)),
    unit: 'count',
    note: `median of the rounds' ratios (${loads[1]!.map((l, r) => (l.rps / loads[0]![r]!.rps).toFixed(2)).join(', ')}); one session opened on A, requests alternating A, B; memory svc ÷ Redis A ${ratio(2).toFixed(2)}`,
  });
  return out;
}

function opsMetrics({ ops }: Measured): Metric[] {
  const sum = (f: (r: OpsRound) => number) => ops.reduce((n, r) => n + f(r), 0);
  return [
    {
      label: 'operations across replicas',
      value: sum((r) => r.ops),
      unit: 'count',
      note: `${OPS_ROUNDS} rounds of ${SESSIONS} sessions x ${OPS_PER_SESSION} \`${OPS_PROGRAM}\`, started at once, each polled on the other replica`,
    },
    {
      label: 'operations round time',
      value: median(ops.map((r) => r.ms)),
      unit: 'ms',
      note: `median; rounds ${ops.map((r) => ms(r.ms)).join(', ')} (first start to last end); opening ${SESSIONS} sessions ${ops.map((r) => ms(r.openMs)).join(', ')}`,
    },
    {
      label: 'operation_not_on_replica answers',
      value: sum((r) => r.notOnReplica),
      unit: 'count',
      note: `of ${sum((r) => r.polls)} polls; ${sum((r) => r.runningAtFirstPoll)} operations still running at their first poll; per round ${ops.map((r) => r.notOnReplica).join(', ')}`,
    },
  ];
}

function report(m: Measured): BenchResult {
  const [mem, redis] = m.lat as [number[], number[]];
  const added = percentile(redis, 50) - percentile(mem, 50);
  const errors = m.ops.flatMap((r) => r.errors);
  const total = m.ops.reduce((n, r) => n + r.ops, 0);
  const checks: Check[] = [
    {
      target: `Redis session store adds < ${ADDED_P50_LIMIT_MS} ms p50 over the memory store (clean 25-row read)`,
      pass: added < ADDED_P50_LIMIT_MS,
      actual: `${ms(added)} (${ms(percentile(redis, 50))} vs ${ms(percentile(mem, 50))})`,
    },
    {
      target: `operations across replicas: 0 errors (${total} started, polled on the other replica)`,
      pass: errors.length === 0,
      actual: `${errors.length} errors${errors.length ? `: ${errorKinds(errors).slice(0, 3).join('; ')}` : ''}`,
    },
  ];
  return { metrics: [...latencyMetrics(m), ...loadMetrics(m), ...opsMetrics(m)], checks };
}
