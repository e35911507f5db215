/**
 * Memory over many clean reads (issue 21, opt-in: `npm run bench -- hotpath-memory`): 100,000
 * reads of 25 rows (`e3`, the default format) at 10 connections through svc started with the
 * artifact store of `svc serve`'s defaults (memory store, 7 days, 256 MiB, 256 per session). RSS
 * and heap of the svc process are read every 10,000 reads; target: the last reading within 10 % of
 * the first. Every reading ends with a full collection, and each is taken 10,000 reads after the
 * one before, the first 10,000 reads after a warm-up (5,000 reads) and its full collection: so
 * every reading is taken as the others are. (The warm-up's memory, the JIT's and V8's first heap
 * sizing, is not svc's steady state: it is reported as the peak RSS.) The heap checked is the
 * heap used right after a full collection (the child runs with `--expose-gc`, a node flag, not a
 * setting of svc): what svc retains. The heap used as found (garbage included) is reported
 * beside it.
 */
import { Pool } from 'undici';
import { fmtBytes, type Benchmark, type BenchResult, type Check, type Metric } from './harness.js';
import { bodyOf, load, prepareSvc, type Target } from './hotpath.bench.js';
import { startChild } from './processes.js';
import type { ChildUsage } from './serve-child.js';

export const benchmark: Benchmark = {
  name: 'hotpath-memory',
  title: 'hot path: svc RSS and heap over 100,000 clean reads with default settings (opt-in)',
  run,
};

const READS = 100_000;
const WARMUP = 5_000;
const EVERY = 10_000;
const CONNECTIONS = 10;

/** `n` reads at `CONNECTIONS` connections (the load loop of `hotpath`, stopped by count). */
async function reads(t: Target, pool: Pool, n: number): Promise<void> {
  let left = n;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (left-- > 0) {
        const res = await pool.request({ method: t.method, path: t.path, headers: t.headers, body: bodyOf(t) });
        await res.body.text();
        if (res.statusCode !== 200) throw new Error(`svc answered ${res.statusCode}`);
      }
    }),
  );
}

/** Heap used after a full collection (the child runs with `--expose-gc`). */
function retained(u: ChildUsage): number {
  if (u.heapAfterGc === undefined) throw new Error('svc child did not report its heap after a GC');
  return u.heapAfterGc;
}

async function run(): Promise<BenchResult> {
  const vendor = await startChild('vendor');
  const svc = await startChild('svc', [vendor.url, 'default-store'], undefined, {}, ['--expose-gc']).catch(
    async (e: unknown) => {
      await vendor.stop();
      throw e;
    },
  );
  try {
    const { path } = await prepareSvc(vendor, svc);
    const t: Target = {
      name: 'svc TOON',
      pid: svc.pid,
      origin: svc.url,
      method: 'POST',
      path,
      headers: { 'content-type': 'text/plain' },
      body: 'e3',
    };
    const pool = new Pool(svc.url, { connections: CONNECTIONS });
    await load(t, pool, vendor.pid, CONNECTIONS, 1);
    await reads(t, pool, WARMUP);
    const warm = await svc.usage(); // ends with a full collection, as every reading does
    await reads(t, pool, EVERY);
    const samples = [await svc.usage()];
    const t0 = performance.now();
    for (let done = 0; done < READS; done += EVERY) {
      await reads(t, pool, EVERY);
      samples.push(await svc.usage());
    }
    const seconds = (performance.now() - t0) / 1000;
    await pool.close();
    const first = samples[0]!;
    const last = samples[samples.length - 1]!;
    const growth = (a: number, b: number) => (b - a) / a;
    const metrics: Metric[] = [
      {
        label: 'reads',
        value: READS,
        unit: 'count',
        note: `${(READS / seconds).toFixed(0)} reads/s, ${seconds.toFixed(0)} s`,
      },
      {
        label: 'RSS first',
        value: first.rss,
        unit: 'bytes',
        note: `${EVERY} reads after the warm-up (${WARMUP} reads, then a full collection): ${fmtBytes(warm.rss)} at its end`,
      },
      {
        label: 'RSS last',
        value: last.rss,
        unit: 'bytes',
        note: `every ${EVERY}: ${samples.map((s) => fmtBytes(s.rss)).join(', ')}`,
      },
      {
        label: 'RSS peak',
        value: last.peakRss,
        unit: 'bytes',
        note: 'the most the process held since its start (getrusage), the warm-up included',
      },
      { label: 'heap retained first', value: retained(first), unit: 'bytes', note: 'heap used after a full GC' },
      {
        label: 'heap retained last',
        value: retained(last),
        unit: 'bytes',
        note: `every ${EVERY}: ${samples.map((s) => fmtBytes(retained(s))).join(', ')}`,
      },
      {
        label: 'heap used last',
        value: last.heapUsed,
        unit: 'bytes',
        note: `as found, garbage included; every ${EVERY}: ${samples.map((s) => fmtBytes(s.heapUsed)).join(', ')}`,
      },
      {
        label: 'run snapshots held',
        value: last.artifacts ?? 0,
        unit: 'count',
        note: `${first.artifacts ?? 0} at the first reading`,
      },
    ];
    const checks: Check[] = [
      {
        target: `RSS within 10 % over ${READS} reads (default settings)`,
        pass: Math.abs(growth(first.rss, last.rss)) <= 0.1,
        actual: `${(growth(first.rss, last.rss) * 100).toFixed(1)} % (${fmtBytes(first.rss)} → ${fmtBytes(last.rss)})`,
      },
      {
        target: `heap retained (after a full GC) within 10 % over ${READS} reads (default settings)`,
        pass: Math.abs(growth(retained(first), retained(last))) <= 0.1,
        actual: `${(growth(retained(first), retained(last)) * 100).toFixed(1)} % (${fmtBytes(retained(first))} → ${fmtBytes(retained(last))})`,
      },
    ];
    return { metrics, checks };
  } finally {
    await svc.stop();
    await vendor.stop();
  }
}
