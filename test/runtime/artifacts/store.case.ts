/**
 * The shared conformance suite of `ArtifactStore`: every implementation runs these same cases
 * (memory-store.test.ts, file-store.test.ts, s3-store.test.ts). Not a test file itself (no `.test.ts`).
 */
import t, { type Test } from 'tap';
import { setTimeout as delay } from 'node:timers/promises';
import { ARTIFACT_ID_PATTERN, artifactId, type RunSnapshot } from '../../../runtime/artifacts/snapshot.js';
import type { ArtifactStore, StoreOptions } from '../../../runtime/artifacts/store.js';

export interface StoreUnderTest {
  store: ArtifactStore;
  /** How many snapshots the backend holds right now (entries in memory, files on disk, objects). */
  footprint(): Promise<number>;
  /**
   * The backend stamps write times with its own (real) clock, in whole seconds (S3 LastModified):
   * the injected clock cannot age a snapshot, only the `now` given to `gc` (or the store clock at
   * GC time) can. The time cases then put at real times and collect relative to them.
   */
  backendClock?: boolean;
}

/** Opens a fresh, empty store with these options; the suite closes it. */
export type StoreFactory = (opts: StoreOptions) => Promise<StoreUnderTest>;

const T0 = Date.UTC(2025, 0, 1, 12, 0, 0);
/** Seconds of retention of the stores the suite opens. */
const RETENTION = 60;

/** A small valid snapshot; `n` makes its content (and so its id) unique. */
export function sampleSnapshot(n = 0, rows = 2): RunSnapshot {
  return {
    format: 1,
    plan_commit_id: 'a'.repeat(64),
    program: `e1(q="ipa ${n}")[name,city]`,
    status: 'succeeded',
    steps: [
      {
        id: 'n1',
        status: 'done',
        api: 'brewery',
        entity: 'Brewery',
        capability: 'listBreweries',
        rows: Array.from({ length: rows }, (_, i) => ({
          name: `Brewery ${n}-${i}`,
          city: 'Berlin',
          rating: 4.5,
          open: true,
          tags: ['a', 'b'],
          note: null,
        })),
        total: 100 + n,
        calls: 1,
        pages: 1,
        ms: 12,
      },
    ],
    returns: ['n1'],
    started_at: new Date(T0 + n).toISOString(),
    elapsed_ms: 15,
    session: { prompt_hash: 'ph1', session: 's1' },
  };
}

/** A settable clock for the store under test. */
function clock(start = T0) {
  let now = start;
  return {
    now: () => now,
    set: (ms: number) => {
      now = ms;
    },
  };
}

/**
 * Register the shared cases for one implementation.
 * @example artifactStoreSuite('memory', async (opts) => { const s = new MemoryArtifactStore(opts); return { store: s, footprint: async () => s.size }; });
 */
