/**
 * The read measurements of the `replicas` benchmark: sequential latency rounds over several svc
 * targets in a new random order every round (a target may move to a new session every few
 * rounds), and load with 10 connections whose requests alternate over one or more replicas,
 * with the CPU of every process involved (/proc) and the Lua scripts Redis ran per request.
 */
import { Pool } from 'undici';
import { send, type Target } from './hotpath.bench.js';
import { shuffler } from './harness.js';
import type { Child } from './processes.js';
import { procCpuMs } from './processes.js';
import type { RedisServer } from './redis-server.js';

/** The read `e3` (hotpath's svc TOON target: 25 rows, the default format) on the session at `path`. */
export function readTarget(name: string, svc: Child, path: string): Target {
  return {
    name,
    pid: svc.pid,
    origin: svc.url,
    method: 'POST',
    path,
    headers: { 'content-type': 'text/plain' },
    body: 'e3',
  };
}

/** A latency target; with `renew`, its session is replaced by `renew.open()` every `renew.every` rounds. */
export type LatencyTarget = Target & { renew?: { every: number; open(): Promise<string> } };

/**
 * `warmup + rounds` sequential rounds, one request to each target per round, in a new random order
 * every round; the sorted times (ms) of the measured rounds per target.
 */
export async function latencies(targets: LatencyTarget[], warmup: number, rounds: number): Promise<number[][]> {
  const pools = targets.map((t) => new Pool(t.origin, { connections: 1 }));
  const out = targets.map(() => [] as number[]);
  const shuffle = shuffler(7);
  const order = targets.map((_, i) => i);
  try {
    for (let r = 0; r < warmup + rounds; r++) {
      for (const t of targets) if (t.renew && r % t.renew.every === 0) t.path = await t.renew.open();
      shuffle(order);
      for (const i of order) {
        const t0 = performance.now();
        await send(pools[i]!, targets[i]!);
        if (r >= warmup) out[i]!.push(performance.now() - t0);
      }
    }
  } finally {
    await Promise.all(pools.map((p) => p.close()));
  }
  return out.map((xs) => xs.sort((a, b) => a - b));
}

/** A load arrangement: the targets its requests alternate over, request by request. */
export interface Arrangement {
  name: string;
  targets: Target[];
  pools: Pool[];
}

export interface Load {
  rps: number;
  /** CPU ms per answer: the arrangement's svc processes together, Redis, the vendor. */
  svcCpu: number;
  redisCpu: number;
  vendorCpu: number;
  /** Lua scripts (EVALSHA) Redis ran per answer: reads, writes and their retries. */
  scripts: number;
}

async function evalshaCalls(redis: RedisServer): Promise<number> {
  const info = await redis.command(['INFO', 'commandstats']);
  return Number(/cmdstat_evalsha:calls=(\d+)/.exec(info)?.[1] ?? 0);
}

/** `connections` loops sending back to back for `seconds`, the n-th request to target n mod k. */
export async function load(
  a: Arrangement,
  procs: { redis: RedisServer; vendorPid: number },
  connections: number,
  seconds: number,
): Promise<Load> {
  const cpu = () => ({
    svc: a.targets.reduce((n, t) => n + procCpuMs(t.pid), 0),
    redis: procCpuMs(procs.redis.pid),
    vendor: procCpuMs(procs.vendorPid),
  });
  const s0 = await evalshaCalls(procs.redis);
  const c0 = cpu();
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  let sent = 0;
  let ok = 0;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < end) {
        const i = sent++ % a.targets.length;
        await send(a.pools[i]!, a.targets[i]!);
        ok++;
      }
    }),
  );
  const dt = (performance.now() - t0) / 1000;
  const c1 = cpu();
  const s1 = await evalshaCalls(procs.redis);
  return {
    rps: ok / dt,
    svcCpu: (c1.svc - c0.svc) / ok,
    redisCpu: (c1.redis - c0.redis) / ok,
    vendorCpu: (c1.vendor - c0.vendor) / ok,
    scripts: (s1 - s0) / ok,
  };
}

/** `rounds` rounds of every arrangement (order reversed every other round) after 1 s warm-ups. */
export async function throughput(
  arrangements: Arrangement[],
  procs: { redis: RedisServer; vendorPid: number },
  opts: { connections: number; seconds: number; rounds: number },
): Promise<Load[][]> {
  const loads: Load[][] = arrangements.map(() => []);
  for (const a of arrangements) await load(a, procs, opts.connections, 1);
  for (let r = 0; r < opts.rounds; r++) {
    const order = arrangements.map((_, i) => i);
    if (r % 2) order.reverse();
    for (const i of order) loads[i]!.push(await load(arrangements[i]!, procs, opts.connections, opts.seconds));
  }
  return loads;
}
