import t from 'tap';
import { SILENT, type Logger } from '../../../common/log.js';
import { artifactId, snapshotJson, type RunSnapshot } from '../../../runtime/artifacts/snapshot.js';
import { MemoryArtifactStore } from '../../../runtime/artifacts/memory-store.js';
import { WriteBehindStore } from '../../../runtime/artifacts/write-behind.js';
import { snapshot } from '../../_helpers/run-snapshot.js';
import { DEFAULT_HELD_MAX_BYTES } from '../../../runtime/artifacts/held.js';
import type { ArtifactStore } from '../../../runtime/artifacts/store.js';

/**
 * A memory store whose writes wait for `release()` (or fail with `fail()`): a slow or broken
 * backend. `checksIds`: it passes for a store that checks ids against content (file, S3), so
 * `putLater` takes the hash; else it mints, as with the memory store.
 */
function gatedStore(checksIds = false): {
  store: ArtifactStore;
  release(): void;
  fail(e: Error): void;
  writes: () => number;
} {
  const inner = new MemoryArtifactStore({ retentionSecs: 3600, gcIntervalSecs: 3600 });
  let open!: () => void;
  let broken!: (e: Error) => void;
  const gate = new Promise<void>((resolve, reject) => {
    open = resolve;
    broken = reject;
  });
  gate.catch(() => {});
  let writes = 0;
  const store: ArtifactStore = Object.assign(Object.create(inner) as ArtifactStore, {
    write: async (id: string, json: string) => {
      writes++;
      await gate;
      await inner.write(id, json);
    },
    get: (id: string) => inner.get(id),
    stats: () => inner.stats(),
    close: () => inner.close(),
    mintsIds: !checksIds,
    // Its writes wait for the gate: it does not write at once (as memory's own writeNow does).
    writeNow: undefined,
  });
  return { store, release: () => open(), fail: (e) => broken(e), writes: () => writes };
}

t.test('over a store that checks ids: putLater answers the hash at once; a read waits for the write', async (t) => {
  const g = gatedStore(true);
  const store = new WriteBehindStore(g.store);
  t.teardown(() => store.close());
  const s = snapshot(1);
  const id = store.putLater(() => s);
  t.equal(id, artifactId(s), 'the same id put() gives');
  t.equal(
    store.putLater(() => s),
    id,
    'a second putLater of the same snapshot',
  );
  t.equal(g.writes(), 1, 'is written once');
  t.equal(store.stats().pending_writes, 1);
  let read: RunSnapshot | undefined | 'waiting' = 'waiting';
  const reading = store.get(id).then((r) => (read = r));
  await new Promise((r) => setTimeout(r, 20));
  t.equal(read, 'waiting', 'the read waits while the write is in flight');
  g.release();
  await reading;
  t.same(read, JSON.parse(snapshotJson(s)), 'then answers the snapshot');
  t.equal(store.stats().pending_writes, 0);
  t.equal(store.stats().failed_writes, 0);
});

t.test('over the memory store: the id is minted, the snapshot built and written after the turn', async (t) => {
  const g = gatedStore();
  const store = new WriteBehindStore(g.store);
  t.teardown(() => store.close());
  const s = snapshot(1);
  let built = 0;
  const make = () => {
    built++;
    return s;
  };
  const id = store.putLater(make);
  t.match(id, /^pr[0-9a-f]{64}$/, 'an artifact id');
  t.not(id, artifactId(s), 'minted, not the hash');
  const again = store.putLater(make);
  t.not(again, id, 'each putLater mints its own id');
  t.equal(built, 0, 'nothing is built in the turn that answers');
  t.equal(store.stats().pending_writes, 2, 'both writes are pending from the start');
  let read: RunSnapshot | undefined | 'waiting' = 'waiting';
  const reading = store.get(id).then((r) => (read = r));
  t.equal(built, 1, 'a read of an id not built yet builds it at once');
  await new Promise((r) => setImmediate(r));
  t.equal(built, 2, 'the other is built in the next check phase');
  t.equal(g.writes(), 2);
  t.equal(read, 'waiting', 'the read waits while the write is in flight');
  g.release();
  await reading;
  t.same(read, JSON.parse(snapshotJson(s)), 'then answers the snapshot');
  t.same(await store.get(again), JSON.parse(snapshotJson(s)));
  t.same(store.stats(), {
    ...g.store.stats(),
    pending_writes: 0,
    retrying_writes: 0,
    pending_bytes: 0,
    pending_max_bytes: DEFAULT_HELD_MAX_BYTES,
    failed_writes: 0,
    lost_writes: 0,
  });
});