export function artifactStoreSuite(name: string, factory: StoreFactory): void {
  async function open(
    tt: Tap,
    opts: Partial<StoreOptions> = {},
  ): Promise<StoreUnderTest & { clock: ReturnType<typeof clock> }> {
    const c = clock();
    const s = await factory({ retentionSecs: RETENTION, gcIntervalSecs: 300, now: c.now, ...opts });
    tt.teardown(() => s.store.close());
    return { ...s, clock: c };
  }

  t.test(`${name}: put then get returns an equal snapshot`, async (tt) => {
    const { store } = await open(tt);
    const snap = sampleSnapshot(1);
    const id = await store.put(snap);
    const got = await store.get(id);
    tt.same(got, snap);
    tt.strictSame(got, JSON.parse(JSON.stringify(snap)), 'exactly the JSON content, nothing added');
    got!.steps[0]!.rows[0]!.name = 'changed by the caller';
    tt.same(await store.get(id), snap, 'mutating a returned snapshot does not change the stored one');
    snap.status = 'failed';
    tt.equal((await store.get(id))?.status, 'succeeded', 'mutating the put snapshot afterwards does not either');
  });

  t.test(`${name}: the same snapshot yields the same id and is stored once`, async (tt) => {
    const { store, footprint } = await open(tt);
    const a = await store.put(sampleSnapshot(2));
    const b = await store.put(sampleSnapshot(2));
    const [c, d] = await Promise.all([store.put(sampleSnapshot(2)), store.put(sampleSnapshot(2))]);
    tt.equal(a, b);
    tt.equal(a, c);
    tt.equal(a, d);
    tt.equal(await footprint(), 1);
  });

  t.test(`${name}: the id is pr + 64 hex and equals artifactId()`, async (tt) => {
    const { store } = await open(tt);
    const snap = sampleSnapshot(3);
    const id = await store.put(snap);
    tt.match(id, ARTIFACT_ID_PATTERN);
    tt.equal(id.length, 66);
    tt.equal(id, artifactId(snap));
  });

  t.test(`${name}: different content yields a different id`, async (tt) => {
    const { store, footprint } = await open(tt);
    const a = await store.put(sampleSnapshot(4));
    const changed = sampleSnapshot(4);
    changed.steps[0]!.rows[1]!.rating = 4.6;
    const b = await store.put(changed);
    tt.not(a, b);
    tt.equal(await footprint(), 2);
    tt.equal((await store.get(b))?.steps[0]?.rows[1]?.rating, 4.6);
    tt.equal((await store.get(a))?.steps[0]?.rows[1]?.rating, 4.5);
  });

  t.test(`${name}: unknown and malformed ids answer undefined / false`, async (tt) => {
    const { store } = await open(tt);
    const id = await store.put(sampleSnapshot(5));
    const bad = [
      'pr' + '0'.repeat(64),
      'pr../../etc/passwd',
      'pr' + '../'.repeat(20) + 'etc/passwd',
      id.toUpperCase(),
      'PR' + id.slice(2),
      'pr' + id.slice(2).toUpperCase(),
      id.slice(0, 65),
      id + '0',
      id.slice(2),
      `${id}.json`,
      `${id}/`,
      `/${id}`,
      `${id}\n`,
      `${id}\u0000`,
      '',
      'pr',
      'o1',
      'pg1',
      '..',
      '.',
    ];
    for (const b of bad) {
      tt.equal(await store.get(b), undefined, `get ${JSON.stringify(b)}`);
      tt.equal(await store.delete(b), false, `delete ${JSON.stringify(b)}`);
    }
    tt.ok(await store.get(id), 'the real one is still there');
  });

  t.test(`${name}: delete removes one snapshot`, async (tt) => {
    const { store, footprint } = await open(tt);
    const a = await store.put(sampleSnapshot(6));
    const b = await store.put(sampleSnapshot(7));
    tt.equal(await store.delete(a), true);
    tt.equal(await store.delete(a), false, 'a second delete finds nothing');
    tt.equal(await store.get(a), undefined);
    tt.ok(await store.get(b));
    tt.equal(await footprint(), 1);
    tt.equal(await store.put(sampleSnapshot(6)), a, 'it can be stored again');
    tt.ok(await store.get(a));
  });

  t.test(`${name}: gc with an injected now removes only expired snapshots`, async (tt) => {
    const s = await open(tt);
    if (s.backendClock) return gcByBackendClock(tt, s);
    const { store, clock: c, footprint } = s;
    const old = await store.put(sampleSnapshot(8));
    c.set(T0 + 30_000);
    const young = await store.put(sampleSnapshot(9));
    tt.equal(await store.gc(T0 + 59_000), 0, 'nothing is old enough yet');
    tt.equal(await footprint(), 2);
    tt.equal(await store.gc(T0 + RETENTION * 1000), 1, 'the first one reaches the retention');
    tt.equal(await store.get(old), undefined);
    tt.ok(await store.get(young));
    tt.equal(await store.gc(T0 + 89_000), 0);
    tt.equal(await store.gc(T0 + 90_000), 1);
    tt.equal(await store.get(young), undefined);
    tt.equal(await store.gc(T0 + 10 * 86_400_000), 0, 'an empty store collects nothing');
    c.set(T0 + 200_000);
    const fresh = await store.put(sampleSnapshot(10));
    tt.equal(await store.gc(), 0, 'without an argument gc uses the store clock');
    c.set(T0 + 200_000 + RETENTION * 1000);
    tt.equal(await store.gc(), 1);
    tt.equal(await store.get(fresh), undefined);
  });

  t.test(`${name}: many puts stay bounded after gc`, async (tt) => {
    const { store, clock: c, footprint, backendClock } = await open(tt);
    for (let round = 0; round < 3; round++) {
      const base = T0 + round * 2 * RETENTION * 1000;
      c.set(base);
      const ids = await Promise.all(
        Array.from({ length: 150 }, (_, i) => store.put(sampleSnapshot(round * 1000 + i, 5))),
      );
      tt.equal(new Set(ids).size, 150);
      tt.equal(await footprint(), 150, `round ${round}: 150 held`);
      const at = backendClock ? Date.now() : base;
      tt.equal(await store.gc(at + RETENTION * 1000), 150, `round ${round}: all expire`);
      tt.equal(await footprint(), 0, `round ${round}: nothing left`);
    }
  });

  t.test(`${name}: the store's own timer runs gc, and close stops it`, async (tt) => {
    const { store, clock: c, footprint, backendClock } = await open(tt, { gcIntervalSecs: 1 });
    await store.put(sampleSnapshot(11));
    c.set((backendClock ? Date.now() : T0) + RETENTION * 1000);
    for (let i = 0; i < 40 && (await footprint()) > 0; i++) await delay(100);
    tt.equal(await footprint(), 0, 'collected by the timer');
    await store.close();
    await store.close(); // idempotent
    c.set(T0);
    await store.put(sampleSnapshot(12));
    c.set((backendClock ? Date.now() : T0) + 10 * RETENTION * 1000);
    await delay(1300);
    tt.equal(await footprint(), 1, 'no collection after close');
    tt.ok(await store.get(artifactId(sampleSnapshot(12))), 'a closed store still reads');
  });
}

