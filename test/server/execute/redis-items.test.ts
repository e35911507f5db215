/**
 * The Redis repository keeps page handles, plan tokens and runs item by item apart from a session's
 * core (redis-items.ts), against a real redis-server: a clean read's update writes a few hundred
 * bytes and the core does not grow with the reads; what is stored survives a new repository
 * (a restart); the caps hold across two replicas writing in turn; a change that lost the
 * compare-and-set is dropped and runs again on a draft of the version the journal brought up to
 * date; a change that throws leaves the held state as it was; a replica too many writes behind reads in full.
 */
import { spawnSync } from 'node:child_process';
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import { mintPage } from '../../../server/execute/pages.js';
import { RedisSessionRepository } from '../../../server/execute/redis-repository.js';
import { JOURNAL_MAX } from '../../../server/execute/redis-scripts.js';
import { SESSION_HOLDS, type SessionKey, type SessionState } from '../../../server/execute/state.js';
import { startRedis } from '../../_helpers/redis.js';
import type { PageState } from '../../../runtime/fetch-rows.js';

const redis = await startRedis(t);
const admin = new Redis(redis.url);
t.teardown(() => admin.quit());
let prefixes = 0;

async function replica(t: Test, keyPrefix: string): Promise<RedisSessionRepository> {
  const repo = await RedisSessionRepository.connect(redis.url, { keyPrefix });
  t.teardown(() => repo.close());
  return repo;
}

const init = { entry_id: 'brewery', cgs_hash: 'h'.repeat(64), intent: 'x', tenant: 'acme' };
const page: PageState = {
  api: 'brewery',
  cgs_hash: 'h'.repeat(64),
  capability: 'list_beers',
  values: {},
  cursor: { page: 2 },
  size: 25,
  fetched: 25,
};

/** What finish-run does after a clean read: a page handle and a run record (the runs capped). */
function cleanRead(st: SessionState, i: number): string {
  const name = mintPage(st, page, 'brewery:Beer');
  st.runs.push({ run_id: `run-${i}`, commit_id: 'c'.repeat(64), status: 'succeeded', at: 'now', rows: 25 });
  if (st.runs.length > SESSION_HOLDS.maxRuns) st.runs.splice(0, st.runs.length - SESSION_HOLDS.maxRuns);
  return name;
}

/** The stored parts of a session as a replica sees it now (a copy: the held state changes in place). */
const view = (s: SessionState | undefined) =>
  structuredClone({
    teaching: s?.teaching,
    pages: [...(s?.pages ?? [])],
    tokens: [...(s?.tokens ?? [])],
    runs: s?.runs,
    counters: s?.counters,
  });

const m = (k: SessionKey) => `${k.prompt_hash}/${k.session}`;
const received = async () => Number(/total_net_input_bytes:(\d+)/.exec(await admin.info('stats'))![1]);

t.test('a clean read writes a few hundred bytes; the core does not grow with the reads', async (t) => {
  const p = `i${++prefixes}:`;
  const repo = await replica(t, p);
  const s = await repo.create(init);
  await repo.update(s, (st) => void (st.teaching = 'T'.repeat(3000)));
  for (let i = 0; i < 300; i++) await repo.update(s, (st) => cleanRead(st, i));
  const core = await admin.hstrlen(`${p}s:${m(s)}`, 'st');
  t.ok(core < 4_000, `the core is ${core} bytes after 300 reads`);
  t.equal(await admin.hlen(`${p}pg:${m(s)}`), SESSION_HOLDS.maxPages, 'page handles: capped, in their own hash');
  t.equal(await admin.llen(`${p}ru:${m(s)}`), SESSION_HOLDS.maxRuns, 'runs: capped, in their own list');
  t.equal(await admin.hget(`${p}s:${m(s)}`, 'pg'), '300', 'the counter is a field of the session hash');
  await repo.get(s);
  const before = await received();
  t.equal(await repo.update(s, (st) => cleanRead(st, 300)), 'pg301');
  const sent = (await received()) - before;
  t.ok(sent < 1_500, `the update sent ${sent} bytes (the INFO command included)`);
});

t.test('page handles, tokens and runs survive a new repository, in order', async (t) => {
  const p = `i${++prefixes}:`;
  const repo = await replica(t, p);
  const s = await repo.create(init);
  for (let i = 0; i < 270; i++) await repo.update(s, (st) => cleanRead(st, i));
  await repo.update(s, (st) => {
    st.tokens.set('pc0', { commit_id: 'W', verdict: 'review', mutations: 1, minted_at: 5, program: 'x\ny' });
    st.tokens.set('pc1', { commit_id: 'R', verdict: 'proceed', mutations: 0, minted_at: 6 });
    st.pages.get('pg270')!.used = true;
  });
  await repo.spendToken(s, 'pc0', 'W', 7);
  const mine = view(await repo.get(s));
  const restarted = await replica(t, p);
  const back = view(await restarted.get(s));
  t.same(back, mine, 'read in full by a new repository: the same items, in the same order');
  t.equal(back.pages[0]?.[0], 'pg15', 'the oldest handles went (256 kept)');
  t.equal(back.runs?.[0]?.run_id, 'run-170', 'the oldest runs went (100 kept)');
  t.equal(back.tokens[0]?.[1].consumed_at, 7, 'a spent token stays spent');
});

