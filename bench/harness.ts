/**
 * The small benchmark harness: what a benchmark module exports, how a phase is timed, and how a
 * result is printed. Benchmarks are plain modules (`<name>.bench.ts`) listed once in `run.ts`.
 */
import { performance } from 'node:perf_hooks';

/** One measured quantity of a benchmark (a phase time, a size, a count). */
export interface Metric {
  label: string;
  value: number;
  /** `us` for per-call times too small for ms (microseconds). */
  unit: 'ms' | 'us' | 'bytes' | 'count';
  /** Extra text shown after the value, e.g. the spread of the samples. */
  note?: string;
}

/** A target the benchmark checks, e.g. "pack + load under 1000 ms". */
export interface Check {
  target: string;
  pass: boolean;
  /** What was measured against the target. */
  actual: string;
}

export interface BenchResult {
  metrics: Metric[];
  checks: Check[];
}

/** What every `*.bench.ts` module exports as `benchmark`. */
export interface Benchmark {
  /** Short name, matched by the filter argument of `npm run bench -- <filter>`. */
  name: string;
  /** One line: what is measured. */
  title: string;
  run(): Promise<BenchResult>;
}

export interface Timing {
  /** Wall time of the first (cold) call. */
  cold: number;
  /** Wall times of the measured calls (after the warm-up), in call order. */
  samples: number[];
  median: number;
  min: number;
  max: number;
}

export interface MeasureOptions {
  /** Calls before measuring (the first one is also reported as `cold`). Default 2. */
  warmup?: number;
  /** Measured calls. Default 7. */
  runs?: number;
  /** Runs before each call, untimed (e.g. make a fresh output directory). */
  before?: (i: number) => void | Promise<void>;
}

/** Time an async or sync function: warm-up calls, then `runs` measured calls; median of those. */
export async function measure(fn: (i: number) => unknown, opts: MeasureOptions = {}): Promise<Timing> {
  const warmup = Math.max(1, opts.warmup ?? 2);
  const runs = Math.max(1, opts.runs ?? 7);
  let cold = 0;
  const samples: number[] = [];
  for (let i = 0; i < warmup + runs; i++) {
    await opts.before?.(i);
    const t0 = performance.now();
    await fn(i);
    const dt = performance.now() - t0;
    if (i === 0) cold = dt;
    if (i >= warmup) samples.push(dt);
  }
  const sorted = [...samples].sort((a, b) => a - b);
  return { cold, samples, median: median(sorted), min: sorted[0]!, max: sorted[sorted.length - 1]! };
}

/** Median of numbers in any order (the two middle ones averaged; NaN when there are none). */
/**
 * A shuffler of index orders with its own seeded generator (the same sequence every run): rounds
 * that send to several targets in a new random order each (a fixed rotation would always put the
 * same target after another).
 */
export function shuffler(seed: number): (order: number[]) => void {
  const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
  return (order) => {
    for (let k = order.length - 1; k > 0; k--) {
      const j = Math.floor(random() * (k + 1));
      [order[k], order[j]] = [order[j]!, order[k]!];
    }
  };
}

export function median(xs: number[]): number {
  if (xs.length === 0) return NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** A phase-time metric: the median, with cold time and min..max in the note. */
export function timeMetric(label: string, t: Timing): Metric {
  return {
    label,
    value: t.median,
    unit: 'ms',
    note: `cold ${fmtMs(t.cold)}, min ${fmtMs(t.min)}, max ${fmtMs(t.max)}, n=${t.samples.length}`,
  };
}

export function fmtMs(ms: number): string {
  return `${ms < 10 ? ms.toFixed(2) : ms.toFixed(1)} ms`;
}

export function fmtBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(2)} MiB`;
}

function fmtValue(m: Metric): string {
  if (m.unit === 'ms') return fmtMs(m.value);
  if (m.unit === 'us') return `${m.value < 10 ? m.value.toFixed(2) : m.value.toFixed(1)} us`;
  if (m.unit === 'bytes') return fmtBytes(m.value);
  return String(m.value);
}

/** The report block of one benchmark: aligned metric lines, then PASS/FAIL per target. */
export function formatResult(b: Benchmark, r: BenchResult, wallMs: number): string {
  const width = Math.max(...r.metrics.map((m) => m.label.length), 8);
  const lines = [`== ${b.name}: ${b.title}`];
  for (const m of r.metrics) {
    const note = m.note ?? (m.unit === 'bytes' ? `${m.value} bytes` : undefined);
    lines.push(`  ${m.label.padEnd(width)}  ${fmtValue(m).padStart(11)}${note ? `   (${note})` : ''}`);
  }
  for (const c of r.checks) lines.push(`  ${c.pass ? 'PASS' : 'FAIL'}  ${c.target}: ${c.actual}`);
  lines.push(`  (benchmark wall time ${(wallMs / 1000).toFixed(1)} s)`);
  return lines.join('\n') + '\n';
}