/**
 * The gc case for a backend that stamps write times itself in whole seconds: the two puts are
 * more than a second apart, so the second is stamped a later second than the first finished.
 */
async function gcByBackendClock(
  tt: Test,
  { store, clock: c, footprint }: StoreUnderTest & { clock: ReturnType<typeof clock> },
): Promise<void> {
  const retention = RETENTION * 1000;
  const before = Math.floor(Date.now() / 1000) * 1000;
  const old = await store.put(sampleSnapshot(8));
  const oldDone = Date.now();
  await delay(1100);
  const young = await store.put(sampleSnapshot(9));
  const youngDone = Date.now();
  tt.equal(await store.gc(before - 1 + retention), 0, 'nothing is old enough yet');
  tt.equal(await footprint(), 2);
  tt.equal(await store.gc(oldDone + retention), 1, 'the first one reaches the retention');
  tt.equal(await store.get(old), undefined);
  tt.ok(await store.get(young));
  tt.equal(await store.gc(youngDone + retention), 1);
  tt.equal(await store.get(young), undefined);
  tt.equal(await store.gc(youngDone + 10 * 86_400_000), 0, 'an empty store collects nothing');
  c.set(Date.now());
  const fresh = await store.put(sampleSnapshot(10));
  tt.equal(await store.gc(), 0, 'without an argument gc uses the store clock');
  c.set(Date.now() + retention);
  tt.equal(await store.gc(), 1);
  tt.equal(await store.get(fresh), undefined);
}

type Tap = { teardown(fn: () => unknown): void };
