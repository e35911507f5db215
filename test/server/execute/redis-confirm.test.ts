/**
 * When an early read's touch reaches Redis, against a real redis-server (never a mock), seen
 * through MONITOR (in the order Redis received the commands, stamped with Redis's clock). It
 * proves: `peek` sends nothing until `confirm()`, which sends the touch at once (and it claims
 * the session); without `confirm()` the touch goes out by itself after CONFIRM_FALLBACK_MS;
 * `release()` before `confirm()` sends nothing at all, resolves `current` false and leaves the
 * entry free to be peeked again; `confirmingHttp` confirms only after the immediates queued by
 * then (past undici's write of the request); and in ExecuteService an early clean read's touch
 * reaches Redis after its vendor request went out (right after, not at the fallback) and before
 * the vendor answered, while a dry-run and a run with no vendor call call `confirm()` themselves
 * (not left to the fallback). The order is Redis's own: the HTTP client sends a marker to Redis as
 * each request goes out and once it is answered. (The fault vendor runs in this process and stamps
 * a request, in whole ms, once this event loop reads it: just after the touch went out, so its
 * stamp and the touch's arrival are within a ms or so of each other either way; it is only logged.)
 */
import t, { type Test } from 'tap';
import { Redis } from 'ioredis';
import { PooledHttpClient, type HttpClient, type HttpResponse } from '../../../runtime/http-client.js';
import { confirmingHttp } from '../../../server/execute/early-read.js';
import { CLAIM_MS, CONFIRM_FALLBACK_MS } from '../../../server/execute/redis-read.js';
import { ExecuteService, type ProgramRequest } from '../../../server/execute/service.js';
import type { SessionKey } from '../../../server/execute/state.js';
import { breweryWorld, redisRepo } from '../../_helpers/brewery-redis.js';
import { startRedis } from '../../_helpers/redis.js';

const redis = await startRedis(t);
const raw = new Redis(redis.url);
t.teardown(() => raw.disconnect());
await raw.ping(); // ready: a command is written to the socket when it is sent

/** Every command Redis received, in order: `ms` is Redis's clock (microseconds, as milliseconds). */
const log: Array<{ ms: number; args: string[]; source: string }> = [];
const monitor = await raw.monitor();
monitor.on('monitor', (time: string, args: string[], source: string) =>
  log.push({ ms: Number(time) * 1000, args, source }),
);
t.teardown(() => monitor.disconnect());

const { vendor, registry, artifacts, beer } = await breweryWorld(t);
let prefixes = 0;
let marks = 0;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const immediate = () => new Promise<void>((r) => setImmediate(r));

/**
 * Send a marker (ECHO on the raw connection, written at once) and resolve with its index in the
 * log once MONITOR showed it: every command Redis received before it is in the log by then.
 */
function mark(text = `mark ${++marks}`): Promise<number> {
  void raw.echo(text);
  return (async () => {
    for (let i = 0; i < 2_000; i++) {
      const at = log.findIndex((e) => e.args[0] === 'echo' && e.args[1] === text);
      if (at >= 0) return at;
      await sleep(1);
    }
    throw new Error(`MONITOR never showed ${text}`);
  })();
}

/** Indices in log[from, to) of the touches that claim session `k` (svcTouch told CLAIM_MS: a peek's). */
function touches(k: string, from: number, to = log.length): number[] {
  const found: number[] = [];
  for (let i = from; i < to; i++) {
    const a = log[i]!.args;
    if (/^eval(sha)?$/i.test(a[0] ?? '') && a.includes(k) && a.at(-1) === String(CLAIM_MS)) found.push(i);
  }
  return found;
}

const keyOf = (s: SessionKey) => `${s.prompt_hash}/${s.session}`;

/** A repository on a fresh prefix and a session it created and read (so it is quiet: peeked). */
async function quiet(t: Test) {
  const prefix = `confirm${++prefixes}:`;
  const r = await redisRepo(t, redis.url, prefix);
  const s = await r.create({ entry_id: 'brewery', cgs_hash: 'h'.repeat(64), intent: 'x', tenant: '' });
  t.ok(await r.get(s), 'the repository reads the session it created (quiet)');
  return { r, s, k: keyOf(s), claim: `${prefix}w:${keyOf(s)}` };
}

