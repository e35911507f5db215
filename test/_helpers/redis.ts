/**
 * Test helper: a real, throwaway `redis-server` child process on 127.0.0.1 and a free port, with
 * nothing persisted (`--save '' --appendonly no`). `stop()` kills it, `restart()` starts it again on
 * the SAME port (an outage and a recovery, as a client sees them). With `{ persist: true }` it keeps
 * an append-only file (fsync on every write) in a temporary directory, so a restart comes back with
 * the data, as a production Redis with persistence on does after an outage. Tests never skip
 * silently: when `redis-server` is not installed, starting throws a one-line error saying how to
 * install it.
 *
 * @example
 * const redis = await startRedis(t); // killed in t's teardown
 * const repo = await RedisSessionRepository.connect(redis.url, {});
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, pings } from '../../bench/redis-server.js';

export interface TestRedis {
  /** `redis://127.0.0.1:<port>/0` */
  url: string;
  port: number;
  /** Kill the server (resolves once the process exited). */
  stop(): Promise<void>;
  /** Start it again on the same port (empty unless `persist`); resolves once PING answers. */
  restart(): Promise<void>;
}

export interface RedisOptions {
  /** Keep an append-only file (fsync always) that a restart loads: the data survives an outage. */
  persist?: boolean;
}

/** Anything with a teardown hook (a tap `Test`). */
interface Teardown {
  teardown(fn: () => unknown): void;
}

const NOT_FOUND = 'redis-server not found: run apt-get install -y redis-server';

// The free port and the PING probe are the benchmark's (bench/redis-server.ts): one copy.
export { freePort };

function assertInstalled(): void {
  const probe = spawnSync('redis-server', ['--version'], { stdio: 'ignore' });
  if (probe.error) throw new Error(NOT_FOUND);
}

/** `dir`: keep an append-only file there (written through on every command), else nothing. */
function launch(port: number, dir?: string): ChildProcess {
  const keep = dir ? ['--dir', dir, '--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no'];
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...keep];
  args.push('--protected-mode', 'no', '--loglevel', 'warning', '--daemonize', 'no');
  return spawn('redis-server', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** Wait until the server on `port` answers PING, or fail (it exited, or 5 s passed). */
async function ready(child: ChildProcess, port: number): Promise<void> {
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) throw new Error(`redis-server exited (${child.exitCode}): ${stderr.trim()}`);
    if (await pings(port)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`redis-server on port ${port} did not answer PING within 5 s`);
}

function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

/** A server on a free port; another process may take the port first, so try three ports. */
async function launchOnFreePort(dir?: string): Promise<{ port: number; child: ChildProcess }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const child = launch(port, dir);
    try {
      await ready(child, port);
      return { port, child };
    } catch (e) {
      await kill(child);
      if (attempt === 3) throw e;
    }
  }
}

/** Start a redis-server for a test; it is killed in `t`'s teardown (or call `stop()`). */
export async function startRedis(t?: Teardown, opts: RedisOptions = {}): Promise<TestRedis> {
  assertInstalled();
  const dir = opts.persist ? mkdtempSync(join(tmpdir(), 'svc-redis-')) : undefined;
  const started = await launchOnFreePort(dir);
  const port = started.port;
  let child = started.child;
  const redis: TestRedis = {
    url: `redis://127.0.0.1:${port}/0`,
    port,
    stop: () => kill(child),
    restart: async () => {
      await kill(child);
      child = launch(port, dir);
      await ready(child, port);
    },
  };
  // A crashed test process must not leave a server behind.
  process.once('exit', () => child.kill('SIGKILL'));
  t?.teardown(async () => {
    await redis.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  return redis;
}
