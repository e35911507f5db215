/**
 * `svc run -e '<one-line read>'` as a whole process, next to what a person would otherwise type:
 * `curl -s` of the vendor URL that the read hits. Process start-up dominates a one-shot CLI call,
 * so the same rounds (sides interleaved, the order reversed every other round) also measure:
 *   - `svc --version`: the CLI entry (main + commander, no command module loaded);
 *   - `node -e 0`: bare node start;
 *   - the phases of `svc run` (`phases()`: import run.js, workspace read, compile, post to
 *     `/execute/{ph}/{sid}/plan`) timed inside a fresh node (this file run as a script), i.e.
 *     cold, and in this process, warm (the in-process compile + post).
 * `svc run` runs in a temp workspace (`SVC_WORKSPACE`) prepared once with `svc init --server` and
 * `svc context brewery:Beer`; the vendor (json-server demo vendor) and svc run in child processes
 * (`bench/serve-child.ts`). Without curl on the PATH that side is skipped with a note.
 * Target (issue): svc run's own work, process p50 minus bare node p50, under 100 ms.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { Benchmark, BenchResult, Check, Metric } from './harness.js';
import { startChild, type Child } from './processes.js';

export const benchmark: Benchmark = {
  name: 'cli',
  title: "svc run -e '<read>' as a process vs curl of the vendor URL vs bare node (p50/p90 ms)",
  run,
};

const PROGRAM = 'e1(style="IPA")[id,name,abv]';
const SEED = 'brewery:Beer';
/** Measured rounds (every side once per round, the order reversed every other round), warm-up rounds. */
const ROUNDS = 30;
const WARMUP_ROUNDS = 3;
/** Target: svc run's p50 minus bare node's p50. */
const TARGET_MS = 100;

const MAIN = join(import.meta.dirname, '..', 'cli', 'main.js');
const SELF = fileURLToPath(import.meta.url);

type Side = 'curl' | 'svc run' | 'svc --version' | 'node -e 0' | 'phases (fresh node)' | 'phases (in-process)';
/** A wall time, and for the phases sides the phases of `phases()`. */
interface Sample {
  wall: number;
  phases?: Phases;
}
interface Phases {
  /** import() of cli/commands/run.js (0 once loaded). */
  import: number;
  /** Profile, session meta, registry (each cached CGS verified), symbols. */
  load: number;
  compile: number;
  /** POST /execute/{ph}/{sid}/plan, answer read. */
  post: number;
}

/**
 * What `svc run -e PROGRAM` does, phase by phase, with the modules run.ts uses: imported here
 * (timed) so that in a fresh node (this file run as a script) the first phase is run's module graph.
 */
async function phases(env: NodeJS.ProcessEnv): Promise<Phases> {
  const t0 = performance.now();
  await import('../cli/commands/run.js');
  const [{ compileProgram }, { ServerClient }, { ACCEPT }, { hostSlug }, { loadProfile }, { activeSession }] =
    await Promise.all([
      import('../compiler/compile.js'),
      import('../cli/terminal/client.js'),
      import('../cli/terminal/record.js'),
      import('../cli/workspace/paths.js'),
      import('../cli/workspace/profile.js'),
      import('../cli/workspace/session.js'),
    ]);
  const t1 = performance.now();
  const { root, profile } = loadProfile(env);
  const session = activeSession(root, hostSlug(profile.server));
  if (!session) throw new Error('no active session in the bench workspace');
  const meta = session.readMeta();
  const registry = session.registry(meta);
  const symbols = session.readSymbols();
  const t2 = performance.now();
  const compiled = compileProgram(PROGRAM, { registry, symbols });
  const t3 = performance.now();
  if (compiled.kind !== 'plan') throw new Error(`${PROGRAM} did not compile to a plan: ${compiled.kind}`);
  const path = `/execute/${meta.prompt_hash}/${meta.session}/plan`;
  const answer = await new ServerClient(profile).request(path, {
    body: JSON.stringify({ plan: compiled.plan, program: PROGRAM, mode: 'live', wait: true }),
    contentType: 'application/vnd.svc.resolved-plan+json',
    accept: ACCEPT.plain,
  });
  const t4 = performance.now();
  if (answer.status !== 200) throw new Error(`POST ${path} answered ${answer.status}: ${answer.text.slice(0, 200)}`);
  return { import: t1 - t0, load: t2 - t1, compile: t3 - t2, post: t4 - t3 };
}