t.test('peek sends nothing until confirm(), which sends the touch at once', async (t) => {
  const { r, s, k, claim } = await quiet(t);
  const from = await mark();
  const p = r.peek(s);
  t.ok(p, 'peeked');
  await sleep(5); // a timer due before the fallback's: it runs first even when both are late
  const m1 = await mark();
  t.same(touches(k, from, m1), [], `no touch reached Redis in the first 5 ms (fallback: ${CONFIRM_FALLBACK_MS} ms)`);
  p?.confirm();
  await immediate();
  const m2 = await mark();
  t.equal(touches(k, m1, m2).length, 1, 'after confirm() the touch reached Redis before a marker sent right after');
  t.equal(await p?.current, true, 'current resolves true');
  t.match(
    await raw.get(claim),
    /^[0-9a-f]{16}$/,
    "the touch claimed the session: the claim key holds this process's token",
  );
  p?.release();
  await r.size(); // a round trip on its connection, after the release
  t.equal(await raw.exists(claim), 0, 'release() ended the claim');
});

t.test('without confirm() the touch goes out after CONFIRM_FALLBACK_MS', async (t) => {
  const { r, s, k } = await quiet(t);
  const started = performance.now();
  const p = r.peek(s);
  const m0 = mark(); // sent right after the peek
  const got = await Promise.race([p?.current, sleep(2_000).then(() => 'timeout')]);
  const took = performance.now() - started;
  t.equal(got, true, 'current resolved true with no confirm()');
  const m1 = await mark();
  t.equal(touches(k, await m0, m1).length, 1, 'one touch reached Redis, after a marker sent right after the peek');
  t.ok(took >= CONFIRM_FALLBACK_MS - 1, `current resolved ${took.toFixed(1)} ms after the peek`);
  t.ok(took < CONFIRM_FALLBACK_MS + 500, 'about the fallback, not much later');
  p?.release();
});

t.test('release() before confirm() sends nothing and leaves the entry free', async (t) => {
  const { r, s, k, claim } = await quiet(t);
  const from = await mark();
  const p = r.peek(s);
  t.ok(p, 'peeked');
  p?.release();
  t.equal(await p?.current, false, 'current resolves false');
  await sleep(CONFIRM_FALLBACK_MS + 30); // past the fallback
  const m = await mark();
  t.same(touches(k, from, m), [], 'no touch of the session reached Redis');
  t.notOk(
    log.slice(from, m).some((e) => e.source !== 'lua' && e.args.includes(claim)),
    'nor any command on its claim key (no release)',
  );
  t.equal(await raw.exists(claim), 0, 'no claim key exists');
  const again = r.peek(s);
  t.ok(again, 'a second peek right after gives a Peeked: the entry is not stuck');
  again?.confirm();
  t.equal(await again?.current, true, 'and that one is current once confirmed');
  again?.release();
});

t.test('confirmingHttp confirms after the immediates queued by then', async (t) => {
  const order: string[] = [];
  let settle!: (r: HttpResponse) => void;
  const answer = new Promise<HttpResponse>((r) => (settle = r));
  let closed = 0;
  const stub: HttpClient = {
    request: () => {
      order.push('request');
      setImmediate(() => order.push('write')); // undici writes on a reused connection from an immediate
      return answer;
    },
    close: async () => void closed++,
  };
  const { http } = confirmingHttp(stub, () => order.push('confirm'));
  setImmediate(() => order.push('queued before'));
  const p = http?.request({ method: 'GET', url: 'http://x.invalid/', headers: {} }, { maxBodyBytes: 1 });
  order.push('returned');
  t.same(order, ['request', 'returned'], 'confirm is not called by request() itself');
  t.equal(p, answer, "request() answers the inner client's promise");
  await immediate();
  await immediate();
  t.same(order, ['request', 'returned', 'queued before', 'write', 'confirm'], 'confirm runs after those immediates');
  settle({ status: 200, headers: {}, body: Buffer.alloc(0) });
  t.equal((await p)?.status, 200, 'the answer passes through');
  await http?.close();
  t.equal(closed, 1, 'close() closes the inner client');
  t.same(confirmingHttp(undefined, undefined), {}, 'no confirm: {}');
  t.same(confirmingHttp(stub, undefined), {}, 'no confirm, with a client: {}');
  t.equal(
    confirmingHttp(undefined, () => {}).http?.timeouts,
    true,
    'no client: the default one (it times out), wrapped',
  );
});

const read: ProgramRequest = { program: 'e1[name]', mode: 'auto', wait: true, force: false };

/** Indices in log[from, to) of the markers `text` (ECHO from this process). */
const echoes = (text: string, from: number, to: number) =>
  log.slice(from, to).flatMap((e, i) => (e.args[0] === 'echo' && e.args[1] === text ? [from + i] : []));

/**
 * An ExecuteService over Redis (the session graph keeps rows a minute). Its HTTP client notes
 * `dispatch` as a request goes out and `answered` once it is answered (and sends those markers
 * to Redis); `early` runs a program on an early find, noting `confirm` when the core calls
 * `confirm()` and `current` when `current` resolved.
 */
