/**
 * The claim an early read takes on a Redis-held session, against a real redis-server (never a
 * mock), seen from other processes (other RedisSessionRepository connections on one prefix; two
 * ExecuteService cores over them are two replicas). It proves: right after an early read on
 * replica A answered, replica B's plain read already sees that run in the session, even with A's
 * link to Redis slower than B's (B waits for A's write, sent after the answer, to land; or A's
 * write was awaited when A did not claim the session); while A holds a claim, B's read and B's
 * update wait, A's early update is answered and its write ends the claim, and B's update then
 * runs on A's write; `release()` with no write ends the claim at once; the claim of a process
 * that died (closed without releasing) lapses after its PX and B then reads; programs that are
 * not run early (a dry-run, a program that does not compile, one refused with a SvcFailure)
 * release the claim at once; and an early answer whose write then fails (Redis gone) is logged
 * through the repository's logger, naming the session, instead of thrown.
 */
import t, { type Test } from 'tap';
import { createServer, connect, type AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { SvcFailure } from '../../../common/errors.js';
import type { LogFields, Logger } from '../../../common/log.js';
import { CLAIM_MS } from '../../../server/execute/redis-read.js';
import type { RedisRepositoryOptions } from '../../../server/execute/redis-repository.js';
import { ExecuteService, type ProgramRequest } from '../../../server/execute/service.js';
import type { SessionKey } from '../../../server/execute/state.js';
import { breweryWorld, redisRepo } from '../../_helpers/brewery-redis.js';
import { startRedis } from '../../_helpers/redis.js';

const redis = await startRedis(t);
// A raw client (another connection) to look at claim keys as Redis holds them.
const raw = new Redis(redis.url);
t.teardown(() => raw.disconnect());
const { registry, artifacts } = await breweryWorld(t);
let prefixes = 0;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A repository on the test Redis under `keyPrefix` (another connection: another process). */
const repo = (t: Test, keyPrefix: string, opts: RedisRepositoryOptions = {}, url = redis.url) =>
  redisRepo(t, url, keyPrefix, opts);

/** The claim key of session `key` under `keyPrefix`. */
const claimKey = (keyPrefix: string, key: SessionKey) => `${keyPrefix}w:${key.prompt_hash}/${key.session}`;

/** Two replicas over one fresh prefix (and their repositories), and a session opened on `a` (e1 is brewery:Beer). */
async function replicas(t: Test, aUrl = redis.url) {
  const keyPrefix = `claim${++prefixes}:`;
  const repos = [await repo(t, keyPrefix, {}, aUrl), await repo(t, keyPrefix)] as const;
  const [a, b] = repos.map((sessions) => {
    const s = new ExecuteService({ registry: () => registry, sessions, artifacts, runtime: {} });
    t.teardown(() => s.cancelAll(100));
    return s;
  }) as [ExecuteService, ExecuteService];
  const o = await a.open({ entry_id: 'brewery', seeds: ['Beer'] }, '');
  const key: SessionKey = { prompt_hash: o.extra.prompt_hash, session: o.extra.session };
  return { a, b, aRepo: repos[0], key, claim: claimKey(keyPrefix, key) };
}

const read: ProgramRequest = { program: 'e1[name]', mode: 'auto', wait: true, force: false };

/**
 * A TCP proxy to the test Redis that delays what clients send by `ms` (in order; answers are not
 * delayed): a replica on a slower link, whose write, sent before another replica's read, lands
 * after it.
 */
async function slowLink(t: Test, ms: number): Promise<string> {
  const server = createServer((client) => {
    const up = connect(redis.port, '127.0.0.1');
    client.on('data', (d) => setTimeout(() => up.write(d), ms));
    up.on('data', (d) => client.write(d));
    client.on('close', () => setTimeout(() => up.destroy(), ms));
    up.on('close', () => client.destroy());
    client.on('error', () => up.destroy());
    up.on('error', () => client.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  return `redis://127.0.0.1:${(server.address() as AddressInfo).port}/0`;
}

/** An early find on `r` and `req` run on what it found, as the HTTP route and the MCP tool do. */
async function early(r: ExecuteService, key: SessionKey, req: ProgramRequest = read) {
  const f = await r.find(key, '', true);
  return { f, o: await r.program(f.session, req, f) };
}

/** The session as Redis holds it now, read through `r` (a plain find catches up). */
const stored = async (r: ExecuteService, key: SessionKey) => (await r.find(key, '')).session;

/** A promise and whether (and when) it has settled. */
function watched<T>(p: Promise<T>) {
  const w = { done: false, at: 0, value: undefined as T | undefined, error: undefined as unknown, p };
  w.p = p.then(
    (v) => {
      [w.done, w.at, w.value] = [true, performance.now(), v];
      return v;
    },
    (e: unknown) => {
      [w.done, w.at, w.error] = [true, performance.now(), e];
      throw e;
    },
  );
  return w;
}

/** Three repositories on one fresh prefix, and a session created on `a` that `a` read (so `a` is quiet). */
async function three(t: Test) {
  const keyPrefix = `claim${++prefixes}:`;
  const [a, b, c] = [await repo(t, keyPrefix), await repo(t, keyPrefix), await repo(t, keyPrefix)];
  const s = await a.create({ entry_id: 'brewery', cgs_hash: 'h'.repeat(64), intent: 'x', tenant: '' });
  t.ok(await a.get(s), 'A reads the session it created (a read that finds its own version: quiet)');
  return { a, b, c, s, claim: claimKey(keyPrefix, s) };
}

t.test("right after A's early read answered, B's plain read sees its run", async (t) => {
  // A's link to Redis is slow: its write, sent before B's read, reaches Redis after it. When A's
  // early find claimed the session (its touch, which A awaited), B's touch finds the claim and
  // waits for the write; when it did not, A's write was awaited before A answered.
  const { a, b, aRepo, key } = await replicas(t, await slowLink(t, 25));
  await early(a, key); // the first find is plain (A never read it); this read makes A quiet
  /** Whether A's write was still in flight when A answered (answered early, on a claim). */
  const inFlight = async () => !(await Promise.race([aRepo.settled().then(() => true), sleep(1).then(() => false)]));
  const N = 15;
  // Strictly alternating, then with a read on A before each early read (A touched the session last).
  for (const readFirst of [false, true]) {
    const what = readFirst ? 'with a read on A first' : 'alternating';
    let [earlyRuns, answeredEarly, misses] = [0, 0, 0];
    for (let i = 0; i < N; i++) {
      if (readFirst) await stored(a, key);
      const { f, o } = await early(a, key);
      if (await inFlight()) answeredEarly++;
      if (f.current && (await f.current)) earlyRuns++;
      const runs = (await stored(b, key)).runs;
      if (!o.meta.run_id || runs.at(-1)?.run_id !== o.meta.run_id) misses++;
    }
    t.equal(misses, 0, `${what}: every one of ${N} reads on B saw the run A had just answered as its last run`);
    t.ok(earlyRuns >= N - 2, `${what}: A ran early on a version found current (${earlyRuns}/${N})`);
    if (readFirst) t.ok(answeredEarly >= N - 2, `${what}: A answered before its write landed (${answeredEarly}/${N})`);
    else t.comment(`${what}: A answered before its write landed ${answeredEarly}/${N} times`);
  }
  t.equal((await stored(b, key)).runs.length, 2 * N + 1, 'each run recorded once');
  await Promise.all([a.idle(), b.idle()]);
});

t.test("A's claim holds B's read and update off until A's early write ended it", async (t) => {
  const { a, b, c, s, claim } = await three(t);
  const p = a.peek(s);
  t.ok(p, 'A peeks');
  t.equal(await p?.current, true, 'current: A claimed the session');
  t.match(await raw.get(claim), /^[0-9a-f]{16}$/, "the claim key holds A's process token");
  const bGet = watched(b.get(s));
  const bUpdate = watched(b.update(s, (st) => void (st.teaching += 'b')));
  await sleep(150);
  t.notOk(bGet.done, "B's get waits while A's claim holds");
  t.notOk(bUpdate.done, "B's update waits while A's claim holds");
  const answered = await a.update(s, (st) => ((st.teaching = 'a'), 'answer'), true);
  t.equal(answered, 'answer', "A's early update resolved with what its change returned");
  t.notOk(bGet.done || bUpdate.done, 'B still waits when A is answered (its write was only sent)');
  await a.settled();
  t.equal(await raw.exists(claim), 0, "A's write ended the claim: the key is gone once it landed");
  p?.release(); // used by the write: nothing left to end
  t.equal((await bGet.p)?.teaching.includes('a'), true, "B's get read A's write");
  await bUpdate.p;
  t.equal((await c.get(s))?.teaching, 'ab', "B's update ran on A's write (read through a third repository)");
});

t.test('release() with no write ends the claim at once', async (t) => {
  const { a, b, s, claim } = await three(t);
  const p = a.peek(s);
  t.equal(await p?.current, true, 'A claimed the session');
  const pttl = await raw.pttl(claim);
  t.ok(pttl > 0 && pttl <= CLAIM_MS, `the claim key has a PX of at most ${CLAIM_MS} ms (PTTL ${pttl})`);
  const bGet = watched(b.get(s));
  await sleep(150);
  t.notOk(bGet.done, "B's get waits while the claim holds");
  const left = await raw.pttl(claim);
  t.ok(left > 1_000, `the claim has more than a second left when released (${left} ms)`);
  const released = performance.now();
  p?.release();
  t.ok(await bGet.p, "B's get resolves");
  const took = bGet.at - released;
  t.ok(took < 500, `promptly after release, long before the claim would lapse (${Math.round(took)} ms)`);
  t.equal(await raw.exists(claim), 0, 'the claim key is gone');
  const again = a.peek(s);
  t.ok(again, 'A may peek again: its entry holds no claim');
  again?.release();
});

t.test('the claim of a process that died lapses after its PX', async (t) => {
  const { a, b, s, claim } = await three(t);
  const p = a.peek(s);
  t.equal(await p?.current, true, 'A claimed the session');
  await a.close(); // no release: the process is gone
  const before = performance.now();
  const pttl = await raw.pttl(claim);
  t.ok(pttl > 0, `the claim outlived A's connection (PTTL ${pttl})`);
  const bGet = watched(b.get(s));
  const got = await Promise.race([bGet.p, sleep(CLAIM_MS + 500).then(() => 'timeout' as const)]);
  t.not(got, 'timeout', `B's get resolved within ${CLAIM_MS + 500} ms`);
  t.equal(got !== 'timeout' && got?.session, s.session, 'with the session');
  const waited = bGet.at - before;
  t.ok(waited >= pttl - 20, `B waited for the claim to lapse (${Math.round(waited)} ms, PTTL was ${pttl})`);
  t.equal(await raw.exists(claim), 0, 'the claim key is gone');
});

t.test('programs not run early release the claim at once', async (t) => {
  const { a, b, aRepo, key, claim } = await replicas(t);
  await early(a, key);
  await early(a, key);
  await a.idle();
  t.equal(await raw.exists(claim), 0, 'no claim left after the early reads');

  const plan = await early(a, key, { ...read, mode: 'plan' });
  t.ok(plan.f.current, 'the dry-run was found early');
  t.equal(await plan.f.current, true, 'on a current version: A claimed the session');
  t.same(plan.o.errors, [], 'it dry-ran');
  t.equal(plan.o.meta.mode, 'plan');
  await a.idle();
  t.equal(await raw.exists(claim), 0, 'after a dry-run the claim key does not exist');

  // A program that does not compile is answered with its diagnostics (compileProgram never throws
  // on user input), and one refused with a SvcFailure (a continuation has no dry-run) is thrown:
  // neither runs early, and each releases the claim as soon as `current` resolved.
  const failing: Array<[string, ProgramRequest]> = [
    ['a program that does not compile', { ...read, program: 'e1[' }],
    ['a refused dry-run', { ...read, mode: 'plan', program: 'wait(o1)' }],
  ];
  for (const [what, req] of failing) {
    await stored(a, key); // a read that finds its own version: quiet again
    const f = await a.find(key, '', true);
    t.ok(f.current, `${what}: found early`);
    const out = await a.program(f.session, req, f).then(
      (o) => ({ o }),
      (e: unknown) => ({ e }),
    );
    t.equal(await f.current, true, `${what}: the version was current, A had claimed the session`);
    if (req.mode === 'plan') {
      t.ok('e' in out && out.e instanceof SvcFailure, `${what}: fails with a SvcFailure`);
      t.equal('e' in out && out.e instanceof SvcFailure && out.e.errors[0]?.code, 'bad_arguments');
    } else {
      t.ok('o' in out && out.o.errors.length > 0, `${what}: answered with its diagnostics`);
      t.same('o' in out && out.o.results, [], 'and no rows');
    }
    await aRepo.size(); // a round trip on A's connection, after the release it sent
    await a.idle();
    t.equal(await raw.exists(claim), 0, `${what}: the claim key does not exist`);
    const started = performance.now();
    await stored(b, key);
    t.ok(performance.now() - started < 500, `${what}: B reads at once`);
  }
});

t.test('an early answer whose write fails is logged, not thrown', async (t) => {
  const own = await startRedis(t);
  const errors: Array<{ msg: string; fields?: LogFields }> = [];
  const logger: Logger = { debug() {}, info() {}, warn() {}, error: (msg, fields) => errors.push({ msg, fields }) };
  const r = await repo(t, 'fail:', { logger }, own.url);
  const s = await r.create({ entry_id: 'brewery', cgs_hash: 'h'.repeat(64), intent: 'x', tenant: '' });
  t.ok(await r.get(s), 'read: quiet');
  const p = r.peek(s);
  t.equal(await p?.current, true, 'claimed');
  await own.stop();
  const out = await r
    .update(s, (st) => ((st.teaching = 'x'), 'answer'), true)
    .then(
      (v) => ({ v }),
      (e: unknown) => ({ e }),
    );
  t.same(out, { v: 'answer' }, 'the update resolved with what the change returned (answered as its write was sent)');
  await r.settled();
  t.equal(errors.length, 1, 'one error logged');
  t.match(errors[0]?.msg ?? '', /answered early/, 'saying a read answered early was not recorded');
  t.ok(errors[0]?.msg.includes(`${s.prompt_hash}/${s.session}`), 'naming the session');
  t.match(errors[0]?.fields, { error: /store|reach|connect|closed|writeable/i }, 'with the cause');
  p?.release();
  // The client may not have seen the connection close yet (status still 'ready'): then a peek is
  // given, and its touch fails. Either way nothing runs early while Redis is away.
  const again = r.peek(s);
  t.equal(again ? await again.current : false, false, 'no early read while Redis is away');
  again?.release();
});
