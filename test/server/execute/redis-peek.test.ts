/**
 * The early read of a Redis-held session against a real redis-server, with two replicas (two
 * ExecuteService cores, each over its own RedisSessionRepository connection to one Redis and one
 * prefix, as two processes are). It proves: `peek` answers the very state held only while the
 * last read found no other writer, and its `current` says false once another replica wrote (or
 * dropped the session); a clean read run early on a stale version is answered and recorded only
 * from a second run on the fresh session (the first vendor answer is dropped, its run never
 * written); a program that compiles only on the newer version answers rows; and a dry-run on a
 * stale version waits for the store instead of running twice.
 */
import t, { type Test } from 'tap';
import { SvcFailure } from '../../../common/errors.js';
import type { RedisRepositoryOptions } from '../../../server/execute/redis-repository.js';
import type { Peeked } from '../../../server/execute/repository.js';
import { ExecuteService, type ProgramRequest } from '../../../server/execute/service.js';
import type { SessionKey } from '../../../server/execute/state.js';
import { breweryWorld, redisRepo } from '../../_helpers/brewery-redis.js';
import { startRedis } from '../../_helpers/redis.js';

const redis = await startRedis(t);
// Each answer names the request it answers, so a test can tell which vendor call its rows came from.
const { vendor, registry, artifacts, beer } = await breweryWorld(t);
let prefixes = 0;

/** A repository on the test Redis under `keyPrefix` (another connection: another process). */
const repo = (t: Test, keyPrefix: string, opts: RedisRepositoryOptions = {}, url = redis.url) =>
  redisRepo(t, url, keyPrefix, opts);

/** Two replicas over one fresh prefix, and a session opened on `a` (e1 is brewery:Beer). */
async function replicas(t: Test, url = redis.url) {
  const keyPrefix = `peek${++prefixes}:`;
  const [a, b] = await Promise.all(
    [repo(t, keyPrefix, {}, url), repo(t, keyPrefix, {}, url)].map(async (r) => {
      const s = new ExecuteService({ registry: () => registry, sessions: await r, artifacts, runtime: {} });
      t.teardown(() => s.cancelAll(100));
      return s;
    }),
  );
  const o = await a!.open({ entry_id: 'brewery', seeds: ['Beer'] }, '');
  const key: SessionKey = { prompt_hash: o.extra.prompt_hash, session: o.extra.session };
  return { a: a!, b: b!, key };
}

const read: ProgramRequest = { program: 'e1[name]', mode: 'auto', wait: true, force: false };
const beers = () => vendor.hits('/beers').length;

/** An early find on `r` and `req` run on what it found, as the HTTP route and the MCP tool do. */
async function early(r: ExecuteService, key: SessionKey, req: ProgramRequest = read) {
  const f = await r.find(key, '', true);
  return { f, o: await r.program(f.session, req, f) };
}

/** `req` on `r` with a plain find (another replica writing the session). */
async function plain(r: ExecuteService, key: SessionKey, req: ProgramRequest = read) {
  return r.program((await r.find(key, '')).session, req);
}

/** The session as Redis holds it now, read through `r` (a plain find catches up). */
const stored = async (r: ExecuteService, key: SessionKey) => (await r.find(key, '')).session;

