/**
 * `WriteBehindStore.putOrHold` over a store that fails on demand (a double: a real store cannot be
 * made to refuse writes and then take them again within a unit test): the snapshot is held in
 * memory and retried until the store takes it; the byte budget drops the oldest held snapshot as
 * lost; close gives each a last write. The server-level outage (a real s3rver stopped and started
 * again) is test/server/artifact-outage.test.ts.
 */
import t from 'tap';
import { SILENT, type Logger } from '../../../common/log.js';
import { MemoryArtifactStore } from '../../../runtime/artifacts/memory-store.js';
import { artifactId, snapshotJson } from '../../../runtime/artifacts/snapshot.js';
import type { ArtifactStore } from '../../../runtime/artifacts/store.js';
import { WriteBehindStore } from '../../../runtime/artifacts/write-behind.js';
import { snapshot } from '../../_helpers/run-snapshot.js';
import { until } from '../../_helpers/until.js';

const BYTES = Buffer.byteLength(snapshotJson(snapshot(1)));

/** A memory store whose writes fail while `down`; counts writes and reads. */
function flakyStore() {
  const inner = new MemoryArtifactStore({ retentionSecs: 3600, gcIntervalSecs: 3600 });
  const c = { down: true, writes: 0, gets: 0 };
  const store: ArtifactStore = Object.assign(Object.create(inner) as ArtifactStore, {
    write: async (id: string, json: string) => {
      c.writes++;
      if (c.down) throw new Error('connect ECONNREFUSED');
      await inner.write(id, json);
    },
    get: (id: string) => {
      c.gets++;
      return inner.get(id);
    },
    stats: () => inner.stats(),
    close: () => inner.close(),
    writeNow: undefined,
  });
  return { store, inner, c };
}

const FAST = { firstDelayMs: 5, maxDelayMs: 20, closeWaitMs: 200 };

t.test('a failed write is held: read from memory, retried with backoff, stored once the store is back', async (t) => {
  const f = flakyStore();
  const logged: string[] = [];
  const logger: Logger = { ...SILENT, error: (m) => logged.push(m), info: (m) => logged.push(m) };
  const store = new WriteBehindStore(f.store, logger, FAST);
  t.teardown(() => store.close());
  const s = snapshot(1);
  const id = await store.putOrHold(s);
  t.equal(id, artifactId(s), 'the content-addressed id, as put() gives');
  t.equal(store.writeState(id), 'held');
  t.same(await store.get(id), JSON.parse(snapshotJson(s)), 'get answers it from memory');
  t.equal(f.c.gets, 0, 'without asking the store that failed');
  t.match(store.stats(), { pending_writes: 1, retrying_writes: 1, pending_bytes: BYTES, lost_writes: 0 });
  await until('two retries', () => f.c.writes >= 3);
  t.ok(store.stats().failed_writes! >= 3, 'each failed attempt is counted');
  f.c.down = false;
  await until('the held write to land', () => store.writeState(id) === undefined);
  t.ok(await f.inner.get(id), 'the store has it');
  t.match(store.stats(), { pending_writes: 0, retrying_writes: 0, pending_bytes: 0, lost_writes: 0 });
  t.match(logged, [/ph\/s1 could not be stored: held in memory, its write retried/, /is stored after \d+ retries/]);
});

t.test('past the byte budget the oldest held snapshot is lost, and reads say so', async (t) => {
  const f = flakyStore();
  const store = new WriteBehindStore(f.store, SILENT, { ...FAST, maxBytes: BYTES + 10 });
  t.teardown(() => store.close());
  const first = await store.putOrHold(snapshot(1));
  const second = await store.putOrHold(snapshot(2));
  t.equal(store.writeState(first), 'lost', 'the oldest goes first');
  t.equal(store.writeState(second), 'held', 'the newest stays');
  t.equal(await store.get(first), undefined, 'a lost one reads as absent');
  t.equal(f.c.gets, 0, 'without asking the store');
  t.ok(store.lostOf(first, 'ph/s1'), 'known as lost to its session');
  t.notOk(store.lostOf(first, 'ph/other'), 'not to another');
  t.match(store.stats(), { retrying_writes: 1, pending_bytes: BYTES, pending_max_bytes: BYTES + 10, lost_writes: 1 });
  const big = new WriteBehindStore(f.store, SILENT, { ...FAST, maxBytes: BYTES - 1 });
  t.teardown(() => big.close());
  const id = await big.putOrHold(snapshot(3));
  t.equal(big.writeState(id), 'lost', 'one larger than the whole budget is lost at once');
  t.match(big.stats(), { retrying_writes: 0, pending_bytes: 0, lost_writes: 1 });
});

t.test('close gives each held snapshot a last write; what the store still refuses is lost', async (t) => {
  const up = flakyStore();
  const a = new WriteBehindStore(up.store, SILENT, { ...FAST, firstDelayMs: 60_000 });
  const kept = await a.putOrHold(snapshot(1));
  up.c.down = false;
  await a.close();
  t.ok(await up.inner.get(kept), 'stored by the last write');
  t.match(a.stats(), { retrying_writes: 0, lost_writes: 0 });
  const down = flakyStore();
  const b = new WriteBehindStore(down.store, SILENT, { ...FAST, firstDelayMs: 60_000 });
  const gone = await b.putOrHold(snapshot(2));
  await b.close();
  t.equal(b.writeState(gone), 'lost');
  t.match(b.stats(), { retrying_writes: 0, pending_bytes: 0, lost_writes: 1 });
});

t.test('a store that takes the write: putOrHold holds nothing', async (t) => {
  const f = flakyStore();
  f.c.down = false;
  const store = new WriteBehindStore(f.store, SILENT, FAST);
  t.teardown(() => store.close());
  const id = await store.putOrHold(snapshot(1));
  t.equal(store.writeState(id), undefined);
  t.ok(await store.get(id));
  t.match(store.stats(), { pending_writes: 0, retrying_writes: 0, failed_writes: 0, lost_writes: 0 });
});
