/**
 * Background operations over real sockets (SPEC "Asynchronous operation (HTTP)", progress signs,
 * "Polling discipline", Events, Limits; docs/operations.md): `wait=false` accepts with `+` and a
 * `wait(oN)` continuation; `wait(oN)` answers `~` / `=` while running and `!` / `x` / `?` at the
 * end; `_meta.svc.op` short keys; every row of the state table that applies to one replica; the
 * per-session cap; cooperative cancel (nothing more reaches the vendor); the SSE stream; the run
 * artifact route; and the bound on terminal operations kept per session.
 *
 * Slow or failing vendors are the scriptable fault vendor, pointed at through the brewery catalog
 * (`GET /beers` is `e2`, `GET /reviews` is `e3`, `GET /breweries` is `e1`). Its gated routes hold
 * each request until the test releases it, so "still running" never depends on timing.
 */
import t, { type Test } from 'tap';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { startDemoVendor } from '../../cli/demo-vendor.js';
import { InboundAuth } from '../../server/auth/inbound.js';
import { TERMINAL_OPS_KEPT } from '../../server/execute/operations.js';
import { DEFAULT_LIMITS } from '../../server/limits.js';
import type { OpDescriptor, SessionKey, SessionState } from '../../server/execute/state.js';
import { streamOperation } from '../../server/http/sse.js';
import {
  call,
  codeOf,
  openSession,
  runProgram,
  startStack,
  type Answer,
  type CallInit,
  type Stack,
} from '../_helpers/server.js';
import { startFaultVendor, type FaultVendor, type RecordedRequest, type Reply } from '../_helpers/fault-vendor.js';
import { sleep, until } from '../_helpers/until.js';

// ---------------------------------------------------------------- helpers

interface OpMeta {
  n?: string;
  '~'?: string;
  s?: string;
  l?: string;
  r?: string;
}

/** `_meta.svc.op` of a JSON answer. */
const opOf = (a: Answer): OpMeta => (a.body._meta?.svc?.op ?? {}) as OpMeta;

const TERMINAL = new Set(['!', 'x', '?']);
const RUN_ID = /^pr[0-9a-f]{64}$/;

/** Start `program` in the background; asserts the 202 accept and returns the handle. */
async function start(
  t: Test,
  stack: Stack,
  path: string,
  program: string,
  query = 'wait=false',
  init: CallInit = {},
): Promise<string> {
  const a = await runProgram(stack.url, path, program, query, init);
  t.equal(a.status, 202, `accepted: ${program}`);
  const handle = opOf(a).n;
  if (a.status !== 202 || !handle) throw new Error(`start ${program}: ${a.status} ${a.text}`);
  return handle;
}

const wait = (stack: Stack, path: string, handle: string, init: CallInit = {}) =>
  runProgram(stack.url, path, `wait(${handle})`, '', init);
const cancel = (stack: Stack, path: string, handle: string, init: CallInit = {}) =>
  runProgram(stack.url, path, `cancel(${handle})`, '', init);

/** Poll `wait(handle)` until a terminal sign; the terminal answer. */
function finish(stack: Stack, path: string, handle: string): Promise<Answer> {
  return until(`${handle} to end`, async () => {
    const a = await wait(stack, path, handle);
    if (a.status !== 200) throw new Error(`wait(${handle}) answered ${a.status}: ${a.text}`);
    return TERMINAL.has(opOf(a)['~'] ?? '') ? a : undefined;
  });
}

/** The address of a session path `/execute/{ph}/{sid}`. */
function keyOf(path: string): SessionKey {
  const [, , ph, sid] = path.split('/');
  return { prompt_hash: ph!, session: sid! };
}

/** The server-side session (for what only the server can count: operations). */
async function sessionOf(stack: Stack, path: string, tenant = ''): Promise<SessionState> {
  return (await stack.app.service.find(keyOf(path), tenant)).session;
}

/** The server-side descriptor of an operation. */
function opAt(stack: Stack, path: string, handle: string): Promise<OpDescriptor> {
  return stack.app.service.background.find(keyOf(path), handle);
}

/** Listeners that follow an operation on the server. */
function listenersOf(stack: Stack, path: string, handle: string): number {
  return stack.app.service.background.listenerCount(keyOf(path), handle);
}

/** Counts of a progress line: steps done, pages, rows. */
function counts(line: string | undefined): { done: number; pages: number; rows: number } {
  const m = /(\d+)\/\d+ steps?, (\d+) pages?, (\d+) rows?/.exec(line ?? '');
  if (!m) throw new Error(`no counts in ${JSON.stringify(line)}`);
  return { done: Number(m[1]), pages: Number(m[2]), rows: Number(m[3]) };
}

function beer(id: number, name: string): Record<string, unknown> {
  return { id, breweryId: 'b-1', name, style: 'IPA', abv: 5.5, ibu: 40, available: true, released: '2020-01-01' };
}

function review(id: number): Record<string, unknown> {
  return {
    id,
    beerId: 1 + (id % 7),
    rating: 1 + (id % 5),
    author: `r${id}`,
    text: 'fine',
    createdAt: '2024-01-01T00:00:00Z',
  };
}

/** A request held until the test releases its gate. */
class Gates {
  private readonly gates = new Map<string, { p: Promise<void>; open: () => void }>();
  private get(name: string) {
    let g = this.gates.get(name);
    if (!g) {
      let open!: () => void;
      const p = new Promise<void>((r) => {
        open = r;
      });
      g = { p, open };
      this.gates.set(name, g);
    }
    return g;
  }
  wait(name: string): Promise<void> {
    return this.get(name).p;
  }
  release(name: string): void {
    this.get(name).open();
  }
}

/** Rows the gated `GET /beers` serves for `name_like=<name>`. */
function beersNamed(name: string): Array<Record<string, unknown>> {
  const n = name === 'paged' ? 120 : 3;
  return Array.from({ length: n }, (_, i) => beer(name.length * 1000 + i + 1, `${name}-${i + 1}`));
}

interface Gated {
  vendor: FaultVendor;
  gates: Gates;
  hits(name: string): RecordedRequest[];
}

/**
 * A fault vendor whose `GET /beers?name_like=<name>` waits for `gates.release(name)` (offset
 * pagination: page 1 of `paged` comes at once, page 2 waits); `name_like=boom` answers 500.
 */
