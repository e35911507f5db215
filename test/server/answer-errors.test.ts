/**
 * answerFailure over a real socket: a value thrown after the request's body was read (while a
 * run or its rendering goes on) is answered `internal_error`. Node destroys a request once its
 * body is read, and that used to be taken for a client hang-up: the request was never answered
 * (issue 41 item 4, a vendor answer nested 10,000 deep). The thrown value itself is the one test
 * double: a real route throws an unexpected error only on a bug.
 */
import t from 'tap';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { requestUrl } from '../../common/request-target.js';
import { answerFailure } from '../../server/answer-errors.js';
import { readBody } from '../../server/http/body.js';

const logged: string[] = [];
const logger = {
  debug: () => undefined,
  info: (m: string) => void logged.push(`info ${m}`),
  warn: (m: string) => void logged.push(`warn ${m}`),
  error: (m: string) => void logged.push(`error ${m}`),
};

const server = createServer((req, res) => {
  void (async () => {
    await readBody(req);
    // The request stream has ended: node has destroyed it, while the client waits for its answer.
    if (!req.destroyed) await new Promise((r) => req.once('close', r));
    const url = requestUrl(req.url ?? '/', 'http://svc.invalid');
    answerFailure(req, res, url, new RangeError('Maximum call stack size exceeded'), 7, logger);
  })();
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
t.teardown(() => new Promise<void>((r) => server.close(() => r())));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

for (const [path, accept] of [
  ['/execute/ph/sid', 'application/json'],
  ['/v1/registry', 'application/json'],
] as const) {
  t.test(`a throw after the body was read is answered internal_error (${path})`, async (t) => {
    logged.length = 0;
    // A liveness bound only: before the fix no answer ever came.
    const res = await fetch(base + path, {
      method: 'POST',
      body: 'e1("b-1")',
      headers: { accept, 'content-type': 'text/plain' },
      signal: AbortSignal.timeout(20_000),
    });
    t.equal(res.status, 500);
    t.equal(res.headers.get('x-request-id'), 'r7', 'the request id the log line carries');
    const body = (await res.json()) as { code?: string; errors?: Array<{ code: string; hint: string }> };
    const e = body.errors?.[0] ?? (body as { code: string; hint: string });
    t.equal(e.code, 'internal_error');
    t.match(e.hint, /the server log has the details \(request r7\)/);
    t.notMatch(JSON.stringify(body), /Maximum call stack|RangeError/, 'no error text of the server');
    t.equal(logged.length, 1);
    t.match(logged[0], /^error internal error on POST .*RangeError: Maximum call stack size exceeded/, 'logged');
  });
}
