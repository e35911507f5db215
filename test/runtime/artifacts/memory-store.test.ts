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
  t.teardown(async () => { await a.close(); await b.close(); });
  const id = await a.put(sampleSnapshot(1));
  t.ok(await a.get(id));
  t.equal(await b.get(id), undefined);
});