t.test('peek: the state held while quiet; false once another replica wrote or dropped it', async (t) => {
  const keyPrefix = `peek${++prefixes}:`;
  let clock = Date.now();
  const a = await repo(t, keyPrefix, { now: () => clock, limits: { idleMs: 60_000 } });
  const b = await repo(t, keyPrefix);
  const s = await a.create({ entry_id: 'brewery', cgs_hash: 'h'.repeat(64), intent: 'x', tenant: '' });
  const got = await a.get(s);
  const p1 = a.peek(s);
  t.equal(p1?.state, got, 'after a read that found its version: the very state get returned');
  t.equal(a.peek(s), undefined, 'one peek at a time: a second waits for the first to be released');
  t.equal(await p1?.current, true, 'and Redis says it is current');
  p1?.release();

  await b.next(s, 'pg');
  const p2 = a.peek(s);
  t.equal(p2?.state, got, 'after another replica wrote: A does not know yet, it answers the state held');
  t.equal(p2?.state.counters.pg, 0, 'which is behind');
  t.equal(await p2?.current, false, 'but Redis says it is not current');
  t.equal(a.peek(s), undefined, 'from then on A is not quiet: no peek');
  t.equal((await a.get(s))?.counters.pg, 1, 'get catches up (from the journal)');
  t.equal(a.peek(s), undefined, 'a read that found the version moved does not make it quiet');
  await a.get(s);
  const p3 = a.peek(s);
  t.equal(p3?.state.counters.pg, 1, 'a read that found its version held makes it quiet again');
  t.equal(await p3?.current, true);
  p3?.release();

  const during: Array<Peeked | undefined> = [];
  await a.update(s, (st) => {
    during.push(a.peek(s));
    st.teaching = 'a';
  });
  t.equal(during[0]?.state.teaching, 'a', 'a peek while a change is in flight: the state as changed');
  t.equal(await during[0]?.current, true, 'current once the change landed (asked on its version)');
  during[0]?.release();
  const p5 = a.peek(s);
  t.equal(await p5?.current, true, "A's own write keeps it quiet");
  p5?.release();

  await b.update(s, (st) => void (st.teaching = 'b'));
  await a.update(s, (st) => void (st.teaching += 'a'));
  t.equal((await b.get(s))?.teaching, 'ba', "A's write lost to B's, ran again on it");
  t.equal(a.peek(s), undefined, 'A, whose compare-and-set lost, is not quiet');

  await a.get(s);
  await a.get(s);
  clock += 60_001;
  t.equal(a.peek(s), undefined, 'an entry idle by the clock is not peeked');
  clock -= 60_001;

  const ahead = await repo(t, keyPrefix, { now: () => Date.now() + 7_200_000 });
  await ahead.sweep(); // for that replica's clock the session idled out: dropped
  const p4 = a.peek(s);
  t.ok(p4, 'A held it quiet and does not know it went');
  t.equal(await p4?.current, false, 'Redis says it is gone: not current');
  t.equal(a.peek(s), undefined, 'no peek of a session gone');
  t.equal(await a.get(s), undefined, 'and get finds none');
});

t.test('a clean read on a stale held version runs again on the fresh session', async (t) => {
  const { a, b, key } = await replicas(t);
  await early(a, key);
  const warm = await early(a, key);
  t.ok(warm.f.current, 'a quiet session is found early');
  t.equal(await warm.f.current, true, 'and it was current');
  t.equal(warm.o.results[0]?.rows.length, 1, 'the early read answers');

  t.same((await plain(b, key)).errors, [], 'B reads: its run is written to the session');
  const before = beers();
  const { f, o } = await early(a, key);
  t.ok(f.current, 'A still held the version it read last: it ran on it at once');
  t.equal(await f.current, false, 'which was not current');
  t.equal(beers() - before, 2, 'the vendor was asked twice: the early run, and the run on the fresh session');
  t.same(o.errors, []);
  t.same(o.results[0]?.rows, [{ name: `Beer ${beers() - 1}` }], 'the rows are those of the second call');
  const runs = (await stored(b, key)).runs;
  t.equal(runs.filter((r) => r.run_id === o.meta.run_id).length, 1, "A's run is recorded once");
  t.equal(runs.length, 4, 'two warm reads, B, and A once: the dropped early run left no record');

  const next = await early(a, key);
  t.notOk(next.f.current, 'A found the version moved: the next find is not early');
  t.equal(next.o.results[0]?.rows.length, 1);
  const after = await early(a, key);
  t.ok(after.f.current, 'a read that found its own version made it quiet: early again');
  t.equal(await after.f.current, true);
  t.equal((await stored(b, key)).runs.length, 6);
  await Promise.all([a.idle(), b.idle()]);
});

