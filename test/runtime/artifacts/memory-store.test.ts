import t from 'tap';
import { MemoryArtifactStore } from '../../../runtime/artifacts/memory-store.js';
import { artifactStoreSuite, sampleSnapshot } from './store.case.js';

artifactStoreSuite('memory', async (opts) => {
  const store = new MemoryArtifactStore(opts);
  return { store, footprint: async () => store.size };
});

t.test('memory: a store is process-local (two instances share nothing)', async (t) => {
  const opts = { retentionSecs: 60, gcIntervalSecs: 300 };
  const a = new MemoryArtifactStore(opts);
  const b = new MemoryArtifactStore(opts);
  t.teardown(async () => {
    await a.close();
    await b.close();
  });
  const id = await a.put(sampleSnapshot(1));
  t.ok(await a.get(id));
  t.equal(await b.get(id), undefined);
});

t.test('memory: a byte budget, oldest dropped first, never the snapshot just stored; stats add up', async (t) => {
  const one = JSON.stringify(sampleSnapshot(0, 20)).length;
  const store = new MemoryArtifactStore({
    retentionSecs: 60,
    gcIntervalSecs: 300,
    memoryMaxBytes: Math.floor(one * 3.5),
  });
  t.teardown(() => store.close());
  const ids: string[] = [];
  for (let i = 0; i < 10; i++) ids.push(await store.put(sampleSnapshot(i, 20)));
  const st = store.stats();
  t.equal(st.kind, 'memory');
  t.ok(st.bytes! <= st.max_bytes!, `${st.bytes} bytes held of ${st.max_bytes}`);
  t.equal(st.count, 3, 'three snapshots fit');
  t.same(
    await Promise.all(ids.map(async (id) => (await store.get(id)) !== undefined)),
    [false, false, false, false, false, false, false, true, true, true],
    'the newest stay',
  );
  t.ok(await store.delete(ids[9]!));
  t.equal(store.stats().count, 2);
  t.ok(store.stats().bytes! < st.bytes!, 'a delete gives its bytes back');
  const huge = new MemoryArtifactStore({ retentionSecs: 60, gcIntervalSecs: 300, memoryMaxBytes: 10 });
  t.teardown(() => huge.close());
  const id = await huge.put(sampleSnapshot(1, 20));
  t.ok(await huge.get(id), 'a snapshot over the whole budget is still stored (until the next one)');
});

t.test('memory: snapshots are held as their UTF-8 bytes; any text comes back as stored', async (t) => {
  const store = new MemoryArtifactStore({ retentionSecs: 60, gcIntervalSecs: 300 });
  t.teardown(() => store.close());
  const s = sampleSnapshot(1);
  s.program = 'e1(q="Brasserie à Liège ☀ 𝄞 \u2028 \ud800")[name,city]';
  s.steps[0]!.rows[0]!.city = 'Zürich 東京 🍺';
  const id = await store.put(s);
  // A lone surrogate becomes U+FFFD in UTF-8 (and in JSON.stringify's output it is escaped, so kept).
  t.same(await store.get(id), s, 'the snapshot comes back equal');
  const bytes = Buffer.byteLength(JSON.stringify(s));
  t.ok(bytes > JSON.stringify(s).length, 'its text has characters of more than one byte');
  t.equal(store.stats().bytes, bytes, 'the budget counts bytes, not UTF-16 code units');
});

t.test(
  'memory: at most memoryPerSession snapshots per session, oldest dropped; other sessions untouched',
  async (t) => {
    const store = new MemoryArtifactStore({ retentionSecs: 60, gcIntervalSecs: 300, memoryPerSession: 3 });
    t.teardown(() => store.close());
    const of = (n: number, session: string) => ({
      ...sampleSnapshot(n),
      session: { prompt_hash: 'ph_1', session: session, tenant: '' },
    });
    const a: string[] = [];
    for (let i = 0; i < 5; i++) a.push(await store.put(of(i, 'sa')));
    const b = [await store.put(of(0, 'sb')), await store.put(of(1, 'sb'))];
    const loose = await store.put(sampleSnapshot(9));
    const held = async (ids: string[]) => Promise.all(ids.map(async (id) => (await store.get(id)) !== undefined));
    t.same(await held(a), [false, false, true, true, true], 'session a keeps its newest 3');
    t.same(await held(b), [true, true], 'session b keeps both');
    t.ok(await store.get(loose), 'a snapshot without a session is bounded only by the budget');
    t.equal(store.stats().count, 6);
    t.equal(store.stats().per_session, 3);
    t.ok(await store.delete(a[4]!));
    a.push(await store.put(of(5, 'sa')));
    t.same(await held(a), [false, false, true, true, false, true], 'a delete frees its slot: nothing else dropped');
    const bytes = store.stats().bytes!;
    await store.gc(Date.now() + 61_000);
    t.same([store.stats().count, store.stats().bytes], [0, 0], `gc empties it (from ${bytes} bytes)`);
    for (let i = 0; i < 4; i++) await store.put(of(10 + i, 'sa'));
    t.equal(store.stats().count, 3, 'after gc the session counts from zero again');
  },
);

t.test('memory: default 256 snapshots per session', async (t) => {
  const store = new MemoryArtifactStore({ retentionSecs: 60, gcIntervalSecs: 300 });
  t.teardown(() => store.close());
  for (let i = 0; i < 300; i++)
    await store.put({ ...sampleSnapshot(i), session: { prompt_hash: 'ph_1', session: 's', tenant: '' } });
  t.equal(store.stats().count, 256);
});
