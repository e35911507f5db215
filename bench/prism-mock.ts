/**
 * A Prism mock (`@stoplight/prism-cli`, a dev dependency) of one OpenAPI document for the import
 * truth check: its own process on 127.0.0.1 and a free port, ready once it answers an HTTP request
 * (polled), behind a small recording proxy that keeps, per request, the method, the target, the
 * status and the violations Prism found in the request (its `sl-violations` header). svc is pointed
 * at the proxy; `stop()` closes the proxy and kills the process.
 *
 * @example
 * const mock = await startPrismMock('fixtures/openapi/petstore.json');
 * try { ... mock.url ... mock.calls ... } finally { await mock.stop(); }
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { freePort } from './redis-server.js';

/** One violation Prism reports in `sl-violations` (`location` is e.g. `["request", "body"]`). */
export interface PrismViolation {
  location?: string[];
  severity: string;
  code: string | number;
  message: string;
}

/** One request svc sent through the proxy. */
export interface RecordedCall {
  method: string;
  target: string;
  status: number;
  /** The request's violations of severity `Error` (warnings are not a failed request). */
  violations: PrismViolation[];
  /**
   * Violations of Prism's own answer against the document's response schema (an example that
   * contradicts its schema): the answer svc read was not what the document promises.
   */
  responseViolations: PrismViolation[];
  /** Set when Prism could not answer a valid request itself (a 5xx problem: `Schema too complex`). */
  mockError?: string;
}

export interface PrismMock {
  /** Base URL of the recording proxy in front of Prism. */
  url: string;
  pid: number;
  /** Every request so far, in arrival order. */
  calls: RecordedCall[];
  stop(): Promise<void>;
}

export interface PrismOptions {
  /** Most milliseconds to wait for Prism to answer its first request (default 60 000). */
  startMs?: number;
}

/** Prism did not start: its exit code or the wait ran out, with the end of what it printed. */
export class PrismFailed extends Error {}

function prismBin(): string {
  const pkg = createRequire(import.meta.url).resolve('@stoplight/prism-cli/package.json');
  return join(dirname(pkg), 'dist', 'index.js');
}

/** Start Prism's static mock of `document` and a recording proxy before it. */
export async function startPrismMock(document: string, opts: PrismOptions = {}): Promise<PrismMock> {
  const port = await freePort();
  const child = spawn(process.execPath, [prismBin(), 'mock', '-h', '127.0.0.1', '-p', String(port), document], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (b: Buffer) => {
    output = (output + b.toString()).slice(-4000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  try {
    await ready(child, port, opts.startMs ?? 60_000, () => output);
  } catch (e) {
    await kill(child);
    throw e;
  }
  const calls: RecordedCall[] = [];
  const proxy = await recordingProxy(port, calls);
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    pid: child.pid!,
    calls,
    stop: async () => {
      await new Promise<void>((ok) => proxy.close(() => ok()));
      await kill(child);
    },
  };
}

/** Polls `port` until Prism answers any HTTP request; fails when the process exits or time runs out. */
async function ready(child: ChildProcess, port: number, ms: number, output: () => string): Promise<void> {
  const until = Date.now() + ms;
  const tail = () => output().trim().split('\n').slice(-3).join(' | ').slice(0, 600);
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new PrismFailed(`prism exited (${child.exitCode}): ${tail()}`);
    try {
      await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(1000) });
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  throw new PrismFailed(`prism did not answer within ${ms} ms: ${tail()}`);
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((ok) => child.once('exit', () => ok()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
  await exited;
  clearTimeout(timer);
}

/**
 * The request's violations Prism reports: in the `sl-violations` header, or, when Prism answers
 * the request itself (a 401 for missing credentials, a 422 for an invalid request the document
 * declares no answer to, a 404 for a path it does not serve), in its problem body: the
 * `validation` list, else the problem's title. Violations of Prism's own generated response
 * (`location[0]` is `response`) and warnings are left out: they are not the request's.
 */
function violationsOf(res: IncomingMessage, body: string): PrismViolation[] {
  const h = res.headers['sl-violations'];
  let all: unknown;
  try {
    if (typeof h === 'string') all = JSON.parse(h);
    else if (/problem\+json/.test(String(res.headers['content-type']))) all = prismProblem(JSON.parse(body));
  } catch {
    return [{ location: ['request'], severity: 'Error', code: 'unparsed', message: String(h ?? body).slice(0, 300) }];
  }
  if (!Array.isArray(all)) return [];
  return (all as PrismViolation[]).filter(
    (v) => v.severity === 'Error' && (!Array.isArray(v.location) || v.location[0] !== 'response'),
  );
}

const PRISM_ERROR = /^https:\/\/stoplight\.io\/prism\/errors#(\w+)/;

/** The violations of a problem Prism wrote itself (its `type` is one of Prism's errors). */
function prismProblem(p: { type?: unknown; title?: unknown; status?: unknown; validation?: unknown }): unknown {
  if (Array.isArray(p.validation)) return p.validation;
  const m = PRISM_ERROR.exec(String(p.type));
  return m ? [{ location: ['request'], severity: 'Error', code: m[1], message: String(p.title) }] : [];
}

/** The violations of severity `Error` Prism found in its own answer (`location[0]` is `response`). */
function responseViolationsOf(res: IncomingMessage): PrismViolation[] {
  const h = res.headers['sl-violations'];
  try {
    const all: unknown = typeof h === 'string' ? JSON.parse(h) : [];
    return Array.isArray(all)
      ? (all as PrismViolation[]).filter((v) => v.severity === 'Error' && v.location?.[0] === 'response')
      : [];
  } catch {
    return [];
  }
}

/** The title of a problem Prism wrote itself when it could not answer (a 5xx of Prism's own). */
function mockFailure(res: IncomingMessage, body: string): string | undefined {
  if (!/problem\+json/.test(String(res.headers['content-type']))) return undefined;
  try {
    const p = JSON.parse(body) as { type?: unknown; title?: unknown; detail?: unknown };
    return PRISM_ERROR.test(String(p.type)) ? `${String(p.title)}: ${String(p.detail)}` : undefined;
  } catch {
    return undefined;
  }
}

/** A proxy on a free port forwarding every request to Prism on `port`, recording each. */
async function recordingProxy(port: number, calls: RecordedCall[]): Promise<Server> {
  const server = createServer((req, res) => {
    const call: RecordedCall = {
      method: req.method ?? '',
      target: req.url ?? '',
      status: 0,
      violations: [],
      responseViolations: [],
    };
    calls.push(call);
    const out = request(
      {
        host: '127.0.0.1',
        port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: `127.0.0.1:${port}` },
      },
      (up) => {
        call.status = up.statusCode ?? 0;
        const chunks: Buffer[] = [];
        up.on('data', (c: Buffer) => chunks.push(c));
        up.on('end', () => {
          const body = Buffer.concat(chunks);
          const text = call.status >= 400 ? body.toString() : '';
          call.violations = call.status >= 500 ? [] : violationsOf(up, text);
          call.responseViolations = responseViolationsOf(up);
          const failed = call.status >= 500 ? mockFailure(up, text) : undefined;
          if (failed) call.mockError = failed;
          res.writeHead(call.status, up.headers).end(body);
        });
      },
    );
    out.on('error', (e) => {
      call.status = 502;
      res.writeHead(502).end(String(e));
    });
    req.pipe(out);
  });
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', ok);
  });
  return server;
}
