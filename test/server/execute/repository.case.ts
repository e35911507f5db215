/**
 * The shared case suite of `SessionRepository`, written against the interface only, so every
 * implementation (memory today, Redis for replicas) runs it unchanged: creating and reading,
 * atomic updates, counters that never repeat under concurrency, one-shot tokens spent once when
 * two callers race, idle expiry (a running operation keeps a session), caps per tenant and in all,
 * state that keeps its shape across updates (maps, the symbol table), snapshots that never change
 * (copy-on-write: an update makes a new one, a snapshot refuses changes) and a change that throws
 * leaving the session as it was. Not a test file itself.
 */
import t, { type Test } from 'tap';
import { SvcFailure } from '../../../common/errors.js';
import type { RepositoryLimits, SessionRepository } from '../../../server/execute/repository.js';
import type { OpDescriptor, SessionKey } from '../../../server/execute/state.js';
import { fixtureRegistry } from '../../_helpers/registry.js';

export interface RepositoryFactory {
  (opts: {
    limits: Partial<RepositoryLimits>;
    now: () => number;
  }): Promise<{ repo: SessionRepository; close(): Promise<void> }>;
}

const init = (tenant = 'acme', intent = 'x') => ({ entry_id: 'brewery', cgs_hash: 'h'.repeat(64), intent, tenant });

/** The code of a rejected promise's SvcFailure. */
async function codeOf(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
    return undefined;
  } catch (e) {
    if (!(e instanceof SvcFailure)) throw e;
    return e.errors[0]?.code;
  }
}

const running = (handle: string): OpDescriptor => ({
  handle,
  state: 'running',
  started: 0,
  steps: 1,
  returns: ['n1'],
  progress: {},
  version: 0,
  seen: 0,
  errors: [],
});