async function service(t: Test) {
  const sessions = await redisRepo(t, redis.url, `confirm${++prefixes}:`);
  const pooled = new PooledHttpClient();
  t.teardown(() => pooled.close());
  const events: string[] = [];
  const note = (what: string) => void (events.push(what), raw.echo(what));
  const http: HttpClient = {
    timeouts: pooled.timeouts,
    request: (r, o) => {
      note('dispatch'); // written before the request is
      return pooled.request(r, o).finally(() => note('answered'));
    },
    close: () => pooled.close(),
  };
  const limits = { graphMaxAgeMs: 60_000 };
  const a = new ExecuteService({ registry: () => registry, sessions, artifacts, runtime: { http }, limits });
  t.teardown(() => a.cancelAll(100));
  const o = await a.open({ entry_id: 'brewery', seeds: ['Beer'] }, '');
  const key: SessionKey = { prompt_hash: o.extra.prompt_hash, session: o.extra.session };
  const early = async (req: ProgramRequest = read) => {
    const f = await a.find(key, '', true);
    const confirm = f.confirm;
    if (confirm) f.confirm = () => void (events.push('confirm'), confirm());
    void f.current?.then(() => events.push('current'));
    return { f, o: await a.program(f.session, req, f) };
  };
  await early(); // the first find is plain (never read); this read makes the session quiet
  await a.idle();
  events.length = 0;
  return { a, k: keyOf(key), early, events };
}

t.test("an early read's touch reaches Redis once its vendor request went out", async (t) => {
  const { a, k, early, events } = await service(t);
  beer.delayMs = 50;
  t.teardown(() => void (beer.delayMs = 0));
  const from = await mark();
  const { f, o } = await early();
  t.ok(f.current, 'found early');
  t.equal(await f.current, true, 'on a current version');
  t.equal(o.results[0]?.rows.length, 1, 'the answer has rows');
  const noted = events.filter((e) => e !== 'current').slice(0, 3);
  t.same(noted, ['dispatch', 'confirm', 'answered'], 'confirm() called once the request went out, before its answer');
  const m = await mark();
  const [sent, out, answered] = [touches(k, from, m), echoes('dispatch', from, m), echoes('answered', from, m)];
  t.equal(sent.length, 1, 'one touch');
  t.equal(out.length, 1, 'one vendor request');
  const [touch, request] = [sent[0] ?? NaN, out[0] ?? NaN];
  t.ok(request < touch, 'Redis received the touch after the marker sent as the vendor request went out');
  t.ok(touch < (answered[0] ?? -1), 'and before the marker sent once the vendor answered (50 ms later)');
  const sinceVendor = (log[touch]?.ms ?? NaN) - (vendor.hits('/beers').at(-1)?.at ?? NaN);
  t.comment(`the touch reached Redis ${sinceVendor.toFixed(2)} ms after the vendor's stamp of the request`);
  t.ok(sinceVendor < 50 - 10, "by the vendor's clock too, well before it answered (50 ms)");
  await a.idle();
});

t.test('a dry-run, and a run with no vendor call, ask at once', async (t) => {
  const { a, k, early, events } = await service(t);
  /** `run` found early, and it called confirm() (once) before `current` resolved: not left to the fallback. */
  const asksAtOnce = async (what: string, run: () => Promise<{ f: { current?: Promise<boolean> } }>) => {
    const from = await mark();
    events.length = 0;
    const { f } = await run();
    t.ok(f.current, `${what}: found early`);
    t.equal(await f.current, true, `${what}: on a current version`);
    t.same(events, ['confirm', 'current'], `${what}: confirm() was called, then current resolved`);
    t.equal(touches(k, from, await mark()).length, 1, `${what}: one touch`);
    await a.idle();
  };
  await asksAtOnce('a dry-run', async () => {
    const r = await early({ ...read, mode: 'plan' });
    t.same(r.o.errors, [], 'it dry-ran');
    return r;
  });
  t.same((await early({ ...read, program: 'brewery:Brewery()' })).o.errors, [], 'the breweries listed');
  await a.idle();
  const before = vendor.requests.length;
  await asksAtOnce('a get by id from the session graph', async () => {
    const r = await early({ ...read, program: 'brewery:Brewery("b-1")[name]' });
    t.same(r.o.results[0]?.rows, [{ name: 'Core' }], 'a get by id of a listed row answers');
    t.equal(vendor.requests.length, before, 'from the session graph: no vendor call');
    return r;
  });
});
