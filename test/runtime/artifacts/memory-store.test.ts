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