export function repositorySuite(name: string, factory: RepositoryFactory): void {
  let clock = 1_000_000;
  const open = async (t: Test, limits: Partial<RepositoryLimits> = {}) => {
    const r = await factory({ limits, now: () => clock });
    t.teardown(() => r.close());
    return r.repo;
  };

  t.test(`${name}: create, get, update`, async (t) => {
    const repo = await open(t);
    const a = await repo.create(init('acme', 'beer lists'));
    t.match(a.prompt_hash, /^[0-9a-f]{16}$/);
    t.match(a.session, /^[0-9a-f]{16}$/);
    t.equal(a.tenant, 'acme');
    t.same([...a.pins], [['brewery', 'h'.repeat(64)]]);
    const b = await repo.create(init('acme', 'beer lists'));
    t.equal(b.prompt_hash, a.prompt_hash, 'the same entry and intent: the same prompt_hash');
    t.not(b.session, a.session, 'a fresh session id');
    t.equal((await repo.get(a))?.session, a.session);
    t.equal(await repo.get({ prompt_hash: a.prompt_hash, session: '0'.repeat(16) }), undefined, 'an unknown address');
    const out = await repo.update(a, (s) => {
      s.teaching = 'T';
      s.pins.set('helpdesk', 'x');
      return s.pins.size;
    });
    t.equal(out, 2, 'update returns what the change returns');
    const after = await repo.get(a);
    t.equal(after?.teaching, 'T', 'the change is kept');
    t.same([...after!.pins.keys()], ['brewery', 'helpdesk'], 'maps keep their order');
    t.equal(
      await codeOf(repo.update({ prompt_hash: a.prompt_hash, session: '0'.repeat(16) }, () => 1)),
      'unknown_session',
    );
    t.equal(await repo.size(), 2);
  });

  t.test(`${name}: the symbol table survives updates`, async (t) => {
    const repo = await open(t);
    const registry = await fixtureRegistry();
    const s = await repo.create(init());
    await repo.update(s, (st) => {
      st.symbols.expose(registry, [{ api: 'brewery', entity: 'Beer' }]);
    });
    const got = await repo.get(s);
    t.equal(got?.symbols.entitySymbol('brewery', 'Beer')?.sym, 'e1', 'exposed symbols are kept');
    t.equal(got?.symbols.domainRevision, 1);
  });

  t.test(`${name}: a snapshot never changes; an update makes a new one`, async (t) => {
    const repo = await open(t);
    const registry = await fixtureRegistry();
    const s = await repo.create(init());
    await repo.update(s, (st) => {
      st.tokens.set('pc0', { commit_id: 'W', verdict: 'review', mutations: 1, minted_at: clock });
      st.ops.set('o1', running('o1'));
    });
    const before = (await repo.get(s))!;
    await repo.update(s, (st) => {
      st.teaching = 'T2';
      st.pins.set('helpdesk', 'x');
      st.symbols.expose(registry, [{ api: 'brewery', entity: 'Beer' }]);
      st.tokens.get('pc0')!.consumed_at = clock; // an entry changed in place
      st.ops.get('o1')!.progress.n1 = { phase: 'fetch', pages: 1, rows: 2, calls: 1 };
      st.runs.push({ run_id: 'r1', commit_id: 'W', status: 'succeeded', at: 'now', rows: 2 });
      st.logical.push('l_x');
      st.counters.pg += 1;
    });
    t.equal(before.teaching, '', 'the text as it was');
    t.same([...before.pins.keys()], ['brewery'], 'the pins as they were');
    t.equal(before.symbols.entitySymbol('brewery', 'Beer'), undefined, 'the symbol table as it was');
    t.equal(before.tokens.get('pc0')?.consumed_at, undefined, 'a token changed in place elsewhere: not here');
    t.same(before.ops.get('o1')?.progress, {}, 'an operation changed in place elsewhere: not here');
    t.same([before.runs.length, before.logical.length, before.counters.pg], [0, 0, 0], 'lists and counters');
    const after = (await repo.get(s))!;
    t.equal(after.teaching, 'T2', 'the new snapshot has the change');
    t.equal(after.tokens.get('pc0')?.consumed_at, clock);
    t.equal(after.ops.get('o1')?.progress.n1?.rows, 2);
    t.equal(after.symbols.entitySymbol('brewery', 'Beer')?.sym, 'e1');
    t.same([after.runs.length, after.logical, after.counters.pg], [1, ['l_x'], 1]);
    // A snapshot is read-only: a change outside `update` fails loudly instead of going unstored.
    t.throws(() => after.pins.set('x', 'y'), TypeError, 'its maps refuse set');
    t.throws(() => after.pages.delete('pg1'), TypeError, 'and delete');
    t.throws(() => after.runs.push(after.runs[0]!), TypeError, 'its lists are frozen');
    t.throws(() => void ((after as { teaching: string }).teaching = 'x'), TypeError, 'and so is the state');
    t.throws(
      () => after.symbols.expose(registry, [{ api: 'brewery', entity: 'Brewery' }]),
      TypeError,
      'and its symbols',
    );
  });

  t.test(`${name}: a change that throws leaves the session as it was`, async (t) => {
    const repo = await open(t);
    const registry = await fixtureRegistry();
    const s = await repo.create(init());
    await repo.update(s, (st) => {
      st.tokens.set('pc0', { commit_id: 'W', verdict: 'review', mutations: 1, minted_at: clock });
      st.counters.pc = 0;
    });
    const boom = new Error('boom');
    const thrown = await repo
      .update(s, (st) => {
        st.teaching = 'half';
        st.pins.set('helpdesk', 'x');
        st.symbols.expose(registry, [{ api: 'brewery', entity: 'Beer' }]);
        st.tokens.get('pc0')!.consumed_at = clock;
        st.tokens.delete('pc0');
        st.pages.set('pg1', { entity: 'brewery:Beer' } as never);
        st.runs.push({ run_id: 'r1', commit_id: 'W', status: 'succeeded', at: 'now', rows: 2 });
        st.counters.pc += 1;
        throw boom;
      })
      .catch((e: unknown) => e);
    t.equal(thrown, boom, 'the update fails with what the change threw');
    const got = (await repo.get(s))!;
    t.equal(got.teaching, '', 'the text as it was');
    t.same([...got.pins.keys()], ['brewery'], 'the pins');
    t.equal(got.symbols.entitySymbol('brewery', 'Beer'), undefined, 'the symbol table');
    t.same(got.tokens.get('pc0'), { commit_id: 'W', verdict: 'review', mutations: 1, minted_at: clock }, 'the token');
    t.same([got.pages.size, got.runs.length, got.counters.pc], [0, 0, 0], 'page handles, runs and counters');
    t.equal(await repo.next(s, 'pc'), 1, 'the next number follows the last one stored');
  });

  t.test(`${name}: counters never hand out a number twice, even concurrently`, async (t) => {
    const repo = await open(t);
    const s = await repo.create(init());
    t.equal(await repo.next(s, 'pc'), 0, 'pcN counts from 0');
    t.equal(await repo.next(s, 'pg'), 1, 'pgN from 1');
    t.equal(await repo.next(s, 'o'), 1, 'oN from 1');
    const many = await Promise.all(Array.from({ length: 200 }, () => repo.next(s, 'pg')));
    t.equal(new Set(many).size, 200, '200 concurrent mints: 200 different numbers');
    t.same(
      [...many].sort((x, y) => x - y),
      Array.from({ length: 200 }, (_, i) => i + 2),
      'and none skipped',
    );
    const mixed = await Promise.all(
      Array.from({ length: 50 }, (_, i) => (i % 2 ? repo.next(s, 'o') : repo.update(s, (st) => ++st.counters.o))),
    );
    t.equal(new Set(mixed).size, 50, 'next and an update counting by hand do not collide');
  });

  t.test(`${name}: a write token is spent once, even when two runs race for it`, async (t) => {
    const repo = await open(t);
    const s = await repo.create(init());
    await repo.update(s, (st) => {
      st.tokens.set('pc0', { commit_id: 'W', verdict: 'review', mutations: 1, minted_at: clock });
      st.tokens.set('pc1', { commit_id: 'R', verdict: 'proceed', mutations: 0, minted_at: clock });
    });
    const race = await Promise.allSettled([
      repo.spendToken(s, 'pc0', 'W', clock),
      repo.spendToken(s, 'pc0', 'W', clock),
    ]);
    t.equal(race.filter((r) => r.status === 'fulfilled').length, 1, 'exactly one of two concurrent spends succeeds');
    const lost = race.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    t.equal((lost.reason as SvcFailure).errors[0]?.code, 'plan_token_consumed');
    t.equal((await repo.get(s))?.tokens.get('pc0')?.consumed_at, clock, 'the token is marked consumed');
    for (let i = 0; i < 3; i++)
      t.equal((await repo.spendToken(s, 'pc1', 'R', clock)).commit_id, 'R', 'a read token is never consumed');
    t.equal(await codeOf(repo.spendToken(s, 'pc1', 'OTHER', clock)), 'plan_token_mismatch');
    t.equal(await codeOf(repo.spendToken(s, 'pc9', 'R', clock)), 'plan_token_unknown');
    t.equal(await codeOf(repo.spendToken(s, 'pc1', 'R', clock + 10 * 60 * 1000 + 1)), 'plan_token_expired');
  });

  t.test(`${name}: idle sessions expire; one with a running operation does not`, async (t) => {
    const repo = await open(t, { idleMs: 1000 });
    const idle = await repo.create(init());
    const busy = await repo.create(init());
    await repo.update(busy, (st) => {
      st.ops.set('o1', running('o1'));
    });
    clock += 1001;
    t.equal(await repo.get(idle), undefined, 'idle past the limit: gone');
    t.ok(await repo.get(busy), 'a running operation keeps its session');
    await repo.update(busy, (st) => {
      st.ops.get('o1')!.state = 'succeeded';
    });
    clock += 500;
    await repo.sweep();
    t.equal(await repo.size(), 1, 'touched 500 ms ago: kept by the sweep');
    clock += 1001;
    await repo.sweep();
    t.equal(await repo.size(), 0, 'the sweep drops it once idle');
  });

  t.test(`${name}: the per-tenant cap evicts within the tenant, refuses when all run operations`, async (t) => {
    const repo = await open(t, { maxSessionsPerTenant: 3, maxSessions: 100 });
    const other = await repo.create(init('globex'));
    const acme: SessionKey[] = [];
    for (let i = 0; i < 3; i++) {
      acme.push(await repo.create(init('acme')));
      clock += 1;
    }
    await repo.get(acme[0]!); // the first is now the most recently used
    clock += 1;
    await repo.create(init('acme'));
    t.ok(await repo.get(acme[0]!), 'a recently used session stays');
    t.equal(await repo.get(acme[1]!), undefined, 'the least recently used one of the tenant went');
    t.ok(await repo.get(other), 'another tenant is untouched');
    for (const k of [acme[0]!, acme[2]!])
      await repo.update(k, (st) => {
        st.ops.set('o1', running('o1'));
      });
    clock += 1;
    await repo.create(init('acme')); // evicts the one idle session of acme
    const all = await Promise.all([acme[0]!, acme[2]!].map((k) => repo.get(k)));
    t.ok(all.every(Boolean), 'sessions with a running operation are never evicted');
    const newest = await repo.create(init('acme')).catch((e: unknown) => e);
    // acme now holds 3: two running and the one just created (idle): that one goes.
    t.notOk(newest instanceof SvcFailure, 'an idle one could still go');
    await repo.update(newest as SessionKey, (st) => {
      st.ops.set('o1', running('o1'));
    });
    t.equal(
      await codeOf(repo.create(init('acme'))),
      'too_many_sessions',
      'every session of the tenant runs an operation: refused',
    );
    t.ok((await repo.create(init('globex'))).session, 'another tenant still opens sessions');
  });

  t.test(`${name}: sessions used several times in a row keep their order of last use`, async (t) => {
    for (const [uses, stays] of [
      ['aabbaa', 'a'],
      ['abbbaab', 'b'],
    ] as const) {
      const repo = await open(t, { maxSessionsPerTenant: 2, maxSessions: 100 });
      const keys = { a: await repo.create(init('acme')), b: await repo.create(init('acme')) };
      for (const u of uses) {
        clock += 1;
        await repo.get(keys[u as 'a' | 'b']);
      }
      clock += 1;
      await repo.create(init('acme')); // the tenant's cap: its least recently used session goes
      const gone = stays === 'a' ? 'b' : 'a';
      t.ok(await repo.get(keys[stays]), `${uses}: ${stays}, used last, stays`);
      t.equal(await repo.get(keys[gone]), undefined, `${uses}: ${gone} went`);
    }
  });

  t.test(`${name}: the global cap is a last resort across tenants`, async (t) => {
    const repo = await open(t, { maxSessionsPerTenant: 100, maxSessions: 2 });
    const a = await repo.create(init('a'));
    clock += 1;
    await repo.create(init('b'));
    clock += 1;
    await repo.create(init('c'));
    t.equal(await repo.size(), 2);
    t.equal(await repo.get(a), undefined, 'the least recently used session of any tenant went');
  });

  t.test(`${name}: logical refs find their session until it is dropped`, async (t) => {
    const repo = await open(t, { maxSessionsPerTenant: 1 });
    const a = await repo.create(init('acme'));
    t.equal(await repo.findLogical('l_abc'), undefined, 'an unbound ref');
    await repo.bindLogical(a, 'l_abc');
    await repo.bindLogical(a, 'l_abc');
    await repo.bindLogical(a, 'l_def');
    t.same(await repo.findLogical('l_abc'), { prompt_hash: a.prompt_hash, session: a.session });
    t.same((await repo.get(a))?.logical, ['l_abc', 'l_def'], 'listed once each in the session');
    t.equal(
      await codeOf(repo.bindLogical({ prompt_hash: a.prompt_hash, session: '0'.repeat(16) }, 'l_x')),
      'unknown_session',
      'binding to a session that does not exist fails',
    );
    clock += 1;
    await repo.create(init('acme')); // the per-tenant cap drops a
    t.equal(await repo.findLogical('l_abc'), undefined, 'the ref went with its session');
    t.equal(await repo.findLogical('l_def'), undefined);
  });
}
