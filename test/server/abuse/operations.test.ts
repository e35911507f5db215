/**
 * Abuse of background operations, over real sockets: many runs against a vendor that never
 * answers must not starve synchronous reads (they run on their own connection pool), the server
 * caps running operations in all, background runs have their own deadline, and a SIGTERM cancels
 * what still runs when the grace ends: streams get their terminal `x`, the runs are stored, and
 * the process exits within the grace.
 */
import t, { type Test } from 'tap';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { startFaultVendor, type FaultVendor } from '../../_helpers/fault-vendor.js';
import { serve } from '../../_helpers/cli.js';
import { call, codeOf, openSession, runProgram, startStack } from '../../_helpers/server.js';

const NO_RETRY = { retries: 0, baseDelayMs: 1, maxDelayMs: 1, budgetMs: 1 };
const BREWERY = {
  id: 'b-1',
  name: 'Brewery One',
  city: 'Ghent',
  country: 'BE',
  kind: 'micro',
  founded: 2001,
  website: 'https://b.example',
};

/** A vendor whose beers never come (the request hangs) while breweries answer at once. */
async function hangingBeers(t: Test): Promise<FaultVendor> {
  const vendor = await startFaultVendor({ 'GET /beers': { hang: true }, 'GET /breweries/:id': { json: BREWERY } });
  t.teardown(() => vendor.close());
  return vendor;
}

async function until(what: string, probe: () => boolean | Promise<boolean>, tries = 400, every = 25): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await probe()) return;
    await new Promise((r) => setTimeout(r, every));
  }
  throw new Error(`gave up waiting for ${what}`);
}

// The vendor requests of the background runs would hold their connections for a minute; a read
// that had to wait for one of them would outlast the test's own 30 s timeout.
t.test(
  '80 background runs hanging on the vendor do not starve a synchronous read of the same vendor',
  { timeout: 30_000 },
  async (t) => {
    const vendor = await hangingBeers(t);
    const stack = await startStack(t, {
      vendorUrl: vendor.url,
      runtime: { requestTimeoutMs: 60_000, retry: NO_RETRY },
      limits: { maxRunningOps: 80 },
    });
    for (let s = 0; s < 5; s++) {
      const { path } = await openSession(stack.url, { entry_id: 'brewery' });
      for (let i = 0; i < 16; i++)
        t.equal((await runProgram(stack.url, path, `e2(name="hang-${s}-${i}")[name]`, 'wait=false')).status, 202);
    }
    await until('64 hanging vendor requests', () => vendor.hits('/beers').length >= 64);
    const { path } = await openSession(stack.url, { entry_id: 'brewery' });
    const read = await runProgram(stack.url, path, 'e1("b-1")[name]');
    t.equal(read.status, 200, 'the read is answered while 64 background requests hold the vendor');
    t.same(read.body.rows, [{ name: 'Brewery One' }]);
    t.equal((await call(stack.url, '/v1/health')).body.operations.running, 80, 'all 80 still run');
  },
);

t.test('the server caps running background operations in all (SVC_MAX_RUNNING_OPS)', async (t) => {
  const vendor = await hangingBeers(t);
  const stack = await startStack(t, { vendorUrl: vendor.url, limits: { maxRunningOps: 3 } });
  const a = await openSession(stack.url, { entry_id: 'brewery' });
  const b = await openSession(stack.url, { entry_id: 'brewery' });
  for (const path of [a.path, a.path, b.path])
    t.equal((await runProgram(stack.url, path, 'e2[name]', 'wait=false')).status, 202);
  const over = await runProgram(stack.url, b.path, 'e2[name]', 'wait=false');
  t.equal(over.status, 429, 'the fourth, in a session that runs only one: refused');
  t.equal(codeOf(over), 'too_many_operations');
  t.match(over.body.errors[0].message, /the server already runs 3 background operations \(the cap is 3\)/);
  t.match(over.body.errors[0].hint, /wait\(o1\)/, 'the hint names what this session can wait for');
  const waited = await runProgram(stack.url, b.path, 'e1("b-1")[name]');
  t.equal(waited.status, 200, 'a waited run is not an operation: it still runs');
  t.equal((await runProgram(stack.url, b.path, 'cancel(o1)')).status, 200);
  t.equal(
    (await runProgram(stack.url, b.path, 'e2[name]', 'wait=false')).status,
    202,
    'a slot freed by a cancel is used again',
  );
});