async function gatedVendor(t: Test): Promise<Gated> {
  const gates = new Gates();
  const vendor = await startFaultVendor({
    'GET /beers': async (req): Promise<Reply> => {
      const name = req.query.get('name_like') ?? '';
      if (name === 'boom') return { status: 500, json: { message: 'the vendor exploded' } };
      const all = beersNamed(name);
      const from = Number(req.query.get('_start') ?? 0);
      const size = Number(req.query.get('_limit') ?? 25);
      if (name !== 'paged' || from > 0) await gates.wait(name);
      return { json: all.slice(from, from + size), headers: { 'x-total-count': String(all.length) } };
    },
    'GET /breweries/:id': (req) => ({
      json: {
        id: req.params.id,
        name: `Brewery ${req.params.id}`,
        city: 'Ghent',
        country: 'BE',
        kind: 'micro',
        founded: 2001,
        website: 'https://b.example',
      },
    }),
  });
  t.teardown(() => vendor.close());
  return {
    vendor,
    gates,
    hits: (name) => vendor.requests.filter((r) => r.path === '/beers' && r.query.get('name_like') === name),
  };
}

interface Stream {
  status: number;
  events: EventSourceMessage[];
  comments: string[];
  /** Settles when the server closed the stream (or the client aborted). */
  closed: Promise<void>;
  ended: () => boolean;
  abort(): void;
}

/** Open an SSE stream with fetch and read it with eventsource-parser. */
async function openStream(url: string): Promise<Stream> {
  const ac = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream' }, signal: ac.signal });
  const events: EventSourceMessage[] = [];
  const comments: string[] = [];
  const parser = createParser({ onEvent: (e) => events.push(e), onComment: (c) => comments.push(c) });
  let ended = false;
  const closed = (async () => {
    if (!res.body) return;
    const reader = res.body.getReader();
    const dec = new TextDecoder();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        parser.feed(dec.decode(value, { stream: true }));
      }
    } catch {
      /* aborted by the client */
    }
    ended = true;
  })();
  return { status: res.status, events, comments, closed, ended: () => ended, abort: () => ac.abort() };
}

// ---------------------------------------------------------------- the operation life cycle

t.test('wait=false accepts with `+`; wait(oN) answers `~` then `=`; the end is `!` with the rows', async (t) => {
  const g = await gatedVendor(t);
  const stack = await startStack(t, { vendorUrl: g.vendor.url });
  const { path } = await openSession(stack.url, { entry_id: 'brewery' });
  const program = 'e2(name="one")[id,name]';

  const acc = await runProgram(stack.url, path, program, 'wait=false');
  t.equal(acc.status, 202, 'the accept answers 202');
  const plus = opOf(acc);
  t.equal(plus.n, 'o1', 'the first handle of a session is o1');
  t.equal(plus['~'], '+', 'sign + on accept');
  t.equal(plus.s, 'running');
  t.match(plus.l, /^\+ o1 started: 1 step in the background; poll wait\(o1\)/, 'the accept line carries wait(o1)');
  t.equal(acc.body.text, plus.l, '`l` is the line the answer shows');
  t.notOk('r' in plus, 'no run artifact id while running');
  t.match(acc.body._meta.svc.commit_id, /^[0-9a-f]{64}$/, 'the accept carries the commit id');
  t.notOk(acc.body.rows, 'no rows in the accept');

  const tilde = await wait(stack, path, 'o1');
  t.equal(tilde.status, 200);
  t.equal(opOf(tilde)['~'], '~', 'first poll: `~` (the step started since the accept)');
  t.equal(opOf(tilde).n, 'o1');
  t.equal(opOf(tilde).s, 'running');
  t.match(opOf(tilde).l, /^~ o1 running: 0\/1 steps, 0 pages, 0 rows, \d+\.\d s; poll wait\(o1\) again/);
  t.notOk(tilde.body.rows, 'no rows while running');

  const same = await wait(stack, path, 'o1');
  t.equal(same.status, 200);
  t.equal(opOf(same)['~'], '=', 'nothing changed: `=`');
  t.equal(opOf(same).s, 'running');
  t.match(
    opOf(same).l,
    /^= o1 running, unchanged since the last poll: 0\/1 steps, 0 pages, 0 rows/,
    'the `=` line repeats the counts',
  );
  t.equal(g.hits('one').length, 1, 'one vendor request so far, still held');

  // The same poll in plain text.
  const plain = await wait(stack, path, 'o1', { accept: 'text/plain' });
  t.equal(plain.status, 200);
  t.match(plain.text, /^= o1 running, unchanged/, 'text/plain shows the progress line first');

  g.gates.release('one');
  const done = await finish(stack, path, 'o1');
  const end = opOf(done);
  t.equal(done.status, 200);
  t.equal(end['~'], '!', 'success: `!`');
  t.equal(end.s, 'succeeded');
  t.match(end.l, /^! o1 succeeded: 1\/1 steps, 1 page, 3 rows in \d+\.\d s$/);
  t.match(end.r, RUN_ID, '`r` is the run artifact id');
  t.equal(done.body._meta.svc.run_id, end.r, 'run_id and op.r agree');
  t.equal(done.body._meta.svc.status, 'succeeded');
  t.same(
    done.body.rows,
    beersNamed('one').map((b) => ({ id: b.id, name: b.name })),
    'the rows are what the vendor served, projected',
  );
  t.equal(done.body.count, 3);

  // Succeeded -> wait again: same end, rows read back from the run artifact store.
  const again = await wait(stack, path, 'o1');
  t.equal(again.status, 200);
  t.same(opOf(again), end, 'waiting on a finished operation answers the same end');
  t.same(again.body.rows, done.body.rows, 'with the same rows');
  const snap = await stack.artifacts.get(end.r!);
  t.same(snap?.steps[0]?.rows, done.body.rows, 'the run artifact stored under op.r holds the rows');
  const blocks = (await opAt(stack, path, 'o1')).blocks ?? [];
  t.equal(blocks.length, 1);
  t.notOk(
    blocks.some((b) => 'rows' in b),
    'the operation keeps no rows in memory: they are read back from the store',
  );

  // cancel after done: answers that end, changes nothing.
  const late = await cancel(stack, path, 'o1');
  t.equal(late.status, 200);
  t.equal(opOf(late)['~'], '!', 'cancel after the end answers the end (`!`)');
  t.equal(opOf(late).s, 'succeeded');
  t.same(late.body.rows, done.body.rows);
  t.equal(g.hits('one').length, 1, 'the vendor saw exactly one request');
});