/** Run a process to its end; its wall time and stdout; throws on a non-zero exit. */
function proc(cmd: string, args: string[], env: NodeJS.ProcessEnv, cwd?: string): Promise<Sample & { out: string }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(cmd, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
    child.on('error', reject);
    child.on('close', (code) => {
      const wall = performance.now() - t0;
      if (code === 0) resolve({ wall, out });
      else reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${err.slice(0, 300)}`));
    });
  });
}

const hasCurl = (): boolean => !spawnSync('curl', ['--version'], { stdio: 'ignore' }).error;

interface Prepared {
  sides: Partial<Record<Side, () => Promise<Sample>>>;
  target: string;
  rows: number;
}

/** The workspace, one checked `svc run`, the vendor target it hit, and one call per side. */
async function prepare(ws: string, vendor: Child, svc: Child): Promise<Prepared> {
  const env = { ...process.env, SVC_WORKSPACE: ws };
  const svcCli = (args: string[]) => proc(process.execPath, [MAIN, ...args], env, ws);
  await svcCli(['init', '--server', svc.url]);
  await svcCli(['context', SEED]);
  const before = await vendor.usage();
  const first = await svcCli(['run', '--accept', 'json', '-e', PROGRAM]);
  const after = await vendor.usage();
  const rows = (JSON.parse(first.out) as { count?: number }).count ?? 0;
  if (rows === 0) throw new Error(`svc run answered no rows: ${first.out.slice(0, 300)}`);
  if (after.requests - before.requests !== 1)
    throw new Error(`one svc run made ${after.requests - before.requests} vendor requests, want 1`);
  const target = after.lastTargets[after.lastTargets.length - 1]!;
  const timed = async (f: () => Promise<Phases>): Promise<Sample> => {
    const t0 = performance.now();
    const p = await f();
    return { wall: performance.now() - t0, phases: p };
  };
  const sides: Prepared['sides'] = {
    'svc run': () => svcCli(['run', '-e', PROGRAM]),
    'svc --version': () => svcCli(['--version']),
    'node -e 0': () => proc(process.execPath, ['-e', '0'], env),
    'phases (fresh node)': async () => {
      const r = await proc(process.execPath, [SELF], env, ws);
      return { wall: r.wall, phases: JSON.parse(r.out) as Phases };
    },
    'phases (in-process)': () => timed(() => phases(env)),
  };
  if (hasCurl()) sides.curl = () => proc('curl', ['-s', '-f', '-o', '/dev/null', vendor.url + target], env);
  return { sides, target, rows };
}

function percentile(xs: number[], p: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const fmt = (ms: number) => `${ms.toFixed(1)} ms`;
type Pick = (s: Sample) => number;
const wall: Pick = (s) => s.wall;
const phase =
  (k: keyof Phases): Pick =>
  (s) =>
    s.phases![k];
const work: Pick = (s) => s.phases!.compile + s.phases!.post;
const p50 = (xs: Sample[], f: Pick = wall) => percentile(xs.map(f), 50);
const p90 = (xs: Sample[], f: Pick = wall) => percentile(xs.map(f), 90);

/** Sides that read from the vendor (one request each). */
const READS: Side[] = ['curl', 'svc run', 'phases (fresh node)', 'phases (in-process)'];

async function run(): Promise<BenchResult> {
  const vendor = await startChild('vendor');
  let svc: Child | undefined;
  const ws = await mkdtemp(join(tmpdir(), 'svc-bench-cli-'));
  try {
    svc = await startChild('svc', [vendor.url]);
    const { sides, target, rows } = await prepare(ws, vendor, svc);
    const names = Object.keys(sides) as Side[];
    const samples = Object.fromEntries(names.map((n) => [n, [] as Sample[]])) as Record<Side, Sample[]>;
    const v0 = await vendor.usage();
    for (let r = 0; r < WARMUP_ROUNDS + ROUNDS; r++) {
      for (const side of r % 2 ? [...names].reverse() : names) {
        const s = await sides[side]!();
        if (r >= WARMUP_ROUNDS) samples[side].push(s);
      }
    }
    const v1 = await vendor.usage();
    const expected = names.filter((n) => READS.includes(n)).length * (WARMUP_ROUNDS + ROUNDS);
    return report(samples, { target, rows, vendorCalls: v1.requests - v0.requests, expected });
  } finally {
    await svc?.stop();
    await vendor.stop();
    await rm(ws, { recursive: true, force: true });
  }
}

interface Facts {
  target: string;
  rows: number;
  vendorCalls: number;
  expected: number;
}

function report(s: Record<Side, Sample[]>, f: Facts): BenchResult {
  const line = (xs: Sample[], extra: string) => `p90 ${fmt(p90(xs))}; n=${xs.length}; ${extra}`;
  const { curl } = s;
  const run = s['svc run'];
  const node = s['node -e 0'];
  const version = s['svc --version'];
  const cold = s['phases (fresh node)'];
  const warm = s['phases (in-process)'];
  const own = p50(run) - p50(node);
  const entry = p50(version) - p50(node);
  const coldPhases = (['import', 'load', 'compile', 'post'] as const).map((k) => p50(cold, phase(k)));
  const rest = own - entry - coldPhases.reduce((a, b) => a + b, 0);
  const phaseNote = (xs: Sample[]) =>
    `import ${fmt(p50(xs, phase('import')))}, workspace ${fmt(p50(xs, phase('load')))}, compile ${fmt(p50(xs, phase('compile')))}, post ${fmt(p50(xs, phase('post')))} (p50s)`;
  const metrics: Metric[] = [
    curl
      ? { label: 'curl p50', value: p50(curl), unit: 'ms', note: line(curl, `curl -s GET ${f.target} on the vendor`) }
      : { label: 'curl (skipped)', value: 0, unit: 'count', note: 'curl is not installed; that side is left out' },
    { label: 'svc run p50', value: p50(run), unit: 'ms', note: line(run, `node dist/cli/main.js run -e '${PROGRAM}'`) },
    { label: 'svc --version p50', value: p50(version), unit: 'ms', note: line(version, 'no command module') },
    { label: 'node -e 0 p50', value: p50(node), unit: 'ms', note: line(node, 'bare node start') },
    {
      label: 'in-process compile + post p50',
      value: p50(warm, work),
      unit: 'ms',
      note: `p90 ${fmt(p90(warm, work))}; warm process, kept-alive connection; ${phaseNote(warm)}`,
    },
    {
      label: 'fresh node: phases p50 sum',
      value: coldPhases.reduce((a, b) => a + b, 0),
      unit: 'ms',
      note: `${phaseNote(cold)}; process p50 ${fmt(p50(cold))}`,
    },
    { label: "svc run's own work", value: own, unit: 'ms', note: 'svc run p50 - node -e 0 p50 (the target)' },
    {
      label: '  CLI entry',
      value: entry,
      unit: 'ms',
      note: 'svc --version p50 - node -e 0 p50: main, commander (loads no command module)',
    },
    { label: "  run's modules (import)", value: coldPhases[0]!, unit: 'ms', note: 'fresh node p50' },
    { label: '  workspace read (cold)', value: coldPhases[1]!, unit: 'ms', note: 'fresh node p50' },
    { label: '  compile (cold)', value: coldPhases[2]!, unit: 'ms', note: 'fresh node p50' },
    { label: '  post (new connection)', value: coldPhases[3]!, unit: 'ms', note: 'fresh node p50; server + vendor' },
    {
      label: '  the rest',
      value: rest,
      unit: 'ms',
      note: 'own work minus the above: options, the out/NNNN-run record (files + GET of the artifact), exit',
    },
    {
      label: 'own work minus warm compile + post',
      value: own - p50(warm, work),
      unit: 'ms',
      note: 'what a process costs over the same work in a running one (b - c - d)',
    },
    {
      label: 'rows per read',
      value: f.rows,
      unit: 'count',
      note: `${ROUNDS} rounds after ${WARMUP_ROUNDS} warm-up rounds, sides interleaved`,
    },
  ];
  const checks: Check[] = [
    {
      target: 'one vendor request per read (curl, svc run, phases)',
      pass: f.vendorCalls === f.expected,
      actual: `${f.vendorCalls} vendor requests for ${f.expected} reads`,
    },
    {
      target: `svc run's own work (process p50 minus bare node start p50) < ${TARGET_MS} ms`,
      pass: own < TARGET_MS,
      actual: `${fmt(own)} (${fmt(p50(run))} - ${fmt(p50(node))}); ${fmt(coldPhases[0]!)} of it importing run's modules${curl ? `; curl ${fmt(p50(curl))}` : ''}`,
    },
  ];
  return { metrics, checks };
}

// Run as a script (`node dist/bench/cli.bench.js`, cwd and SVC_WORKSPACE the workspace): the
// phases in this fresh process, as JSON on stdout.
if (process.argv[1] === SELF)
  phases(process.env).then(
    (p) => process.stdout.write(JSON.stringify(p)),
    (e: unknown) => {
      process.stderr.write(`${(e as Error)?.stack ?? String(e)}\n`);
      process.exitCode = 1;
    },
  );
