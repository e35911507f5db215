/**
 * Background operations under load: 50 execute sessions each start 16 operations at once
 * (`POST /execute/{ph}/{s}?wait=false`, program `e1(limit=25)`, one vendor request of 25 rows)
 * and poll every one with `wait(oN)` until it ends. Every operation must end `!` (succeeded,
 * 25 rows): zero errors. Reports operations per second (start of the first to the last `!`
 * seen) and the svc server's peak RSS.
 *
 * svc runs in a child process (`bench/serve-child.ts`), so the RSS it reports is the server's
 * alone; the json-server vendor runs in another child; this process is the client.
 */
import { Pool } from 'undici';
import { median, type Benchmark, type BenchResult, type Check, type Metric } from './harness.js';
import { cpuMs, startChild, type Child } from './processes.js';

export const benchmark: Benchmark = {
  name: 'ops',
  title: 'background operations: 50 sessions x 16 wait=false runs, polled with wait(oN) to the end',
  run,
};

const SESSIONS = 50;
const OPS_PER_SESSION = 16;
const PROGRAM = 'e1(limit=25)';
const ROWS = 25;
/**
 * Each operation is polled at once after its start, then every POLL_MS until it ends (agents
 * poll every 3-5 s; the benchmark wants the server's rate, and running answers `~`/`=` too).
 */
const POLL_MS = 50;
const ROUNDS = 5;
const WARMUP_SESSIONS = SESSIONS;
/** Client connections to svc. */
const CONNECTIONS = 32;
const PEAK_RSS_LIMIT = 512 * 1024 * 1024;

interface Counters {
  polls: number;
  signs: Record<string, number>;
  errors: string[];
}

interface Answer {
  status: number;
  text: string;
}

