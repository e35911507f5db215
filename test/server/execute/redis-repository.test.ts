/**
 * The Redis session repository against a real redis-server: the shared case suite unchanged, then
 * what only a shared store has: two replicas on one Redis see each other's sessions, race for
 * counters and one-shot tokens without a repeat or a double spend, a change re-runs on fresh
 * state when another process wrote first, Redis's own expiry is a refreshed backstop, and an
 * outage fails fast with `store_unavailable` and heals without a restart of the process.
 */
import { spawnSync } from 'node:child_process';
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import { SvcFailure } from '../../../common/errors.js';
import { lineLogger, type Logger } from '../../../common/log.js';
import { RedisSessionRepository, TTL_MARGIN_MS } from '../../../server/execute/redis-repository.js';
import type { RepositoryLimits } from '../../../server/execute/repository.js';
import type { SessionState } from '../../../server/execute/state.js';
import { freePort, startRedis, type TestRedis } from '../../_helpers/redis.js';
import { until } from '../../_helpers/until.js';
import { repositorySuite } from './repository.case.js';

const redis = await startRedis(t);
let prefixes = 0;

/** A repository on `r` with a prefix of its own (a fresh, empty namespace), closed in teardown. */
async function replica(
  t: Test,
  r: TestRedis,
  opts: { keyPrefix?: string; limits?: Partial<RepositoryLimits>; now?: () => number; logger?: Logger } = {},
): Promise<RedisSessionRepository> {
  const repo = await RedisSessionRepository.connect(r.url, { keyPrefix: `t${++prefixes}:`, ...opts });
  t.teardown(() => repo.close());
  return repo;
}

/** The code of a rejected promise's SvcFailure. */
async function failure(p: Promise<unknown>): Promise<SvcFailure | undefined> {
  try {
    await p;
    return undefined;
  } catch (e) {
    if (e instanceof SvcFailure) return e;
    throw e;
  }
}

/** A running operation's descriptor. */
const running = {
  handle: 'o1',
  state: 'running' as const,
  started: 0,
  steps: 1,
  returns: [],
  progress: {},
  version: 0,
  seen: 0,
  errors: [],
};

const init = (tenant = 'acme') => ({ entry_id: 'brewery', cgs_hash: 'h'.repeat(64), intent: 'x', tenant });

repositorySuite('redis', async ({ limits, now }) => {
  const repo = await RedisSessionRepository.connect(redis.url, { limits, now, keyPrefix: `suite${++prefixes}:` });
  return { repo, close: () => repo.close() };
});

t.test('redis: two replicas on one Redis share sessions and logical refs', async (t) => {
  const keyPrefix = `t${++prefixes}:`;
  const [a, b] = [await replica(t, redis, { keyPrefix }), await replica(t, redis, { keyPrefix })];
  const s = await a.create(init());
  t.equal((await b.get(s))?.session, s.session, 'created by one, read by the other');
  await b.update(s, (st) => {
    st.teaching = 'from b';
    st.pins.set('helpdesk', 'x');
  });
  const seen = await a.get(s);
  t.equal(seen?.teaching, 'from b', 'changed by the other, seen by the first');
  t.same([...seen!.pins.keys()], ['brewery', 'helpdesk']);
  await b.bindLogical(s, 'l_shared');
  t.same(await a.findLogical('l_shared'), { prompt_hash: s.prompt_hash, session: s.session });
  t.equal(await a.size(), 1);
  t.equal(await b.size(), 1);
});

t.test('redis: counters never repeat when two replicas race', async (t) => {
  const keyPrefix = `t${++prefixes}:`;
  const [a, b] = [await replica(t, redis, { keyPrefix }), await replica(t, redis, { keyPrefix })];
  const s = await a.create(init());
  const got = await Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 ? a : b).next(s, 'pg')));
  t.equal(new Set(got).size, 200, '200 concurrent mints over two replicas: 200 different numbers');
  t.same(
    [...got].sort((x, y) => x - y),
    Array.from({ length: 200 }, (_, i) => i + 1),
    'and none skipped',
  );
  t.equal((await a.get(s))?.counters.pg, 200);
});