t.test('`~` again once progress advanced (coalesced), then `=`', async (t) => {
  const g = await gatedVendor(t);
  const stack = await startStack(t, { vendorUrl: g.vendor.url });
  const { path } = await openSession(stack.url, { entry_id: 'brewery' });
  // limit=120 reads pages of 100 (the catalog's max_page_size): page 1 comes at once, page 2 is
  // held, so the running update of page 1 reaches wait(oN) once coalesced (about 2 s).
  const h = await start(t, stack, path, 'e2(name="paged", limit=120)[id]');
  const moved = await until(
    'a `~` line with the first page',
    async () => {
      const a = await wait(stack, path, h);
      return opOf(a)['~'] === '~' && counts(opOf(a).l).pages === 1 ? a : undefined;
    },
    200,
    50,
  );
  t.same(counts(opOf(moved).l), { done: 0, pages: 1, rows: 100 }, '`~` shows the advanced counts');
  t.equal(opOf(moved).s, 'running');
  const still = await wait(stack, path, h);
  t.equal(opOf(still)['~'], '=', 'the next poll without progress is `=`');
  t.same(counts(opOf(still).l), { done: 0, pages: 1, rows: 100 }, '`=` repeats the advanced counts');
  g.gates.release('paged');
  const done = await finish(stack, path, h);
  t.equal(opOf(done)['~'], '!');
  t.same(counts(opOf(done).l), { done: 1, pages: 2, rows: 120 });
  t.same(
    done.body.rows,
    beersNamed('paged').map((b) => ({ id: b.id })),
    'both pages, in order',
  );
});

t.test('cancel(oN): `x`; cancel twice and wait after cancel answer the same `x`', async (t) => {
  const g = await gatedVendor(t);
  const stack = await startStack(t, { vendorUrl: g.vendor.url });
  const { path } = await openSession(stack.url, { entry_id: 'brewery' });
  const h = await start(t, stack, path, 'e2(name="hold")[id,name]');
  await until('the held request at the vendor', () => g.hits('hold').length === 1 || undefined);

  const x = await cancel(stack, path, h);
  t.equal(x.status, 200);
  const end = opOf(x);
  t.equal(end['~'], 'x', 'cancelled: `x`');
  t.equal(end.n, h);
  t.equal(end.s, 'cancelled');
  t.match(end.l, new RegExp(`^x ${h} cancelled after 0/1 steps, 0 pages, 0 rows$`));
  t.match(end.r, RUN_ID, 'a cancelled run is stored too');
  t.equal(x.body._meta.svc.status, 'cancelled');
  t.equal(x.body.errors?.[0]?.code, 'cancelled', 'the error says cancelled');
  t.same(x.body.rows ?? [], [], 'no rows of the cancelled step');

  const twice = await cancel(stack, path, h);
  t.equal(twice.status, 200);
  t.same(opOf(twice), end, 'cancel twice: the same `x`');
  const after = await wait(stack, path, h);
  t.equal(after.status, 200);
  t.same(opOf(after), end, 'wait after cancel: the same `x`');

  // The held request is released now: the cancelled operation does not come back to life.
  g.gates.release('hold');
  await sleep(100);
  const later = await wait(stack, path, h);
  t.same(opOf(later), end, 'still `x` after the vendor answered the aborted request');
  t.equal(g.hits('hold').length, 1, 'nothing more was sent');
  const snap = await stack.artifacts.get(end.r!);
  t.equal(snap?.status, 'cancelled', 'the stored run says cancelled');
});

t.test('a failing vendor: `?` with the error; wait and cancel after it answer the same `?`', async (t) => {
  const g = await gatedVendor(t);
  const stack = await startStack(t, { vendorUrl: g.vendor.url });
  const { path } = await openSession(stack.url, { entry_id: 'brewery' });
  const h = await start(t, stack, path, 'e2(name="boom")[id]');
  const failed = await finish(stack, path, h);
  t.equal(failed.status, 200);
  const end = opOf(failed);
  t.equal(end['~'], '?', 'failed: `?`');
  t.equal(end.s, 'failed');
  t.match(end.l, new RegExp(`^\\? ${h} failed: vendor_error: .*500.*the vendor exploded`), 'the line names the error');
  t.match(end.r, RUN_ID);
  t.equal(failed.body._meta.svc.status, 'failed');
  t.equal(failed.body._meta.svc.code, 'vendor_error', '_meta.svc.code names the failure');
  t.equal(failed.body.errors?.[0]?.code, 'vendor_error');
  t.match(failed.body.errors?.[0]?.message, /500/);
  t.type(failed.body.errors?.[0]?.hint, 'string', 'the error has a hint');
  t.equal(g.hits('boom').length, 1, '500 is not retried');
  t.same(opOf(await wait(stack, path, h)), end, 'wait again: same `?`');
  t.same(opOf(await cancel(stack, path, h)), end, 'cancel after failure: same `?`');
});