async function post(pool: Pool, path: string, body: string, type: string, accept: string): Promise<Answer> {
  const res = await pool.request({ method: 'POST', path, headers: { 'content-type': type, accept }, body });
  return { status: res.statusCode, text: await res.body.text() };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function openSession(pool: Pool): Promise<string> {
  const a = await post(
    pool,
    '/execute',
    JSON.stringify({ entry_id: 'brewery' }),
    'application/json',
    'application/json',
  );
  const b = JSON.parse(a.text) as { prompt_hash?: string; session?: string };
  if (a.status !== 201 || !b.prompt_hash || !b.session)
    throw new Error(`POST /execute answered ${a.status}: ${a.text.slice(0, 200)}`);
  return `/execute/${b.prompt_hash}/${b.session}`;
}

/** Start one operation and poll it to its end; returns when it ended (or failed). */
async function operation(pool: Pool, session: string, c: Counters): Promise<void> {
  const fail = (why: string) => {
    c.errors.push(why);
  };
  try {
    const start = await post(pool, `${session}?wait=false`, PROGRAM, 'text/plain', 'text/plain');
    const handle = /^\+ (o\d+) started:/.exec(start.text)?.[1];
    if (start.status !== 202 || !handle || !start.text.includes(`wait(${handle})`))
      return fail(`start answered ${start.status}: ${start.text.split('\n')[0]}`);
    c.signs['+'] = (c.signs['+'] ?? 0) + 1;
    for (let first = true; ; first = false) {
      if (!first) await sleep(POLL_MS);
      const a = await post(pool, session, `wait(${handle})`, 'text/plain', 'text/plain');
      c.polls++;
      const line = a.text.split('\n')[0] ?? '';
      const sign = line[0] ?? '';
      c.signs[sign] = (c.signs[sign] ?? 0) + 1;
      if (a.status !== 200) return fail(`wait(${handle}) answered ${a.status}: ${line}`);
      if (!line.startsWith(`${sign} ${handle} `)) return fail(`wait(${handle}) answered another handle: ${line}`);
      if (sign === '~' || sign === '=') continue;
      if (sign !== '!') return fail(`${handle} ended ${line}`);
      if (!line.includes(`${ROWS} rows`) || !a.text.includes(`brewery:Brewery: ${ROWS} of `))
        return fail(`${handle} succeeded without ${ROWS} rows: ${line}`);
      return;
    }
  } catch (e) {
    fail(`request failed: ${(e as Error).message}`);
  }
}

interface Round {
  ops: number;
  ms: number;
  counters: Counters;
  svcCpuMs: number;
}

/** `sessions` sessions (opened first, untimed), each starting OPS_PER_SESSION operations at once. */
async function round(pool: Pool, svc: Child, sessions: number): Promise<Round> {
  const paths: string[] = [];
  for (let i = 0; i < sessions; i++) paths.push(await openSession(pool));
  const counters: Counters = { polls: 0, signs: {}, errors: [] };
  const u0 = await svc.usage();
  const t0 = performance.now();
  await Promise.all(paths.flatMap((p) => Array.from({ length: OPS_PER_SESSION }, () => operation(pool, p, counters))));
  const ms = performance.now() - t0;
  const u1 = await svc.usage();
  return { ops: sessions * OPS_PER_SESSION, ms, counters, svcCpuMs: cpuMs(u0, u1) };
}

const MiB = (n: number) => `${(n / 2 ** 20).toFixed(1)} MiB`;

async function run(): Promise<BenchResult> {
  const vendor = await startChild('vendor');
  let svc: Child | undefined;
  let client: Pool | undefined;
  try {
    // Every operation of a round runs at once: above the server's default cap of 64 running.
    svc = await startChild('svc', [vendor.url], undefined, { SVC_MAX_RUNNING_OPS: String(SESSIONS * OPS_PER_SESSION) });
    client = new Pool(svc.url, { connections: CONNECTIONS });
    const idle = await svc.usage();
    await round(client, svc, WARMUP_SESSIONS); // warm-up: not counted (its memory is part of the peak)
    const rounds: Round[] = [];
    for (let r = 0; r < ROUNDS; r++) rounds.push(await round(client, svc, SESSIONS));
    const end = await svc.usage();
    const rates = rounds.map((r) => (r.ops / r.ms) * 1000);
    const opsPerSec = median(rates);
    const errors = rounds.flatMap((r) => r.counters.errors);
    const total = rounds.reduce((n, r) => n + r.ops, 0);
    const signs: Record<string, number> = {};
    for (const r of rounds) for (const [k, v] of Object.entries(r.counters.signs)) signs[k] = (signs[k] ?? 0) + v;
    const polls = rounds.reduce((n, r) => n + r.counters.polls, 0);
    const cpuPerOp = rounds.reduce((n, r) => n + r.svcCpuMs, 0) / total;
    const metrics: Metric[] = [
      {
        label: 'operations per round',
        value: SESSIONS * OPS_PER_SESSION,
        unit: 'count',
        note: `${SESSIONS} sessions x ${OPS_PER_SESSION}, started at once; ${ROUNDS} rounds after a warm-up round of ${WARMUP_SESSIONS} sessions`,
      },
      {
        label: 'operations/s',
        value: Math.round(opsPerSec),
        unit: 'count',
        note: `median; rounds: ${rates.map((x) => Math.round(x)).join(', ')} (${rounds.map((r) => (r.ms / 1000).toFixed(2) + ' s').join(', ')})`,
      },
      {
        label: 'polls',
        value: polls,
        unit: 'count',
        note: `wait(oN) at once, then every ${POLL_MS} ms; lines seen: ${Object.entries(signs)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')} (+ = accept lines)`,
      },
      { label: 'svc CPU per operation', value: cpuPerOp * 1000, unit: 'us', note: 'start + polls + run, svc process' },
      { label: 'svc RSS idle', value: idle.rss, unit: 'bytes', note: 'after startup, before any load' },
      {
        label: 'svc peak RSS',
        value: end.peakRss,
        unit: 'bytes',
        note: `getrusage maxrss of the svc process; RSS at the end ${MiB(end.rss)}, heap used ${MiB(end.heapUsed)}, ${end.artifacts ?? 0} run snapshots held`,
      },
    ];
    const checks: Check[] = [
      {
        target: 'zero errors: every operation accepted (+) and ended succeeded (!) with 25 rows',
        pass: errors.length === 0 && signs['!'] === total,
        actual: `${errors.length} errors, ${signs['!'] ?? 0} of ${total} ended !${errors.length ? `; first: ${errors[0]}` : ''}`,
      },
      {
        target: `svc peak RSS under ${MiB(PEAK_RSS_LIMIT)}`,
        pass: end.peakRss < PEAK_RSS_LIMIT,
        actual: MiB(end.peakRss),
      },
    ];
    return { metrics, checks };
  } finally {
    await client?.close();
    await svc?.stop();
    await vendor.stop();
  }
}