t.test('a program that compiles only on the newer version answers rows', async (t) => {
  const { a, b, key } = await replicas(t);
  await early(a, key);
  await early(a, key);
  const c = await b.context(await stored(b, key), ['Brewery']);
  t.match(c.text, /^e2\(.*brewery:Brewery/m, 'B taught a new seed: e2 is brewery:Brewery');
  const before = vendor.hits('/breweries').length;
  const f = await a.find(key, '', true);
  t.ok(f.current, 'A found its held version early');
  t.equal(f.session.symbols.lookup('e2'), undefined, 'on which e2 is unknown');
  const o = await a.program(f.session, { ...read, program: 'e2[name]' }, f);
  t.same(o.errors, [], 'no unknown_symbol: it compiled on the fresh session');
  t.same(o.results[0]?.rows, [{ name: 'Core' }]);
  t.equal(await f.current, false);
  t.equal(vendor.hits('/breweries').length - before, 1, 'one vendor call');
  await Promise.all([a.idle(), b.idle()]);
});

t.test('a dry-run on a stale held version waits for the store, and runs once on the fresh session', async (t) => {
  const { a, b, key } = await replicas(t);
  await early(a, key);
  await early(a, key);
  const calls = vendor.requests.length;
  // What B writes, then what A sends: a dry-run of a read after B's dry-run (a token), then a create
  // of e2 (m5, a write: `auto` dry-runs it) after B taught the seed that makes e2 and m5.
  const turns: Array<[() => Promise<{ errors: unknown[] }>, ProgramRequest]> = [
    [() => plain(b, key, { ...read, mode: 'plan' }), { ...read, mode: 'plan' }],
    [
      async () => b.context(await stored(b, key), ['Brewery']),
      { ...read, program: 'm5(name="New", city="Ghent", country="BE")' },
    ],
  ];
  for (const [write, req] of turns) {
    await stored(a, key); // a read that finds its own version: A is quiet
    t.same((await write()).errors, [], 'B writes the session');
    const tokens = (await stored(b, key)).tokens.size;
    const { f, o } = await early(a, key, req);
    t.ok(f.current, `${req.mode} ${req.program}: found early`);
    t.equal(await f.current, false, 'on a version that was not current');
    t.same(o.errors, [], 'it dry-ran on the fresh session');
    t.equal(o.meta.plan_commit_ref, `pc${tokens}`, 'its pcN follows the tokens B minted');
    t.equal((await stored(b, key)).tokens.size, tokens + 1, 'exactly one plan token minted');
  }
  t.equal(vendor.requests.length, calls, 'no vendor call');
  await Promise.all([a.idle(), b.idle()]);
});

// docs/deploy.md promises `store_unavailable` within about 1.5 s while Redis is away: an early
// read must not run on the held version then (peek answers nothing while the client is not ready).
t.test('an early read while Redis is away fails fast, without a vendor call', async (t) => {
  const own = await startRedis(t);
  const { a, key } = await replicas(t, own.url);
  await early(a, key);
  await early(a, key);
  await a.idle(); // the last read's run and page handle, answered before they landed, have landed
  await own.stop();
  beer.delayMs = 2_000;
  t.teardown(() => void (beer.delayMs = 0));
  const [before, started] = [beers(), Date.now()];
  const failed = await early(a, key).then(
    () => undefined,
    (e: unknown) => e,
  );
  const took = Date.now() - started;
  t.equal(failed instanceof SvcFailure && failed.errors[0]?.code, 'store_unavailable');
  t.equal(beers() - before, 0, 'no vendor call while the store is away');
  t.ok(took < 1_500, `answered within about 1.5 s (took ${took} ms)`);
});