t.test('unknown handles and handles of another session: unknown_operation_handle', async (t) => {
  const g = await gatedVendor(t);
  const stack = await startStack(t, { vendorUrl: g.vendor.url });
  const a = await openSession(stack.url, { entry_id: 'brewery' });
  const b = await openSession(stack.url, { entry_id: 'brewery' });

  for (const verb of ['wait', 'cancel']) {
    const r = await runProgram(stack.url, a.path, `${verb}(o1)`);
    t.equal(r.status, 404, `${verb}(o1) on a session without operations: 404`);
    t.equal(codeOf(r), 'unknown_operation_handle');
    t.equal(r.body._meta?.svc?.code, 'unknown_operation_handle', '_meta.svc.code says it too');
  }

  const h = await start(t, stack, a.path, 'e2(name="mine")[id]');
  t.equal(h, 'o1');
  const miss = await runProgram(stack.url, a.path, 'wait(o7)');
  t.equal(miss.status, 404);
  t.equal(codeOf(miss), 'unknown_operation_handle', 'an unminted handle is unknown');
  t.match(miss.body.errors?.[0]?.hint, /o1/, 'the hint lists the handles the session has');

  // Session b has no o1: a's handle means nothing there, and cancel from b does not reach a's.
  for (const verb of ['wait', 'cancel']) {
    const r = await runProgram(stack.url, b.path, `${verb}(${h})`);
    t.equal(r.status, 404, `${verb}(${h}) from another session: 404`);
    t.equal(codeOf(r), 'unknown_operation_handle');
  }
  const stream = await call(stack.url, `${b.path}/operations/${h}/stream`);
  t.equal(stream.status, 404, "the stream of another session's handle: 404");
  t.equal(codeOf(stream), 'unknown_operation_handle');
  t.equal(opOf(await wait(stack, a.path, h)).s, 'running', "a's o1 is still running");

  // b's own o1 is another operation.
  const hb = await start(t, stack, b.path, 'e2(name="theirs")[id]');
  t.equal(hb, 'o1', 'handles are minted per session');
  t.equal(opOf(await cancel(stack, b.path, hb))['~'], 'x', 'b cancels its own o1');
  t.equal(opOf(await wait(stack, a.path, h)).s, 'running', "a's o1 is untouched");
  g.gates.release('mine');
  const done = await finish(stack, a.path, h);
  t.equal(opOf(done)['~'], '!');
  t.same(
    done.body.rows,
    beersNamed('mine').map((x) => ({ id: x.id })),
  );

  // A page handle or a malformed handle is not an operation either.
  const pg = await runProgram(stack.url, a.path, 'wait(pg1)');
  t.equal(pg.status, 400, 'wait(pg1) is refused');
  t.equal(codeOf(pg), 'bad_handle', 'a page handle is not an operation handle');
});

t.test('parallel operations on one session are independent', async (t) => {
  const g = await gatedVendor(t);
  const stack = await startStack(t, { vendorUrl: g.vendor.url });
  const { path } = await openSession(stack.url, { entry_id: 'brewery' });
  const h1 = await start(t, stack, path, 'e2(name="first")[id,name]');
  const h2 = await start(t, stack, path, 'e2(name="second")[id,name]');
  // JSON body form of wait=false.
  const acc3 = await call(stack.url, path, {
    body: JSON.stringify({ program: 'e2(name="third")[id,name]', wait: false }),
    type: 'application/json',
  });
  t.equal(acc3.status, 202, 'wait:false in a JSON body starts an operation');
  const h3 = opOf(acc3).n!;
  t.same([h1, h2, h3], ['o1', 'o2', 'o3'], 'one handle each, in order');

  g.gates.release('second');
  const d2 = await finish(stack, path, h2);
  t.equal(opOf(d2)['~'], '!', 'o2 ended');
  t.same(
    d2.body.rows,
    beersNamed('second').map((b) => ({ id: b.id, name: b.name })),
    'o2 has its own rows',
  );
  t.equal(opOf(await wait(stack, path, h1)).s, 'running', 'o1 still runs');
  t.equal(opOf(await wait(stack, path, h3)).s, 'running', 'o3 still runs');

  const x3 = await cancel(stack, path, h3);
  t.equal(opOf(x3)['~'], 'x', 'o3 cancelled');
  t.equal(opOf(await wait(stack, path, h1)).s, 'running', 'cancelling o3 leaves o1 running');
  t.equal(opOf(await wait(stack, path, h2))['~'], '!', 'and o2 succeeded');

  g.gates.release('first');
  const d1 = await finish(stack, path, h1);
  t.equal(opOf(d1)['~'], '!');
  t.same(
    d1.body.rows,
    beersNamed('first').map((b) => ({ id: b.id, name: b.name })),
    'o1 has its own rows',
  );
  const ids = [opOf(d1).r, opOf(d2).r, opOf(x3).r];
  t.equal(new Set(ids).size, 3, 'three runs, three artifacts');
  t.equal(g.hits('third').length, 1, 'the cancelled one sent nothing after its first request');
});

t.test("a live run from the json-server vendor: the rows are the vendor's data", async (t) => {
  const stack = await startStack(t);
  const { path } = await openSession(stack.url, { entry_id: 'brewery' });
  const h = await start(t, stack, path, 'e2(limit=1000)[id,name,style]');
  const done = await finish(stack, path, h);
  const end = opOf(done);
  t.equal(end['~'], '!');
  const direct = (await (await fetch(`${stack.vendorUrl}/beers`)).json()) as Array<Record<string, unknown>>;
  t.equal(direct.length, 130, 'the vendor holds 130 beers');
  t.same(
    done.body.rows,
    direct.map((b) => ({ id: b.id, name: b.name, style: b.style })),
    "every beer, in the vendor's order",
  );
  t.same(counts(end.l), { done: 1, pages: Math.ceil(130 / 100), rows: 130 }, 'the `!` line counts pages and rows');
  t.equal(done.body.total, 130);
});

// ---------------------------------------------------------------- the per-session cap

