/**
 * Where svc's CPU goes on the hot path: runs svc (and the demo vendor) in child processes under
 * `node --cpu-prof`, sends the `hotpath` benchmark's clean read (`e3`, 25 rows) at 10 connections
 * (or as many as asked: 1 shows the sequential path) for a while, stops svc (the profile is
 * written when it exits) and prints the top self-time entries of svc's profile, by function and
 * by file or package, as shares of its busy samples.
 *
 *   npm run build --silent && node dist/bench/profile-hotpath.js [seconds=10] [toon|json] [top=30] [conns=10]
 *   node dist/bench/profile-hotpath.js --read <file.cpuprofile> [top=30]   (an existing profile)
 *
 * The profile is kept (its path is printed) for Chrome DevTools or speedscope. Start-up (module
 * loading: `compileSourceTextModule`, `openFileHandle`, ...) is in it too: profile for 20 s or
 * more so it stays small. `SVC_BENCH_BASELINE=<dir>` profiles svc of another build
 * (`<dir>/dist/bench/serve-child.js`), for a before/after under the same machine load.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Pool } from 'undici';
import { load, prepareSvc, type Target } from './hotpath.bench.js';
import { startChild } from './processes.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Where a frame belongs: an npm package, a Node core module, svc's own file, or a V8 pseudo-frame. */
function place(url: string, root: string): string {
  if (!url) return '';
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 14).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.startsWith('node:')) return url;
  return relative(root, url.replace(/^file:\/\//, '')).replace(/^dist\//, '');
}

/** Self time per `place` + function and per `place`, in µs, with the busy total (idle left out). */
export function summarize(p: Profile, root: string) {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  for (let i = 0; i < p.samples.length; i++) self.set(p.samples[i]!, (self.get(p.samples[i]!) ?? 0) + p.timeDeltas[i]!);
  const fn = new Map<string, number>();
  const file = new Map<string, number>();
  let busy = 0;
  for (const [id, us] of self) {
    const f = byId.get(id)!.callFrame;
    if (f.functionName === '(idle)') continue;
    busy += us;
    const where = place(f.url, root);
    const key = where ? `${where} ${f.functionName || '(anonymous)'}:${f.lineNumber + 1}` : f.functionName;
    fn.set(key, (fn.get(key) ?? 0) + us);
    const group = where.startsWith('node:') ? 'node: (core)' : where || f.functionName;
    file.set(group, (file.get(group) ?? 0) + us);
  }
  const top = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]);
  return { busy, functions: top(fn), files: top(file) };
}

function print(path: string, top: number, requests?: number): void {
  const p = JSON.parse(readFileSync(path, 'utf8')) as Profile;
  const { busy, functions, files } = summarize(p, join(import.meta.dirname, '..', '..'));
  const per = requests ? `, ${((busy / requests) | 0).toLocaleString('en')} µs per request over ${requests}` : '';
  const line = ([k, us]: [string, number]) =>
    `  ${((100 * us) / busy).toFixed(1).padStart(5)} %  ${(us / 1000).toFixed(0).padStart(6)} ms  ${k}`;
  process.stdout.write(`profile ${path}\nbusy ${(busy / 1000).toFixed(0)} ms${per}\n\nself time by file or package\n`);
  process.stdout.write(files.slice(0, top).map(line).join('\n') + '\n\nself time by function\n');
  process.stdout.write(functions.slice(0, top).map(line).join('\n') + '\n');
}

async function main(args: string[]): Promise<void> {
  if (args[0] === '--read') return print(args[1]!, Number(args[2] ?? 30));
  const seconds = Number(args[0] ?? 10);
  const format = args[1] === 'json' ? 'json' : 'toon';
  const top = Number(args[2] ?? 30);
  const connections = Number(args[3] ?? 10);
  const dir = mkdtempSync(join(tmpdir(), 'svc-prof-'));
  const vendor = await startChild('vendor');
  process.env.SVC_BENCH_CPU_PROF = dir;
  const baseline = process.env.SVC_BENCH_BASELINE;
  // As in `hotpath`: no diagnostics subscriber in svc (SVC_BENCH_TIMINGS=0).
  const svc = await startChild('svc', [vendor.url], baseline ? join(baseline, 'dist', 'bench') : undefined, {
    SVC_BENCH_TIMINGS: '0',
  });
  delete process.env.SVC_BENCH_CPU_PROF;
  let requests = 0;
  try {
    const { path } = await prepareSvc(vendor, svc);
    const t: Target = {
      name: `svc ${format}`,
      pid: svc.pid,
      origin: svc.url,
      method: 'POST',
      path,
      headers: { 'content-type': 'text/plain', ...(format === 'json' ? { accept: 'application/json' } : {}) },
      body: 'e3',
    };
    const pool = new Pool(svc.url, { connections });
    const r = await load(t, pool, vendor.pid, connections, seconds);
    requests = r.ok;
    await pool.close();
    process.stdout.write(
      `${r.ok} requests in ${seconds} s (${r.rps.toFixed(0)} req/s, ${(r.cpu * 1000).toFixed(0)} µs CPU each)\n`,
    );
  } finally {
    await svc.stop();
    await vendor.stop();
  }
  const file = readdirSync(dir).find((f) => f.startsWith('svc-'));
  if (!file) throw new Error(`no svc profile written in ${dir}`);
  print(join(dir, file), top, requests);
}

main(process.argv.slice(2)).catch((e: unknown) => {
  process.stderr.write(`profile-hotpath failed: ${(e as Error)?.stack ?? String(e)}\n`);
  process.exitCode = 1;
});