t.test('redis: a write token is spent once when two replicas race for it', async (t) => {
  const keyPrefix = `t${++prefixes}:`;
  const [a, b] = [await replica(t, redis, { keyPrefix }), await replica(t, redis, { keyPrefix })];
  const s = await a.create(init());
  const now = Date.now();
  await a.update(s, (st) => {
    for (let i = 0; i < 20; i++)
      st.tokens.set(`pc${i}`, { commit_id: 'W', verdict: 'review', mutations: 1, minted_at: now });
  });
  for (let i = 0; i < 20; i++) {
    const race = await Promise.allSettled([a.spendToken(s, `pc${i}`, 'W', now), b.spendToken(s, `pc${i}`, 'W', now)]);
    const lost = race.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    t.equal(lost.length, 1, `pc${i}: exactly one of two replicas spends it`);
    t.equal((lost[0]?.reason as SvcFailure).errors[0]?.code, 'plan_token_consumed');
  }
});

/** Another process (a child node) appends `text` to the session's teaching through its own repository. */
function writeFromAnotherProcess(url: string, keyPrefix: string, s: SessionState, text: string): void {
  const script = `
    const { RedisSessionRepository } = await import(${JSON.stringify(new URL('../../../server/execute/redis-repository.ts', import.meta.url).href)});
    const repo = await RedisSessionRepository.connect(${JSON.stringify(url)}, { keyPrefix: ${JSON.stringify(keyPrefix)} });
    await repo.update(${JSON.stringify({ prompt_hash: s.prompt_hash, session: s.session })}, (st) => { st.teaching += ${JSON.stringify(text)}; });
    await repo.close();`;
  const out = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  if (out.status !== 0) throw new Error(`the other process failed: ${out.stderr}`);
}

t.test('redis: a change runs again on fresh state when another process wrote first', async (t) => {
  const keyPrefix = `t${++prefixes}:`;
  const repo = await replica(t, redis, { keyPrefix });
  const s = await repo.create(init());
  const seen: string[] = [];
  const out = await repo.update(s, (st) => {
    seen.push(st.teaching);
    // The first attempt: another replica writes between this read and its compare-and-set.
    if (seen.length === 1) writeFromAnotherProcess(redis.url, keyPrefix, s, 'B');
    st.teaching += 'A';
    st.runs.push({ run_id: `r${seen.length}`, commit_id: 'c', status: 'ok', at: 'now', rows: 0 });
    return seen.length;
  });
  t.same(seen, ['', 'B'], 'the change ran twice, the second time on the other write');
  t.equal(out, 2, 'update returns what the last run of the change returned');
  const after = await repo.get(s);
  t.equal(after?.teaching, 'BA', 'both writes are kept, neither lost');
  t.same(
    after?.runs.map((r) => r.run_id),
    ['r2'],
    'what the lost attempt did is not kept',
  );
  await t.rejects(
    repo.update(s, (st) => {
      st.teaching = 'never';
      throw new Error('boom');
    }),
    { message: 'boom' },
  );
  t.equal((await repo.get(s))?.teaching, 'BA', 'a change that throws writes nothing');
});

t.test('redis: its own expiry is a backstop, refreshed on every touch; stale index entries go', async (t) => {
  let clock = 1_000_000;
  const keyPrefix = `t${++prefixes}:`;
  const repo = await replica(t, redis, { keyPrefix, limits: { idleMs: 1000 }, now: () => clock });
  const raw = new Redis(redis.url);
  t.teardown(() => raw.quit());
  const s = await repo.create(init());
  const key = `${keyPrefix}s:${s.prompt_hash}/${s.session}`;
  const ttl = 1000 + TTL_MARGIN_MS;
  t.ok((await raw.pttl(key)) > ttl - 5000, 'a new session expires in Redis after idleMs + the margin');
  await raw.pexpire(key, 50_000);
  await repo.update(s, (st) => {
    st.ops.set('o1', { ...running });
  });
  t.ok((await raw.pttl(key)) > ttl - 5000, 'an update (progress, a lease renewal) refreshes it');
  t.equal(await raw.hget(key, 'run'), '1', 'the run flag follows the state');
  await raw.del(key); // as if Redis expired it
  clock += 1001;
  t.equal(await repo.size(), 1, 'the index still lists it');
  await repo.sweep();
  t.equal(await repo.size(), 0, 'the sweep removes the stale entry');
});