t.test('SVC_MAX_RUNNING_OPS_PER_SESSION: the next start fails with too_many_operations', async (t) => {
  t.equal(DEFAULT_LIMITS.maxRunningOpsPerSession, 16, 'the default cap is 16 (SPEC Limits)');
  const g = await gatedVendor(t);
  const stack = await startStack(t, { vendorUrl: g.vendor.url, limits: { maxRunningOpsPerSession: 2 } });
  const { path } = await openSession(stack.url, { entry_id: 'brewery' });
  const h1 = await start(t, stack, path, 'e2(name="cap1")[id]');
  const h2 = await start(t, stack, path, 'e2(name="cap2")[id]');

  const full = await runProgram(stack.url, path, 'e2(name="cap3")[id]', 'wait=false');
  t.equal(full.status, 429, 'too_many_operations answers 429');
  t.equal(codeOf(full), 'too_many_operations');
  t.match(full.body.errors[0].message, /o1, o2/, 'the message lists the outstanding handles');
  t.match(full.body.errors[0].hint, /wait\(o1\).*wait\(o2\)/, 'the hint says to wait for them');
  t.notOk(full.body._meta?.svc?.op, 'no operation was minted');
  t.equal(g.hits('cap3').length, 0, 'nothing reached the vendor');
  const plainFull = await runProgram(stack.url, path, 'e2(name="cap3")[id]', 'wait=false', { accept: 'text/plain' });
  t.equal(plainFull.status, 429);
  t.match(plainFull.text, /too_many_operations/);

  // A waited run is not an operation: the cap does not apply to it.
  const g2 = await runProgram(stack.url, path, 'e1("b-1")[name]');
  t.equal(g2.status, 200, 'a waited run is not refused by the cap');
  t.same(g2.body.rows, [{ name: 'Brewery b-1' }]);

  g.gates.release('cap1');
  t.equal(opOf(await finish(stack, path, h1))['~'], '!', 'o1 ended');
  const h3 = await start(t, stack, path, 'e2(name="cap4")[id]');
  t.equal(h3, 'o3', 'after one ended a new one is accepted (the refused start minted nothing)');

  const again = await runProgram(stack.url, path, 'e2(name="cap5")[id]', 'wait=false');
  t.equal(again.status, 429);
  t.match(again.body.errors[0].message, /o2, o3/, 'the outstanding handles now are o2 and o3');
  t.notMatch(again.body.errors[0].message, /o1/, 'the ended o1 is not outstanding');

  t.equal(opOf(await cancel(stack, path, h2))['~'], 'x', 'cancel o2');
  const h4 = await start(t, stack, path, 'e2(name="cap6")[id]');
  t.equal(h4, 'o4', 'a cancelled operation frees its slot');
  t.equal(opOf(await cancel(stack, path, h3))['~'], 'x');
  t.equal(opOf(await cancel(stack, path, h4))['~'], 'x');
});

// ---------------------------------------------------------------- cancel mid-run

t.test('cancel mid-run against a slow vendor: nothing more reaches the vendor', async (t) => {
  let release!: () => void;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const vendor = await startFaultVendor({
    // Offset pagination that never runs out: every page is full. Pages 1 to 3 come at once, the
    // fourth is held until the test releases it, so the cancel lands mid-run whatever the timing.
    'GET /reviews': async (req) => {
      const page = Number(req.query.get('_page') ?? 1);
      const size = Number(req.query.get('_limit') ?? 25);
      if (page >= 4) await held;
      return {
        json: Array.from({ length: size }, (_, i) => review((page - 1) * size + i + 1)),
        headers: { 'x-total-count': '100000' },
      };
    },
    'GET /breweries': { hang: true },
  });
  t.teardown(() => {
    release();
    return vendor.close();
  });
  const stack = await startStack(t, { vendorUrl: vendor.url });
  const { path } = await openSession(stack.url, { entry_id: 'brewery' });

  const h = await start(t, stack, path, 'e3(limit=10000)[id]', 'wait=false&force=true');
  await until('the fourth page held at the vendor', () => vendor.hits('/reviews').length >= 4 || undefined);
  const x = await cancel(stack, path, h);
  t.equal(opOf(x)['~'], 'x', 'cancelled mid-run');
  t.equal(opOf(x).s, 'cancelled');
  t.equal(vendor.hits('/reviews').length, 4, 'cancelled while the vendor held the fourth of 100 pages');
  // The held page is answered now: a run that went on would ask for the fifth.
  release();
  await sleep(100);
  t.equal(vendor.hits('/reviews').length, 4, 'the vendor received no request after the cancel');
  t.same(opOf(await wait(stack, path, h)), opOf(x), 'the end does not change');

  // A request that never answers is aborted by the cancel.
  const h2 = await start(t, stack, path, 'e1[name]');
  await until('the hanging request', () => vendor.hits('/breweries').length === 1 || undefined);
  const x2 = await cancel(stack, path, h2);
  t.equal(opOf(x2)['~'], 'x', 'a hanging vendor request is cancelled');
  t.equal(x2.body.errors?.[0]?.code, 'cancelled');
  await sleep(100);
  t.equal(vendor.hits('/breweries').length, 1, 'and not retried');
});

t.test('cancel mid-run against the json-server vendor (a long paginated read)', async (t) => {
  // 10 000 reviews: limit=10000 reads 100 pages of 100 (the catalog's max_page_size).
  const demo = await startDemoVendor({ data: { reviews: Array.from({ length: 10_000 }, (_, i) => review(i + 1)) } });
  t.teardown(() => demo.close());
  // Every page shows in the progress at once (no 2 s coalescing), so the test sees the read advance.
  const stack = await startStack(t, { vendorUrl: demo.url, runtime: { progressIntervalMs: 0 } });
  const { path } = await openSession(stack.url, { entry_id: 'brewery' });
  const h = await start(t, stack, path, 'e3(limit=10000)[id]', 'wait=false&force=true');
  const moving = await until(
    'two pages read',
    async () => {
      const a = await wait(stack, path, h);
      if (TERMINAL.has(opOf(a)['~'] ?? '')) throw new Error(`${h} ended before it could be cancelled: ${opOf(a).l}`);
      return counts(opOf(a).l).pages >= 2 ? a : undefined;
    },
    2000,
    1,
  );
  const seen = counts(opOf(moving).l).pages;
  const x = await cancel(stack, path, h);
  t.equal(opOf(x)['~'], 'x', 'cancelled mid-run');
  const at = counts(opOf(x).l);
  t.ok(at.pages >= seen && at.pages < 100, `stopped after ${at.pages} of 100 pages`);
  t.equal(at.done, 0, 'the step did not complete');
  await sleep(100);
  const later = await wait(stack, path, h);
  t.equal(opOf(later).l, opOf(x).l, 'the counts stay where the cancel stopped them');
  const snap = await stack.artifacts.get(opOf(x).r!);
  t.equal(snap?.status, 'cancelled');
  t.equal(snap?.steps[0]?.status, 'cancelled', 'the stored step is cancelled');
  t.ok((snap?.steps[0]?.pages ?? 100) < 100, 'the stored step has fewer than all pages');
});

// ---------------------------------------------------------------- SSE

