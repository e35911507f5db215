/**
 * Abuse at the connection level, over raw sockets: clients that hang up mid-upload or stall until
 * the request timeout are one info line each (never an error with a stack trace); a body over the
 * limit, chunked or declared, is refused with `Connection: close` and the connection is closed
 * rather than kept open unread; a client that never finishes its headers is cut off.
 */
import t from 'tap';
import { connect, type Socket } from 'node:net';
import type { Logger } from '../../../common/log.js';
import { startStack } from '../../_helpers/server.js';

/** A logger that keeps its lines by level. */
function collect(): Logger & { lines: Record<'debug' | 'info' | 'warn' | 'error', string[]> } {
  const lines = { debug: [] as string[], info: [] as string[], warn: [] as string[], error: [] as string[] };
  return {
    lines,
    debug: (m) => lines.debug.push(m),
    info: (m) => lines.info.push(m),
    warn: (m) => lines.warn.push(m),
    error: (m) => lines.error.push(m),
  };
}

function socketTo(base: string): Promise<Socket> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const s = connect(Number(u.port), u.hostname, () => resolve(s));
    s.on('error', reject);
  });
}

/** Everything the server sends until it closes the connection. */
function untilClosed(s: Socket): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    s.setEncoding('utf8');
    s.on('data', (c: string) => {
      text += c;
    });
    s.on('close', () => resolve(text));
    s.on('error', () => {
      /* a reset after the answer */
    });
  });
}

async function until(what: string, probe: () => boolean): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (probe()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`gave up waiting for ${what}`);
}

const partialUpload = (host: string) =>
  `POST /execute HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"entry_id": "brew`;

t.test('50 uploads that hang up midway are 50 one-line info entries, no error', async (t) => {
  const logger = collect();
  const stack = await startStack(t, { logger });
  const host = new URL(stack.url).host;
  for (let i = 0; i < 50; i++) {
    const s = await socketTo(stack.url);
    s.write(partialUpload(host));
    await new Promise((r) => setTimeout(r, 5));
    s.destroy();
  }
  await until('50 log lines', () => logger.lines.info.length + logger.lines.error.length >= 50);
  t.same(logger.lines.error, [], 'no error entry');
  t.equal(logger.lines.info.length, 50, 'one info entry per hang-up');
  t.ok(
    logger.lines.info.every((l) => /^client closed the connection during POST \/execute/.test(l) && !l.includes('\n')),
    'each is one line naming the request',
  );
  t.equal((await fetch(`${stack.url}/v1/health`)).status, 200, 'the server is fine');
});

t.test('an upload that stalls past the request timeout: node answers 408, the log has one info line', async (t) => {
  const logger = collect();
  const stack = await startStack(t, { logger, timeouts: { requestMs: 400, headersMs: 400 } });
  const s = await socketTo(stack.url);
  const answer = untilClosed(s);
  s.write(partialUpload(new URL(stack.url).host));
  const text = await answer;
  t.match(text, /^HTTP\/1\.1 408 /, 'node answers 408 and closes');
  await until('the log line', () => logger.lines.info.length + logger.lines.error.length >= 1);
  t.same(logger.lines.error, [], 'no error entry');
  t.match(logger.lines.info[0], /^client closed the connection during POST \/execute/);
});

t.test('a chunked body over the limit: 413 with Connection: close, and the connection is closed', async (t) => {
  const stack = await startStack(t);
  const s = await socketTo(stack.url);
  const answer = untilClosed(s);
  s.write(
    `POST /execute HTTP/1.1\r\nHost: ${new URL(stack.url).host}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive\r\n\r\n`,
  );
  const chunk = 'x'.repeat(64 * 1024);
  for (let i = 0; i < 20 && !s.destroyed; i++) s.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
  const text = await answer;
  t.match(text, /^HTTP\/1\.1 413 /, '413');
  t.match(text, /\r\nconnection: close\r\n/i, 'Connection: close');
  t.match(text, /body_too_large/);
});

t.test('a declared Content-Length over the limit: 413 with Connection: close before any body is read', async (t) => {
  const stack = await startStack(t);
  const s = await socketTo(stack.url);
  const answer = untilClosed(s);
  s.write(
    `POST /execute HTTP/1.1\r\nHost: ${new URL(stack.url).host}\r\nContent-Type: application/json\r\nContent-Length: 5000000\r\n\r\n{`,
  );
  const text = await answer;
  t.match(text, /^HTTP\/1\.1 413 /);
  t.match(text, /\r\nconnection: close\r\n/i);
});

t.test(
  'a client that never finishes its headers is cut off after the headers timeout',
  { timeout: 20_000 },
  async (t) => {
    const stack = await startStack(t, { timeouts: { headersMs: 300, requestMs: 60_000 } });
    const s = await socketTo(stack.url);
    const answer = untilClosed(s);
    s.write(`GET /v1/health HTTP/1.1\r\nHost: ${new URL(stack.url).host}\r\nX-Slow: `);
    const text = await answer;
    t.match(text, /^HTTP\/1\.1 408 /, 'cut off with 408 long before the 60 s request timeout');
  },
);