t.test('redis: an outage fails fast with store_unavailable and heals without a restart', async (t) => {
  const own = await startRedis(t);
  const lines: string[] = [];
  const repo = await replica(t, own, { logger: lineLogger((l) => lines.push(l)) });
  const s = await repo.create(init());
  await own.stop();
  const calls: Array<[string, () => Promise<unknown>]> = [
    ['get', () => repo.get(s)],
    ['update', () => repo.update(s, () => 1)],
    ['next', () => repo.next(s, 'pg')],
    ['create', () => repo.create(init())],
    ['findLogical', () => repo.findLogical('l_x')],
    ['size', () => repo.size()],
    ['sweep', () => repo.sweep()],
  ];
  for (const [name, call] of calls) {
    const started = Date.now();
    const f = await failure(call());
    t.equal(f?.errors[0]?.code, 'store_unavailable', `${name}: store_unavailable`);
    t.match(f?.errors[0]?.hint, /Redis\) cannot be reached; retry in a few seconds/);
    t.ok(Date.now() - started < 2000, `${name}: failed within 2 s (${Date.now() - started} ms)`);
  }
  await own.restart();
  const fresh = await until('the repository to work again', () => repo.create(init()).catch(() => undefined), 100, 100);
  t.ok(fresh.session, 'after Redis is back a session is created again');
  t.equal(await repo.get(s), undefined, 'what the old Redis held is gone (nothing is persisted)');
  t.equal((await repo.next(fresh, 'pg')) + (await repo.size()), 2, 'and every call works');
  const said = lines.map((l) => l.replace(/^\S+ /, '').replace(/ at=.*/, ''));
  t.same(
    said,
    ['warn session store (Redis) unreachable; retrying', 'info session store (Redis) reachable again'],
    'the outage is logged once (reconnect errors are debounced), and the recovery once',
  );
});

t.test('redis: connecting to a Redis that is not there names the setting, never the password', async (t) => {
  const port = await freePort();
  const started = Date.now();
  const f = await failure(RedisSessionRepository.connect(`redis://:s3cret@127.0.0.1:${port}/0`));
  t.equal(f?.errors[0]?.code, 'store_unavailable');
  t.match(f?.errors[0]?.message, /SVC_MCP_TRANSPORT_KV_URL/);
  t.match(f?.errors[0]?.message, `redis://127.0.0.1:${port}/0`);
  t.notMatch(JSON.stringify(f?.errors), /s3cret/, 'the password is not echoed');
  t.ok(Date.now() - started < 2500, 'it gives up quickly');
});

t.test('an update right after a get is one round trip: a compare-and-set on the version just read', async (t) => {
  const r = await startRedis(t);
  const repo = await replica(t, r);
  const other = await replica(t, r, { keyPrefix: `t${prefixes}:` }); // the same namespace: another replica
  const admin = new Redis(r.url);
  t.teardown(() => admin.quit());
  /** Script calls Redis has run so far. */
  const scripts = async () => {
    const info = await admin.info('commandstats');
    return [...info.matchAll(/^cmdstat_(?:evalsha|eval):calls=(\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0);
  };
  const s = await repo.create(init());
  await repo.get(s);
  const before = await scripts();
  t.equal(await repo.update(s, (st) => (st.teaching = 'A')), 'A');
  t.equal((await scripts()) - before, 1, 'the write alone');
  t.equal((await other.get(s))?.teaching, 'A', 'and another replica reads it');

  await repo.get(s);
  await other.update(s, (st) => void (st.teaching = 'B')); // moves the version under repo's feet
  const seen: string[] = [];
  await repo.update(s, (st) => {
    seen.push(st.teaching);
    st.teaching += '+C';
  });
  t.same(seen, ['A', 'B'], 'a stale version only fails the set: the change runs again on the fresh state');
  t.equal((await other.get(s))?.teaching, 'B+C');
});

t.test('a version this process holds is not sent again: a repeated get moves a few bytes, not the state', async (t) => {
  const r = await startRedis(t);
  const repo = await replica(t, r);
  const other = await replica(t, r, { keyPrefix: `t${prefixes}:` });
  const admin = new Redis(r.url);
  t.teardown(() => admin.quit());
  /** Bytes Redis has sent to its clients so far. */
  const sent = async () => Number(/total_net_output_bytes:(\d+)/.exec(await admin.info('stats'))![1]);
  const s = await repo.create(init());
  await repo.update(s, (st) => void (st.teaching = 'x'.repeat(50_000)));
  await repo.get(s);
  const before = await sent();
  const again = await repo.get(s);
  const moved = (await sent()) - before;
  t.equal(again?.teaching.length, 50_000);
  t.ok(moved < 2_000, `the second get moved ${moved} bytes (the INFO reply included), not the 50 kB state`);

  await other.update(s, (st) => void (st.teaching = 'changed elsewhere'));
  t.equal((await repo.get(s))?.teaching, 'changed elsewhere', 'a version moved by another replica is read in full');
});