t.test('SSE: snapshot first, progress, terminal last, then the stream closes; two listeners', async (t) => {
  const g = await gatedVendor(t);
  const stack = await startStack(t, { vendorUrl: g.vendor.url });
  const { path } = await openSession(stack.url, { entry_id: 'brewery' });
  const h = await start(t, stack, path, 'e2(name="sse")[id]');
  const url = `${stack.url}${path}/operations/${h}/stream`;
  const [s1, s2] = await Promise.all([openStream(url), openStream(url)]);
  t.equal(s1.status, 200);
  await until('both snapshots', () => (s1.events.length && s2.events.length) || undefined);
  t.equal(listenersOf(stack, path, h), 2, 'two listeners on the server');
  for (const s of [s1, s2]) {
    t.equal(s.events[0]?.event, 'snapshot', 'snapshot first');
    t.match(s.events[0]?.data, new RegExp(`^[+~] ${h} (started|running)`), 'the snapshot is a plain progress line');
    t.notOk(s.ended(), 'the stream stays open while the operation runs');
  }
  g.gates.release('sse');
  await Promise.all([s1.closed, s2.closed]);
  const end = opOf(await wait(stack, path, h));
  t.equal(end['~'], '!');
  for (const [i, s] of [s1, s2].entries()) {
    const kinds = s.events.map((e) => e.event);
    t.equal(kinds[kinds.length - 1], 'terminal', `listener ${i + 1}: terminal last`);
    t.equal(kinds.filter((k) => k === 'terminal').length, 1, `listener ${i + 1}: one terminal`);
    t.equal(kinds.filter((k) => k === 'snapshot').length, 1, `listener ${i + 1}: one snapshot`);
    t.ok(
      kinds.slice(1, -1).every((k) => k === 'progress'),
      `listener ${i + 1}: progress in between`,
    );
    t.ok(kinds.includes('progress'), `listener ${i + 1}: the step's end came as progress`);
    t.equal(s.events[s.events.length - 1]?.data, end.l, `listener ${i + 1}: terminal data is the \`!\` line`);
    for (const e of s.events.slice(1, -1))
      t.match(e.data, new RegExp(`^~ ${h} running: `), `listener ${i + 1}: progress data is a \`~\` line`);
    t.ok(s.ended(), `listener ${i + 1}: the server closed the stream`);
  }
  t.equal(listenersOf(stack, path, h), 0, 'no listener is left');
});

t.test('SSE: a finished operation streams its snapshot and terminal; failures and cancels too', async (t) => {
  const g = await gatedVendor(t);
  const stack = await startStack(t, { vendorUrl: g.vendor.url });
  const { path } = await openSession(stack.url, { entry_id: 'brewery' });
  const bad = await start(t, stack, path, 'e2(name="boom")[id]');
  const failed = opOf(await finish(stack, path, bad));
  const held = await start(t, stack, path, 'e2(name="never")[id]');
  const s = await openStream(`${stack.url}${path}/operations/${held}/stream`);
  await until('the snapshot', () => s.events.length || undefined);
  const cancelled = opOf(await cancel(stack, path, held));
  await s.closed;
  const kinds = s.events.map((e) => e.event);
  t.equal(kinds[0], 'snapshot');
  t.equal(kinds[kinds.length - 1], 'terminal', 'a cancel ends a live stream with terminal');
  t.ok(
    kinds.slice(1, -1).every((k) => k === 'progress'),
    'progress only in between',
  );
  t.equal(s.events[s.events.length - 1]?.data, cancelled.l, 'its data is the `x` line');
  t.ok(s.ended(), 'and the stream closed');

  for (const [h, end] of [
    [bad, failed],
    [held, cancelled],
  ] as const) {
    const r = await openStream(`${stack.url}${path}/operations/${h}/stream`);
    await r.closed;
    t.same(
      r.events.map((e) => e.event),
      ['snapshot', 'terminal'],
      `${h}: snapshot and terminal only`,
    );
    t.equal(r.events[0]?.data, end.l, `${h}: the snapshot is the end line`);
    t.equal(r.events[1]?.data, end.l, `${h}: so is the terminal`);
  }
  const unknown = await call(stack.url, `${path}/operations/o99/stream`, { accept: 'text/event-stream' });
  t.equal(unknown.status, 404, 'an unknown handle has no stream');
  t.notMatch(unknown.text, /event:/);
});

t.test('SSE: a client that aborts frees its listener', async (t) => {
  const g = await gatedVendor(t);
  const stack = await startStack(t, { vendorUrl: g.vendor.url });
  const { path } = await openSession(stack.url, { entry_id: 'brewery' });
  const h = await start(t, stack, path, 'e2(name="leave")[id]');
  const url = `${stack.url}${path}/operations/${h}/stream`;
  const stay = await openStream(url);
  const leave = await openStream(url);
  await until('both listeners', () => listenersOf(stack, path, h) === 2 || undefined);
  leave.abort();
  await leave.closed;
  const left = await until('the aborted listener to go', () => listenersOf(stack, path, h) === 1 || undefined);
  t.ok(left, 'the server dropped the aborted listener; the other remains');
  g.gates.release('leave');
  await stay.closed;
  t.equal(stay.events[stay.events.length - 1]?.event, 'terminal', 'the remaining listener still gets terminal');
  t.notOk(
    leave.events.some((e) => e.event === 'terminal'),
    'the aborted one got nothing more',
  );
  t.equal(listenersOf(stack, path, h), 0);
});