t.test('a snapshot that cannot be built is a failed write: logged and counted, its id absent', async (t) => {
  const logged: string[] = [];
  const logger: Logger = { ...SILENT, error: (msg) => logged.push(msg) };
  const store = new WriteBehindStore(new MemoryArtifactStore({ retentionSecs: 3600, gcIntervalSecs: 3600 }), logger);
  t.teardown(() => store.close());
  const id = store.putLater(() => {
    throw new Error('no snapshot');
  });
  t.equal(await store.get(id), undefined);
  t.equal(store.stats().failed_writes, 1);
  t.same(logged, ['the run artifact could not be stored']);
});

t.test('a failed write is logged and counted, and its id reads as absent', async (t) => {
  const g = gatedStore();
  const logged: Array<{ msg: string; fields: unknown }> = [];
  const logger: Logger = { ...SILENT, error: (msg, fields) => logged.push({ msg, fields }) };
  const store = new WriteBehindStore(g.store, logger);
  t.teardown(() => store.close());
  const id = store.putLater(() => snapshot(2));
  const read = store.get(id);
  g.fail(new Error('disk full'));
  t.equal(await read, undefined, 'the waiting read answers absent');
  await store.flush();
  t.equal(store.stats().failed_writes, 1);
  t.equal(store.stats().pending_writes, 0);
  t.equal(logged.length, 1);
  t.match(logged[0], {
    msg: 'the run artifact of session ph/s1 could not be stored',
    fields: { run_id: id, error: 'disk full' },
  });
});

t.test('put still answers once stored; flush waits for every write', async (t) => {
  const g = gatedStore();
  const store = new WriteBehindStore(g.store);
  t.teardown(() => store.close());
  const ids = [store.putLater(() => snapshot(3)), store.putLater(() => snapshot(4))];
  let flushed = false;
  const flushing = store.flush().then(() => (flushed = true));
  await new Promise((r) => setTimeout(r, 10));
  t.notOk(flushed, 'flush waits for the writes in flight');
  g.release();
  await flushing;
  for (const id of ids) t.ok(await g.store.get(id), 'both are stored');
});

t.test('over a store that writes at once (memory): no write is left pending after the immediate', async (t) => {
  const inner = new MemoryArtifactStore({ retentionSecs: 3600, gcIntervalSecs: 3600 });
  const store = new WriteBehindStore(inner);
  t.teardown(() => store.close());
  let built = 0;
  const make = (n: number) => () => {
    built++;
    return snapshot(n);
  };
  const a = store.putLater(make(1));
  const b = store.putLater(make(2));
  t.equal(built, 0, 'nothing is built in the turn that answers');
  t.equal(store.stats().pending_writes, 2, 'both are pending');
  t.same(await store.get(a), JSON.parse(snapshotJson(snapshot(1))), 'a read of one not built yet answers it');
  t.equal(inner.size, 1, 'having written it');
  await new Promise((r) => setImmediate(r));
  t.equal(built, 2, 'each built once');
  t.equal(inner.size, 2);
  t.equal(store.stats().pending_writes, 0, 'written in the immediate: nothing left in flight');
  t.same(await store.get(b), JSON.parse(snapshotJson(snapshot(2))));
  const c = store.putLater(make(3));
  t.equal(await store.delete(c), true, 'a delete of one not built yet deletes it');
  t.equal(await store.get(c), undefined);
  await new Promise((r) => setImmediate(r));
  t.equal(built, 3, 'and it is not built again');
});
