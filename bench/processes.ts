/**
 * Starting the servers of the HTTP benchmarks in child processes (`bench/serve-child.ts`) and
 * asking them for their CPU time, memory and received requests over IPC; or, for comparison,
 * in this process (`startInProcess`).
 */
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildMessage, ChildUsage } from './serve-child.js';

export interface Child {
  url: string;
  pid: number;
  usage(): Promise<ChildUsage>;
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 30_000;

/**
 * Fork `serve-child.js` (next to this module in dist/bench) and wait until it listens.
 * `SVC_BENCH_CPU_PROF=<dir>` profiles the children (`node --cpu-prof`, written when they stop).
 */
export async function startChild(
  kind: 'vendor' | 'svc' | 'mcp-floor',
  args: string[] = [],
  /** Another build's `dist/bench` (an A/B against it); default: this one's. */
  benchDir = import.meta.dirname,
  /** Added to this process's environment for the child (e.g. `SVC_MCP_TRANSPORT_KV_URL`). */
  env: Record<string, string> = {},
  /** Node flags for the child (e.g. `--expose-gc`, for heap readings after a full collection). */
  nodeArgs: string[] = [],
): Promise<Child> {
  const prof = process.env.SVC_BENCH_CPU_PROF;
  const execArgv = prof
    ? ['--cpu-prof', `--cpu-prof-dir=${prof}`, `--cpu-prof-name=${kind}-${Date.now()}.cpuprofile`, ...nodeArgs]
    : nodeArgs;
  const child: ChildProcess = fork(join(benchDir, 'serve-child.js'), [kind, ...args], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv,
    env: { ...process.env, ...env },
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`${kind} child did not start within ${START_TIMEOUT_MS} ms`));
    }, START_TIMEOUT_MS);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${kind} child exited with ${code} before listening`));
    });
    child.once('message', (m: ChildMessage) => {
      clearTimeout(timer);
      if (m.type === 'ready') resolve(m.url);
      else reject(new Error(`${kind} child sent ${JSON.stringify(m)} before ready`));
    });
  });
  child.removeAllListeners('exit');
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    url,
    pid: child.pid!,
    usage: () =>
      new Promise<ChildUsage>((resolve, reject) => {
        if (!child.connected) return reject(new Error(`${kind} child is gone`));
        child.once('message', (m: ChildMessage) =>
          m.type === 'usage' ? resolve(m) : reject(new Error(`unexpected message ${JSON.stringify(m)}`)),
        );
        child.send({ type: 'usage' });
      }),
    stop: () => stopChild(child, exited),
  };
}

/** CPU time (ms) a child spent between two usage readings. */
export function cpuMs(before: ChildUsage, after: ChildUsage): number {
  return (after.cpuUserUs + after.cpuSystemUs - before.cpuUserUs - before.cpuSystemUs) / 1000;
}

/** The same server in this process (sharing its event loop and CPU figures with everything else here). */
export async function startInProcess(kind: 'vendor' | 'svc', args: string[] = []): Promise<Child> {
  const { startServer } = await import('./serve-child.js');
  const s = await startServer(kind, args[0]);
  let closed = false;
  return {
    url: s.url,
    pid: process.pid,
    usage: async () => s.usage(),
    stop: async () => {
      if (!closed) {
        closed = true;
        await s.close();
      }
    },
  };
}

/** A small server script of `bench/` in its own process (forked with IPC; it sends `{type: 'ready', url}`). */
export interface Script {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * Fork `dist/bench/<name>.js <args>` and wait until it says it listens. `SVC_BENCH_CPU_PROF`
 * profiles it as `startChild` does.
 */
export async function startScript(name: string, args: string[] = []): Promise<Script> {
  const prof = process.env.SVC_BENCH_CPU_PROF;
  const execArgv = prof
    ? ['--cpu-prof', `--cpu-prof-dir=${prof}`, `--cpu-prof-name=${name}-${Date.now()}.cpuprofile`]
    : [];
  const child = fork(join(import.meta.dirname, `${name}.js`), args, {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv,
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`${name} did not start within ${START_TIMEOUT_MS} ms`));
    }, START_TIMEOUT_MS);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code} before listening`));
    });
    child.once('message', (m: { type?: string; url?: string }) => {
      clearTimeout(timer);
      if (m.type === 'ready' && m.url) resolve(m.url);
      else reject(new Error(`${name} sent ${JSON.stringify(m)} before ready`));
    });
  });
  child.removeAllListeners('exit');
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    url,
    pid: child.pid!,
    stop: () => stopChild(child, exited),
  };
}

let ticksPerSecond: number | undefined;

/**
 * CPU time (user + system, ms) a process has used so far, from `/proc/<pid>/stat` (Linux; the
 * resolution is one clock tick, usually 10 ms, so read it over runs of seconds).
 */
export function procCpuMs(pid: number): number {
  ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15)
  return (ticks / ticksPerSecond) * 1000;
}

/** Ask a forked child to stop (IPC `{type: 'stop'}`), killing it after 5 s; resolves once it exited. */
async function stopChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  if (child.connected) child.send({ type: 'stop' });
  const force = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(force);
}
