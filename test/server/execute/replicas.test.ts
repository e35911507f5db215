/**
 * Two execute cores sharing one session store and one artifact store, as two replicas behind a
 * load balancer share Redis and S3 (the store here is the in-process one; the Redis deployment is
 * tested over real processes in test/surfaces/replicas.test.ts): an operation is polled and
 * cancelled from the replica that does not run it (`~` with `operation_not_on_replica`), its rows
 * are read on either once it ended, and an operation whose owner stopped renewing its lease turns
 * failed (`operation_lost`) instead of running forever; an owner that was only stalled writes its
 * end over that mark when it finishes.
 */
import t from 'tap';
import { join } from 'node:path';
import { SvcFailure } from '../../../common/errors.js';
import { loadCatalogDir } from '../../../pack/load.js';
import { MemoryArtifactStore } from '../../../runtime/artifacts/index.js';
import { MemorySessionRepository } from '../../../server/execute/memory-repository.js';
import { newReplicaId } from '../../../server/execute/replica.js';
import { ExecuteService } from '../../../server/execute/service.js';
import type { SessionKey } from '../../../server/execute/state.js';
import { startFaultVendor } from '../../_helpers/fault-vendor.js';

const BEERS = [{ id: 'x-1', name: 'One', brewery_id: 'b-1', style: 'ipa', abv: 5.5, ibu: 40 }];
const vendor = await startFaultVendor({ 'GET /beers': { json: BEERS, delayMs: 700 } });
t.teardown(() => vendor.close());
const { registry } = await loadCatalogDir(join(import.meta.dirname, '..', '..', '..', 'fixtures', 'packed'), {
  backendOverrides: { brewery: vendor.url },
});
const artifacts = new MemoryArtifactStore({ retentionSecs: 60, gcIntervalSecs: 60 });
t.teardown(() => artifacts.close());
const sessions = new MemorySessionRepository();

/** A replica: its own core (operations, plan cache, pools) over the shared stores. */
function replica(leaseMs: number, now: () => number = Date.now): ExecuteService {
  const s = new ExecuteService({
    registry: () => registry,
    sessions,
    artifacts,
    runtime: { progressIntervalMs: 0 },
    now,
    replica: { id: newReplicaId(), leaseMs, progressCoalesceMs: 50 },
  });
  t.teardown(() => s.cancelAll(100));
  return s;
}

async function open(a: ExecuteService): Promise<SessionKey> {
  const o = await a.open({ entry_id: 'brewery', seeds: ['Beer'] }, '');
  return { prompt_hash: o.extra.prompt_hash, session: o.extra.session };
}

const bg = { mode: 'live' as const, wait: false, force: false };

/** Start `e1[name]` (the beers) in the background on `r`; its handle. */
async function start(r: ExecuteService, key: SessionKey): Promise<string> {
  const o = await r.program((await r.find(key, '')).session, { ...bg, program: 'e1[name]' });
  if (o.kind !== 'started') throw new Error(`not started: ${JSON.stringify(o.errors)}`);
  return (o.meta.op as { n: string }).n;
}

/** `wait(h)` or `cancel(h)` sent to replica `r`, as any surface sends it. */
async function send(r: ExecuteService, key: SessionKey, what: 'wait' | 'cancel', h: string) {
  return r.program((await r.find(key, '')).session, { ...bg, wait: true, program: `${what}(${h})` });
}

async function codeOf(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
    return undefined;
  } catch (e) {
    if (e instanceof SvcFailure) return e.errors[0]?.code;
    throw e;
  }
}

t.test('wait and cancel on the replica that does not run the operation, rows on both once it ended', async (t) => {
  const a = replica(3_000);
  const b = replica(3_000);
  const key = await open(a);
  const h = await start(a, key);

  const elsewhere = await send(b, key, 'wait', h);
  t.equal(elsewhere.meta.code, 'operation_not_on_replica', 'the other replica says where it runs');
  t.match(elsewhere.text, new RegExp(`^~ ${h} running`), 'a `~` line: keep polling');
  t.equal(await codeOf(send(b, key, 'cancel', h)), 'operation_not_on_replica', 'cancel reaches only the owner');
  const here = await send(a, key, 'wait', h);
  t.notOk(here.meta.code, 'the owner answers a plain progress line');

  await a.background.idle();
  const onB = await send(b, key, 'wait', h);
  t.equal(onB.meta.status, 'succeeded');
  t.same(
    onB.results[0]?.rows.map((row) => row.name),
    ['One'],
    'rows hydrated from the shared artifact store',
  );
  t.same((await send(a, key, 'wait', h)).results, onB.results, 'the same answer on the owner');
});

t.test(
  'an operation whose lease lapsed fails on the next poll; its owner, alive, writes its end over that',
  async (t) => {
    const a = replica(300);
    // Replica b's clock runs 10 s ahead: for it, a's lease lapsed long ago (as if a was killed).
    const b = replica(300, () => Date.now() + 10_000);
    const key = await open(a);
    const h = await start(a, key);
    const lost = await send(b, key, 'wait', h);
    t.equal(lost.meta.status, 'failed');
    t.equal(lost.meta.code, 'operation_lost');
    t.match(lost.text, new RegExp(`^\\? ${h} failed: operation_lost`));
    t.notMatch(lost.errors[0]?.message, /may have landed/, 'a read: the plain message');
    t.match(lost.errors[0]?.hint, /run the program again/);
    t.equal((await send(b, key, 'cancel', h)).meta.status, 'failed', 'cancel of a lost operation answers its end');
    await a.background.idle();
    // The lost mark was a guess (the owner was only stalled); its end is a fact and wins.
    const ended = await send(a, key, 'wait', h);
    t.equal(ended.meta.status, 'succeeded', 'the owner, still alive, writes its end over the mark');
    t.same(
      ended.results[0]?.rows.map((row) => row.name),
      ['One'],
    );
    t.equal((await send(b, key, 'wait', h)).meta.status, 'succeeded', 'and every replica answers it');
  },
);

t.test('the owner renews its lease while the run goes on', async (t) => {
  const a = replica(300);
  const b = replica(300);
  const key = await open(a);
  const h = await start(a, key);
  await new Promise((r) => setTimeout(r, 500)); // longer than the lease: renewed at least once
  t.equal((await send(b, key, 'wait', h)).meta.code, 'operation_not_on_replica', 'still running, not lost');
  await a.background.idle();
  t.equal((await send(b, key, 'wait', h)).meta.status, 'succeeded');
});