t.test('caps and counters hold across two replicas writing in turn', async (t) => {
  const p = `i${++prefixes}:`;
  const [a, b] = [await replica(t, p), await replica(t, p)];
  const s = await a.create(init);
  const names: string[] = [];
  for (let i = 0; i < 300; i++) names.push(await (i % 2 ? b : a).update(s, (st) => cleanRead(st, i)));
  t.same(
    names,
    Array.from({ length: 300 }, (_, i) => `pg${i + 1}`),
    'every handle minted once, in order',
  );
  const [va, vb] = [view(await a.get(s)), view(await b.get(s))];
  t.same(va, vb, 'both replicas hold the same session');
  t.equal(va.pages.length, SESSION_HOLDS.maxPages);
  t.equal(va.runs?.length, SESSION_HOLDS.maxRuns);
  t.same(va, view(await (await replica(t, p)).get(s)), 'and so does a third one reading it in full');
  t.equal(await admin.hlen(`${p}pg:${m(s)}`), SESSION_HOLDS.maxPages);
  t.equal(await admin.llen(`${p}ru:${m(s)}`), SESSION_HOLDS.maxRuns);
});

/** Another process (a child node) makes a clean read's update of the session through its own repository. */
function readFromAnotherProcess(keyPrefix: string, s: SessionKey): void {
  const at = (path: string) => JSON.stringify(new URL(`../../../server/execute/${path}`, import.meta.url).href);
  const script = `
    const { RedisSessionRepository } = await import(${at('redis-repository.ts')});
    const { mintPage } = await import(${at('pages.ts')});
    const repo = await RedisSessionRepository.connect(${JSON.stringify(redis.url)}, { keyPrefix: ${JSON.stringify(keyPrefix)} });
    await repo.update(${JSON.stringify(s)}, (st) => {
      mintPage(st, ${JSON.stringify(page)}, 'brewery:Beer');
      st.runs.push({ run_id: 'run-100', commit_id: 'c', status: 'succeeded', at: 'now', rows: 25 });
    });
    await repo.close();`;
  const out = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  if (out.status !== 0) throw new Error(`the other process failed: ${out.stderr}`);
}

t.test(
  'a change that lost the compare-and-set is dropped and runs again on the version the journal brought',
  async (t) => {
    const p = `i${++prefixes}:`;
    const a = await replica(t, p);
    const s = await a.create(init);
    for (let i = 0; i < 5; i++) await a.update(s, (st) => cleanRead(st, i));
    await a.get(s);
    const seen: number[] = [];
    const out = await a.update(s, (st) => {
      seen.push(st.counters.pg);
      // The first attempt: another replica writes between this read and its compare-and-set.
      if (seen.length === 1) readFromAnotherProcess(p, s);
      st.pages.get('pg1')!.used = true;
      return cleanRead(st, 200);
    });
    t.same(seen, [5, 6], 'the change ran twice, the second time after the other write');
    t.equal(out, 'pg7');
    const got = view(await a.get(s));
    t.same(
      got.pages.map(([k]) => k),
      ['pg1', 'pg2', 'pg3', 'pg4', 'pg5', 'pg6', 'pg7'],
    );
    t.same(
      got.runs?.slice(-2).map((r) => r.run_id),
      ['run-100', 'run-200'],
      'what the lost attempt did is not kept twice',
    );
    t.same(got, view(await (await replica(t, p)).get(s)), 'what a holds is what Redis holds');
  },
);

t.test('a change that throws leaves the held state as it was', async (t) => {
  const p = `i${++prefixes}:`;
  const repo = await replica(t, p);
  const s = await repo.create(init);
  for (let i = 0; i < 3; i++) await repo.update(s, (st) => cleanRead(st, i));
  const before = view(await repo.get(s));
  await t.rejects(
    repo.update(s, (st) => {
      cleanRead(st, 9);
      st.pages.delete('pg1');
      st.pages.get('pg2')!.used = true;
      st.teaching = 'never';
      throw new Error('boom');
    }),
    { message: 'boom' },
  );
  const after = view(await repo.get(s));
  t.same(after, before, 'pages (in order), runs, counters and the core are back');
  t.same(after, view(await (await replica(t, p)).get(s)), 'and nothing was written');
});

t.test('a replica more writes behind than the journal holds reads the session in full', async (t) => {
  const p = `i${++prefixes}:`;
  const [a, b] = [await replica(t, p), await replica(t, p)];
  const s = await a.create(init);
  await b.get(s);
  for (let i = 0; i < JOURNAL_MAX + 5; i++) await a.update(s, (st) => cleanRead(st, i));
  t.equal(await admin.llen(`${p}j:${m(s)}`), JOURNAL_MAX, 'the journal is capped');
  t.same(view(await b.get(s)), view(await a.get(s)));
  await a.update(s, (st) => void (st.teaching = 'caught up'));
  await a.update(s, (st) => cleanRead(st, 99));
  t.same(view(await b.get(s)), view(await a.get(s)), 'a replica a few writes behind catches up from the journal');
});
