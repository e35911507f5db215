/**
 * `npm run bench [-- <filter>...]`: run the benchmarks one after another and print a report.
 * A filter keeps the benchmarks whose name contains it (`npm run bench -- pack`); an opt-in
 * benchmark (OPT_IN) runs only when a filter is exactly its name.
 * Exit status: 0 when every target passes, 1 when one fails, 2 for a filter matching nothing,
 * 70 when a benchmark crashes.
 *
 * Adding a benchmark = one line in BENCHMARKS (modules are loaded only when selected).
 */
import { cpus, loadavg, totalmem } from 'node:os';
import { performance } from 'node:perf_hooks';
import { formatResult, type Benchmark } from './harness.js';

type Loader = () => Promise<{ benchmark: Benchmark }>;

/** name -> module exporting `benchmark`; run in this order. */
const BENCHMARKS: Record<string, Loader> = {
  pack: () => import('./pack.bench.js'),
  compile: () => import('./compile.bench.js'),
  runtime: () => import('./runtime.bench.js'),
  server: () => import('./server.bench.js'),
  ops: () => import('./ops.bench.js'),
  mcp: () => import('./mcp.bench.js'),
  cli: () => import('./cli.bench.js'),
  tokens: () => import('./tokens.bench.js'),
  peers: () => import('./peers.bench.js'),
  imported: () => import('./imported.bench.js'),
  hotpath: () => import('./hotpath.bench.js'),
  'hotpath-memory': () => import('./hotpath-memory.bench.js'),
  replicas: () => import('./replicas.bench.js'),
  credentials: () => import('./credentials.bench.js'),
  graph: () => import('./graph.bench.js'),
  'import-corpus': () => import('./import-corpus.bench.js'),
};

/** Run only when a filter names them exactly (too slow for the default run). */
const OPT_IN = new Set(['hotpath-memory', 'import-corpus']);

function environment(): string {
  const cpu = cpus();
  return [
    `svc benchmarks  ${new Date().toISOString()}`,
    `node ${process.version} on ${process.platform}/${process.arch}, ${cpu.length} cores (${cpu[0]?.model.trim() ?? 'unknown cpu'}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM`,
    `load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')} (other work on the machine slows every figure)`,
  ].join('\n');
}

async function main(filters: string[]): Promise<number> {
  const names = Object.keys(BENCHMARKS).filter((n) =>
    OPT_IN.has(n) ? filters.includes(n) : filters.length === 0 || filters.some((f) => n.includes(f)),
  );
  if (names.length === 0) {
    process.stderr.write(
      `no benchmark matches ${filters.map((f) => `\`${f}\``).join(', ')}; known: ${Object.keys(BENCHMARKS).join(', ')}\n`,
    );
    return 2;
  }
  process.stdout.write(environment() + '\n\n');
  const summary: string[] = [];
  let failed = false;
  for (const name of names) {
    const { benchmark } = await BENCHMARKS[name]!();
    const t0 = performance.now();
    const result = await benchmark.run();
    process.stdout.write(formatResult(benchmark, result, performance.now() - t0) + '\n');
    for (const c of result.checks) {
      failed ||= !c.pass;
      summary.push(`  ${c.pass ? 'PASS' : 'FAIL'}  ${benchmark.name}: ${c.target} (${c.actual})`);
    }
  }
  if (summary.length) process.stdout.write(`summary\n${summary.join('\n')}\n`);
  return failed ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`benchmark crashed: ${(e as Error)?.stack ?? String(e)}\n`);
    process.exitCode = 70;
  },
);
