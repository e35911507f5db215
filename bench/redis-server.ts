/**
 * A throwaway `redis-server` for a benchmark: its own process on 127.0.0.1 and a free port,
 * nothing persisted (`--save '' --appendonly no`), never the system Redis on 6379. Ready once a
 * raw `PING` answers `+PONG`; `stop()` kills it. `command()` sends one command over a raw
 * RESP connection (for the benchmark's own readings: INFO, HSTRLEN; svc uses ioredis). When `redis-server` is not installed, starting
 * throws `RedisMissing` with the one line saying how to install it (a benchmark must not skip).
 *
 * @example
 * const redis = await startRedisServer();
 * try { ... redis.url ... } finally { await redis.stop(); }
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createConnection, createServer, type AddressInfo } from 'node:net';

export interface RedisServer {
  /** `redis://127.0.0.1:<port>/0` */
  url: string;
  port: number;
  pid: number;
  /** Send one command on a new connection; resolves to its reply (simple, integer or bulk) as text. */
  command(args: string[]): Promise<string>;
  /** Kill the server; resolves once it exited. */
  stop(): Promise<void>;
}

/** `redis-server` is not on the PATH; the message is the one line to print. */
export class RedisMissing extends Error {
  constructor() {
    super('redis-server not found: apt-get install -y redis-server');
  }
}

/** A TCP port free on 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', ok);
  });
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((ok) => server.close(() => ok()));
  return port;
}

/** True when a `PING` on a raw socket answers `+PONG` within `ms`. */
export function pings(port: number, ms = 200): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), ms);
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (d) => done(d.toString().startsWith('+PONG')));
  });
}

/** One reply from the start of `buf`: its text, an Error for `-ERR`, or undefined while incomplete. */
function parseReply(buf: Buffer): string | Error | undefined {
  const eol = buf.indexOf('\r\n');
  if (eol < 0) return undefined;
  const head = buf.subarray(1, eol).toString();
  const type = String.fromCharCode(buf[0]!);
  if (type === '+' || type === ':') return head;
  if (type === '-') return new Error(`redis: ${head}`);
  if (type !== '$') return new Error(`redis: a reply of type ${type} is not read here`);
  const n = Number(head);
  if (n < 0) return '';
  if (buf.length < eol + 2 + n + 2) return undefined;
  return buf.subarray(eol + 2, eol + 2 + n).toString();
}

function command(port: number, args: string[]): Promise<string> {
  const request = `*${args.length}\r\n` + args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('');
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let buf = Buffer.alloc(0);
    const done = (r: string | Error) => {
      clearTimeout(timer);
      socket.destroy();
      if (r instanceof Error) reject(r);
      else resolve(r);
    };
    const timer = setTimeout(() => done(new Error(`redis: no reply to ${args[0]} within 5 s`)), 5_000);
    socket.once('error', done);
    socket.once('connect', () => socket.write(request));
    socket.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      const r = parseReply(buf);
      if (r !== undefined) done(r);
    });
  });
}

function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

/** Start one on `port`; resolves once it answers PING, fails when it exits or 5 s pass. */
async function launch(port: number): Promise<ChildProcess> {
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
  args.push('--protected-mode', 'no', '--loglevel', 'warning', '--daemonize', 'no');
  const child = spawn('redis-server', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.on('error', () => undefined); // reported through exitCode below
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) throw new Error(`redis-server exited (${child.exitCode}): ${stderr.trim()}`);
    if (await pings(port)) return child;
    await new Promise((r) => setTimeout(r, 50));
  }
  await kill(child);
  throw new Error(`redis-server on port ${port} did not answer PING within 5 s`);
}

/** Start a redis-server on a free port (three tries: another process may take the port first). */
export async function startRedisServer(): Promise<RedisServer> {
  if (spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).error) throw new RedisMissing();
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    let child: ChildProcess;
    try {
      child = await launch(port);
    } catch (e) {
      if (attempt === 3) throw e;
      continue;
    }
    // A crashed benchmark process must not leave a server behind.
    const onExit = () => child.kill('SIGKILL');
    process.once('exit', onExit);
    return {
      url: `redis://127.0.0.1:${port}/0`,
      port,
      pid: child.pid!,
      command: (args) => command(port, args),
      stop: async () => {
        process.off('exit', onExit);
        await kill(child);
      },
    };
  }
}