t.test('SSE heartbeats: comment lines while the operation is idle', async (t) => {
  // The route uses SSE_HEARTBEAT_MS (15 s, not configurable). The same streamOperation, over a
  // real socket, with the real service and operation, and a 20 ms heartbeat.
  const g = await gatedVendor(t);
  const stack = await startStack(t, { vendorUrl: g.vendor.url });
  const { path } = await openSession(stack.url, { entry_id: 'brewery' });
  const h = await start(t, stack, path, 'e2(name="beat")[id]');
  const watch = await stack.app.service.watch(keyOf(path), h);
  const server = createServer((req, res) => streamOperation(req, res, watch, 20));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  t.teardown(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  const s = await openStream(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  await until('three heartbeats', () => s.comments.length >= 3 || undefined);
  t.ok(
    s.comments.every((c) => c.trim() === 'keep-alive'),
    'heartbeats are `: keep-alive` comments',
  );
  t.same(
    s.events.map((e) => e.event),
    ['snapshot'],
    'heartbeats are no events',
  );
  g.gates.release('beat');
  await s.closed;
  t.equal(s.events[s.events.length - 1]?.event, 'terminal');
  const n = s.comments.length;
  await sleep(100);
  t.equal(s.comments.length, n, 'no heartbeat after the stream closed');
});

// ---------------------------------------------------------------- artifacts

t.test('GET .../artifacts/:run_id: the stored snapshot, only within its session', async (t) => {
  const ACME = 'key-acme-0f3c9a1e';
  const GLOBEX = 'key-globex-7b2d4e6a';
  const auth = new InboundAuth({
    mode: 'required',
    apiKeys: [
      { key: ACME, tenant_id: 'acme', subject: 'a' },
      { key: GLOBEX, tenant_id: 'globex', subject: 'g' },
    ],
  });
  const stack = await startStack(t, { auth });
  const acme = { 'x-api-key': ACME };
  const globex = { 'x-api-key': GLOBEX };
  const { path } = await openSession(stack.url, { entry_id: 'brewery' }, acme);
  const other = await openSession(stack.url, { entry_id: 'brewery' }, acme);
  const foreign = await openSession(stack.url, { entry_id: 'brewery' }, globex);

  const program = 'e1(country="DE")[id,name]';
  const acc = await runProgram(stack.url, path, program, 'wait=false', { headers: acme });
  t.equal(acc.status, 202);
  const h = opOf(acc).n!;
  const done = await until('the operation to end', async () => {
    const a = await runProgram(stack.url, path, `wait(${h})`, '', { headers: acme });
    return TERMINAL.has(opOf(a)['~'] ?? '') ? a : undefined;
  });
  const runId = opOf(done).r!;
  t.match(runId, RUN_ID);

  const art = await call(stack.url, `${path}/artifacts/${runId}`, { headers: acme });
  t.equal(art.status, 200, 'the run of an operation is served');
  t.equal(art.body.status, 'succeeded');
  t.equal(art.body.plan_commit_id, acc.body._meta.svc.commit_id, 'the snapshot is of the accepted plan');
  t.equal(art.body.program, program, 'with its program');
  t.same(
    art.body.session,
    { prompt_hash: path.split('/')[2], session: path.split('/')[3], tenant: 'acme' },
    'and its session and tenant',
  );
  t.same(art.body.returns, ['n1']);
  t.same(art.body.steps[0].rows, done.body.rows, 'the stored rows are the rows `!` answered');
  t.ok(done.body.rows.length > 0, 'there are rows');

  // A waited run's run_id is served the same way.
  const live = await runProgram(stack.url, path, 'e1("b-1")[name]', '', { headers: acme });
  t.equal(live.status, 200);
  const liveId = live.body._meta.svc.run_id as string;
  t.match(liveId, RUN_ID);
  const art2 = await call(stack.url, `${path}/artifacts/${liveId}`, { headers: acme });
  t.equal(art2.status, 200);
  t.same(art2.body.steps[0].rows, live.body.rows);

  const unknown = await call(stack.url, `${path}/artifacts/pr${'0'.repeat(64)}`, { headers: acme });
  t.equal(unknown.status, 404, 'an unknown run id: 404');
  t.equal(codeOf(unknown), 'unknown_run');
  const malformed = await call(stack.url, `${path}/artifacts/run-1`, { headers: acme });
  t.equal(malformed.status, 404, 'a malformed run id: 404');
  t.equal(codeOf(malformed), 'unknown_run');

  const sibling = await call(stack.url, `${other.path}/artifacts/${runId}`, { headers: acme });
  t.equal(sibling.status, 404, 'another session of the same tenant: 404');
  t.equal(codeOf(sibling), 'unknown_run');
  t.notMatch(sibling.text, /rows|steps/, 'nothing of the run leaks');

  const intruder = await call(stack.url, `${path}/artifacts/${runId}`, { headers: globex });
  t.equal(intruder.status, 403, "another tenant on the owner's session path: 403");
  t.equal(codeOf(intruder), 'forbidden');
  const viaOwn = await call(stack.url, `${foreign.path}/artifacts/${runId}`, { headers: globex });
  t.equal(viaOwn.status, 404, 'another tenant through its own session: 404');
  t.notMatch(viaOwn.text, /rows|steps/);

  // wait/cancel of the operation from another tenant are refused too.
  const w = await runProgram(stack.url, path, `wait(${h})`, '', { headers: globex });
  t.equal(w.status, 403);
  const w2 = await runProgram(stack.url, foreign.path, `wait(${h})`, '', { headers: globex });
  t.equal(codeOf(w2), 'unknown_operation_handle', "the handle means nothing in the other tenant's session");
});

// ---------------------------------------------------------------- memory bound

t.test(`a session keeps at most ${TERMINAL_OPS_KEPT} terminal operations`, async (t) => {
  const stack = await startStack(t);
  const { path } = await openSession(stack.url, { entry_id: 'brewery' });
  const total = TERMINAL_OPS_KEPT + 4;
  const handles: string[] = [];
  for (let i = 0; i < total; i++) {
    const h = await start(t, stack, path, `e1("b-${1 + (i % 9)}")[name]`);
    handles.push(h);
    const end = await finish(stack, path, h);
    if (opOf(end)['~'] !== '!') t.fail(`${h} did not succeed: ${end.text}`);
  }
  t.equal(handles[total - 1], `o${total}`);
  const ops = (await sessionOf(stack, path)).ops;
  t.equal(ops.size, TERMINAL_OPS_KEPT, `the session holds ${TERMINAL_OPS_KEPT} operations`);
  t.ok(
    [...ops.values()].every((o) => o.state !== 'running'),
    'all of them terminal',
  );
  t.same([...ops.keys()], handles.slice(total - TERMINAL_OPS_KEPT), 'the newest are kept');
  for (const h of handles.slice(0, total - TERMINAL_OPS_KEPT)) {
    const a = await wait(stack, path, h);
    t.equal(codeOf(a), 'unknown_operation_handle', `${h} (oldest) was dropped`);
  }
  const kept = await wait(stack, path, handles[total - TERMINAL_OPS_KEPT]!);
  t.equal(opOf(kept)['~'], '!', 'the oldest kept one still answers its end');
  t.equal(opOf(await wait(stack, path, handles[total - 1]!))['~'], '!', 'the newest too');
});

t.test('an operation that ends after many others is kept: the earliest ended are dropped first', async (t) => {
  const g = await gatedVendor(t);
  const stack = await startStack(t, { vendorUrl: g.vendor.url });
  const { path } = await openSession(stack.url, { entry_id: 'brewery' });
  const long = await start(t, stack, path, 'e2(name="long")[id]');
  const quick: string[] = [];
  for (let i = 0; i <= TERMINAL_OPS_KEPT; i++) {
    const h = await start(t, stack, path, `e1("b-${i + 1}")[name]`);
    quick.push(h);
    if (opOf(await finish(stack, path, h))['~'] !== '!') t.fail(`${h} did not succeed`);
  }
  t.equal(opOf(await wait(stack, path, long)).s, 'running', `${long} still runs after ${quick.length} others ended`);
  g.gates.release('long');
  const end = await finish(stack, path, long);
  t.equal(opOf(end)['~'], '!', `${long} answers its end right after it ended`);
  t.same(
    end.body.rows,
    beersNamed('long').map((b) => ({ id: b.id })),
  );
  const ops = (await sessionOf(stack, path)).ops;
  t.equal(ops.size, TERMINAL_OPS_KEPT, 'still at most the kept count');
  t.ok(ops.has(long), `${long} is kept`);
  t.notOk(ops.has(quick[0]!) || ops.has(quick[1]!), 'the two that ended first were dropped');
  t.ok(ops.has(quick[quick.length - 1]!), 'the newest quick one is kept');
});

t.test('a terminal operation answers its end for an hour, then it is dropped', async (t) => {
  let clock = Date.now();
  const g = await gatedVendor(t);
  const stack = await startStack(t, { vendorUrl: g.vendor.url, now: () => clock });
  const { path } = await openSession(stack.url, { entry_id: 'brewery' });
  const h = await start(t, stack, path, 'e1("b-1")[name]');
  const end = await finish(stack, path, h);
  t.equal(opOf(end)['~'], '!');
  clock += 50 * 60 * 1000;
  t.same(opOf(await wait(stack, path, h)), opOf(end), 'after 50 minutes: the same end');
  clock += 11 * 60 * 1000;
  const gone = await wait(stack, path, h);
  t.equal(gone.status, 404, 'after 61 minutes the operation is dropped');
  t.equal(codeOf(gone), 'unknown_operation_handle');
});

// ---------------------------------------------------------------- refusals that spend nothing

t.test('a start refused by the cap does not spend the pcN of a write', async (t) => {
  const g = await gatedVendor(t);
  const stack = await startStack(t, { vendorUrl: g.vendor.url, limits: { maxRunningOpsPerSession: 1 } });
  const { path } = await openSession(stack.url, { entry_id: 'brewery' });
  const held = await start(t, stack, path, 'e2(name="held")[id]');
  const dry = await runProgram(stack.url, path, 'e2(1).m4', 'mode=plan');
  const ref = dry.body._meta.svc.plan_commit_ref as string;
  t.match(ref, /^pc\d+$/, 'the write was dry-run');
  const refused = await runProgram(stack.url, path, 'e2(1).m4', `wait=false&plan_commit_ref=${ref}`);
  t.equal(codeOf(refused), 'too_many_operations');
  g.gates.release('held');
  t.equal(opOf(await finish(stack, path, held))['~'], '!');
  const status = await call(stack.url, `${path}/status`);
  t.match(status.body.plan_tokens, [{ ref, consumed: false }], 'the token is still unused');
  const accepted = await runProgram(stack.url, path, 'e2(1).m4', `wait=false&plan_commit_ref=${ref}`);
  t.equal(accepted.status, 202, 'the token still passes the gate once a slot is free');
  await finish(stack, path, opOf(accepted).n!);
});

t.test('page(pgN): a failed continuation leaves the handle usable; mode=plan is refused', async (t) => {
  let failNext = true;
  const vendor = await startFaultVendor({
    'GET /beers': (req): Reply => {
      const from = Number(req.query.get('_start') ?? 0);
      if (from > 0 && failNext) {
        failNext = false;
        return { status: 503, json: { message: 'try later' } };
      }
      const all = Array.from({ length: 30 }, (_, i) => beer(i + 1, `b${i + 1}`));
      return {
        json: all.slice(from, from + Number(req.query.get('_limit') ?? 25)),
        headers: { 'x-total-count': '30' },
      };
    },
  });
  t.teardown(() => vendor.close());
  const stack = await startStack(t, {
    vendorUrl: vendor.url,
    runtime: { retry: { retries: 0, baseDelayMs: 1, maxDelayMs: 1, budgetMs: 1 } },
  });
  const { path } = await openSession(stack.url, { entry_id: 'brewery' });
  const first = await runProgram(stack.url, path, 'e2(limit=10)[id]');
  t.equal(first.status, 200);
  const h = /page\((pg\d+)\)/.exec(String(first.body.more))?.[1];
  t.ok(h, 'the first page has a handle');

  const before = vendor.requests.length;
  const dry = await runProgram(stack.url, path, `page(${h})`, 'mode=plan');
  t.equal(dry.status, 400, 'a continuation has no dry-run');
  t.equal(codeOf(dry), 'bad_arguments');
  t.match(dry.body.errors[0].hint, /send it as a live program/);
  t.equal(vendor.requests.length, before, 'nothing reached the vendor');

  const failed = await runProgram(stack.url, path, `page(${h})`);
  t.equal(failed.status, 502, 'the vendor failure comes back');
  t.equal(codeOf(failed), 'vendor_error');
  const retried = await runProgram(stack.url, path, `page(${h})`);
  t.equal(retried.status, 200, 'the same handle works on retry');
  t.same(
    retried.body.rows.map((r: { id: number }) => r.id),
    [11, 12, 13, 14, 15, 16, 17, 18, 19, 20],
  );
  const again = await runProgram(stack.url, path, `page(${h})`);
  t.equal(again.status, 200, 'after a success the handle can be sent again (an answer lost in transit)');
  t.same(again.body.rows, retried.body.rows, 'the same page');
  t.equal(again.body.more, retried.body.more, 'the same next handle');
});