t.test('a background run has its own deadline, and its deadline_exceeded does not suggest wait=false', async (t) => {
  const vendor = await hangingBeers(t);
  const stack = await startStack(t, {
    vendorUrl: vendor.url,
    runtime: { requestTimeoutMs: 60_000, retry: NO_RETRY },
    limits: { backgroundDeadlineMs: 300 },
  });
  const { path } = await openSession(stack.url, { entry_id: 'brewery' });
  t.equal((await runProgram(stack.url, path, 'e2[name]', 'wait=false')).status, 202);
  await stack.app.idle();
  const done = await runProgram(stack.url, path, 'wait(o1)');
  t.equal(done.body._meta.svc.op['~'], '?', 'the run failed');
  t.equal(done.body._meta.svc.code, 'deadline_exceeded');
  t.notMatch(done.body.errors[0].hint, /wait=false/, 'a background run is not told to run in the background');
  t.match(done.body.errors[0].hint, /narrow/);
});

t.test('the stream honours Connection: close (no keep-alive of its own)', async (t) => {
  const vendor = await hangingBeers(t);
  const stack = await startStack(t, { vendorUrl: vendor.url });
  const { path } = await openSession(stack.url, { entry_id: 'brewery' });
  t.equal((await runProgram(stack.url, path, 'e2[name]', 'wait=false')).status, 202);
  const u = new URL(stack.url);
  const headers = await new Promise<Record<string, string | string[] | undefined>>((resolve, reject) => {
    const req = httpRequest(
      {
        host: u.hostname,
        port: u.port,
        path: `${path}/operations/o1/stream`,
        headers: { accept: 'text/event-stream', connection: 'close' },
      },
      (res) => {
        resolve(res.headers);
        res.destroy();
      },
    );
    req.on('error', reject);
    req.end();
  });
  t.equal(headers['content-type'], 'text/event-stream; charset=utf-8');
  t.equal(headers.connection, 'close', 'the client said close: the stream does not claim keep-alive');
});

// ---------------------------------------------------------------- shutdown of a real process

interface Stream {
  events: EventSourceMessage[];
  closed: Promise<void>;
}

async function openStream(url: string): Promise<Stream> {
  const res = await fetch(url, { headers: { accept: 'text/event-stream' } });
  const events: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (e) => events.push(e) });
  const closed = (async () => {
    const reader = res.body!.getReader();
    const dec = new TextDecoder();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        parser.feed(dec.decode(value, { stream: true }));
      }
    } catch {
      /* the server closed the connection */
    }
  })();
  return { events, closed };
}

t.test(
  'SIGTERM with a run hanging on the vendor: cancelled when the grace ends, streamed x, stored, exit 0 within the grace',
  { timeout: 40_000 },
  async (t) => {
    const vendor = await hangingBeers(t);
    const dir = await mkdtemp(join(tmpdir(), 'svc-abuse-shutdown-'));
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    const p = await serve(
      t,
      ['--catalog-dir', 'fixtures/packed', '--port', '0', '--backend', `brewery=${vendor.url}`],
      { SVC_SHUTDOWN_GRACE_SECS: '2', SVC_RUN_ARTIFACTS_URL: `file://${dir}` },
    );
    const open = await fetch(`${p.url}/execute`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ entry_id: 'brewery' }),
    });
    const s = (await open.json()) as { prompt_hash: string; session: string };
    const path = `/execute/${s.prompt_hash}/${s.session}`;
    const started = await runProgram(p.url, path, 'e2[name]', 'wait=false');
    t.equal(started.status, 202);
    await until('the vendor to hold the request', () => vendor.hits('/beers').length >= 1);
    const stream = await openStream(`${p.url}${path}/operations/o1/stream`);
    await until('the snapshot event', () => stream.events.length >= 1);

    const t0 = Date.now();
    p.child.kill('SIGTERM');
    const exit = await p.exited;
    const took = Date.now() - t0;
    t.same(
      exit,
      { code: 0, signal: null },
      `exit 0 after ${took} ms (grace 2 s; before the fix the 60 s run deadline held the process)`,
    );
    await stream.closed;
    const last = stream.events[stream.events.length - 1];
    t.equal(last?.event, 'terminal', 'the stream got its terminal event');
    t.match(last?.data, /^x o1 cancelled/, 'the run was cancelled');
    const files = (await readdir(dir)).filter((n) => /^pr[0-9a-f]{64}\.json$/.test(n));
    t.equal(files.length, 1, 'what the run did is stored');
    const snap = JSON.parse(await readFile(join(dir, files[0]!), 'utf8')) as { status: string };
    t.equal(snap.status, 'cancelled');
    t.notMatch(p.stderr, /internal error|\n\s+at /, 'no error and no stack trace in the log');
  },
);
