import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { readdir, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sha256Hex } from '../../../common/canonical.js';
import { FileArtifactStore } from '../../../runtime/artifacts/file-store.js';
import { artifactId } from '../../../runtime/artifacts/snapshot.js';
import type { StoreOptions } from '../../../runtime/artifacts/store.js';
import { artifactStoreSuite, sampleSnapshot } from './store.case.js';

/** A fresh temp directory removed when the test ends. */
function tempDir(tt: { teardown(fn: () => unknown): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-artifacts-'));
  tt.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const OPTS: StoreOptions = { retentionSecs: 600, gcIntervalSecs: 300 };

let suiteDirs = 0;
const root = mkdtempSync(join(tmpdir(), 'svc-artifacts-suite-'));
t.teardown(() => rmSync(root, { recursive: true, force: true }));

artifactStoreSuite('file', async (opts) => {
  const dir = join(root, `s${suiteDirs++}`, 'nested');
  const store = await FileArtifactStore.open(dir, opts);
  return { store, footprint: async () => (await readdir(dir)).length };
});

t.test('file: open creates the directory (mode 0700) and files are 0600', async (t) => {
  const dir = join(tempDir(t), 'a', 'b');
  const store = await FileArtifactStore.open(dir, OPTS);
  t.teardown(() => store.close());
  t.equal((await stat(dir)).mode & 0o777, 0o700);
  const id = await store.put(sampleSnapshot(1));
  t.same(await readdir(dir), [`${id}.json`]);
  t.equal((await stat(join(dir, `${id}.json`))).mode & 0o777, 0o600);
  t.equal(sha256Hex(await readFile(join(dir, `${id}.json`))), id.slice(2), 'the file holds exactly the hashed bytes');
});

t.test('file: a store opened on the same directory after a restart serves earlier snapshots', async (t) => {
  const dir = tempDir(t);
  const first = await FileArtifactStore.open(dir, OPTS);
  const ids = await Promise.all([1, 2, 3].map((n) => first.put(sampleSnapshot(n))));
  await first.close();
  const second = await FileArtifactStore.open(dir, OPTS);
  t.teardown(() => second.close());
  for (const [i, id] of ids.entries()) t.same(await second.get(id), sampleSnapshot(i + 1));
  t.equal(await second.put(sampleSnapshot(2)), ids[1], 'same id after the restart');
  t.equal((await readdir(dir)).length, 3);
});

t.test('file: concurrent puts never expose a partial file under the final name', async (t) => {
  const dir = tempDir(t);
  const store = await FileArtifactStore.open(dir, OPTS);
  t.teardown(() => store.close());
  let writing = true;
  let checked = 0;
  const bad: string[] = [];
  const reader = (async () => {
    while (writing) {
      for (const name of await readdir(dir)) {
        if (!name.endsWith('.json')) continue;
        const bytes = await readFile(join(dir, name));
        checked++;
        if (`${sha256Hex(bytes)}.json` !== name.slice(2)) bad.push(name);
      }
      await new Promise((r) => setImmediate(r));
    }
  })();
  const snaps = Array.from({ length: 50 }, (_, i) => sampleSnapshot(i, 400));
  const ids = await Promise.all([...snaps.map((s) => store.put(s)), ...snaps.slice(0, 10).map((s) => store.put(s))]);
  writing = false;
  await reader;
  t.same(bad, [], `every file seen under a final name was complete (${checked} reads)`);
  const names = (await readdir(dir)).sort();
  t.equal(names.length, 50, 'one file per snapshot, no temp file left');
  t.ok(names.every((n) => /^pr[0-9a-f]{64}\.json$/.test(n)));
  for (const [i, s] of snaps.entries()) {
    t.equal(ids[i], artifactId(s));
    const got = await store.get(ids[i]!);
    if (!got) t.fail(`snapshot ${i} does not verify`);
    else t.equal(got.steps[0]?.rows.length, 400);
  }
});

t.test('file: a corrupt file reads as undefined, logs nothing, and a put repairs it', async (t) => {
  const dir = tempDir(t);
  const store = await FileArtifactStore.open(dir, OPTS);
  t.teardown(() => store.close());
  const logged: unknown[] = [];
  for (const k of ['log', 'warn', 'error', 'info', 'debug'] as const) {
    const orig = console[k];
    console[k] = (...a: unknown[]) => {
      logged.push(a);
    };
    t.teardown(() => {
      console[k] = orig;
    });
  }
  const snap = sampleSnapshot(1);
  const id = await store.put(snap);
  const file = join(dir, `${id}.json`);
  const good = await readFile(file);

  await writeFile(file, good.subarray(0, good.length - 10));
  t.equal(await store.get(id), undefined, 'truncated');
  await writeFile(file, Buffer.from(good.toString('utf8').replace('Berlin', 'Berlim')));
  t.equal(await store.get(id), undefined, 'one byte changed, still valid JSON');
  await writeFile(file, '');
  t.equal(await store.get(id), undefined, 'empty');
  await writeFile(file, Buffer.from([0xff, 0xfe, 0x00, 0x7b]));
  t.equal(await store.get(id), undefined, 'binary garbage');
  await writeFile(file, JSON.stringify(snap, null, 2));
  t.equal(await store.get(id), undefined, 'same content, not the hashed bytes');
  const notSnapshot = '[1,2,3]';
  const fakeId = 'pr' + sha256Hex(notSnapshot);
  await writeFile(join(dir, `${fakeId}.json`), notSnapshot);
  t.equal(await store.get(fakeId), undefined, 'hashes to its name but is no snapshot');
  t.same(logged, [], 'nothing logged');

  t.equal(await store.put(snap), id, 'put of the same snapshot');
  t.same(await store.get(id), snap, 'repairs the corrupt file');
});

t.test('file: gc removes stale temp files and leaves other files alone', async (t) => {
  const dir = tempDir(t);
  const store = await FileArtifactStore.open(dir, { retentionSecs: 7 * 86_400, gcIntervalSecs: 300 });
  t.teardown(() => store.close());
  const now = Date.now();
  const id = artifactId(sampleSnapshot(1));
  const at = async (name: string, ageMs: number, body = '{"half') => {
    await writeFile(join(dir, name), body);
    const s = (now - ageMs) / 1000;
    await utimes(join(dir, name), s, s);
  };
  await at(`${id}.json.tmp-123-aaaaaaaaaaaa`, 2 * 3600_000);
  await at(`${id}.json.tmp-123-bbbbbbbbbbbb`, 61 * 60_000);
  await at(`${id}.json.tmp-456-cccccccccccc`, 5 * 60_000);
  await at('README.txt', 30 * 86_400_000, 'operator notes');
  await at('pr-not-an-id.json', 30 * 86_400_000);
  const kept = await store.put(sampleSnapshot(2));
  t.equal(await store.gc(now), 0, 'temp files are not counted as snapshots');
  t.same(
    (await readdir(dir)).sort(),
    [`${id}.json.tmp-456-cccccccccccc`, `${kept}.json`, 'README.txt', 'pr-not-an-id.json'].sort(),
  );
  t.equal(await store.gc(now + 56 * 60_000), 0);
  t.same(
    (await readdir(dir)).sort(),
    [`${kept}.json`, 'README.txt', 'pr-not-an-id.json'].sort(),
    'the young temp file goes once an hour old',
  );
});

t.test('file: temp files older than a short retention go with it', async (t) => {
  const dir = tempDir(t);
  const store = await FileArtifactStore.open(dir, { retentionSecs: 120, gcIntervalSecs: 300 });
  t.teardown(() => store.close());
  const now = Date.now();
  const name = `${artifactId(sampleSnapshot(1))}.json.tmp-1-dddddddddddd`;
  await writeFile(join(dir, name), '{');
  const s = (now - 100_000) / 1000;
  await utimes(join(dir, name), s, s);
  await store.gc(now);
  t.same(await readdir(dir), [name], '100 s old: kept');
  await store.gc(now + 20_000);
  t.same(await readdir(dir), [], '120 s old: removed');
});

t.test('file: gc while puts are in flight never breaks a put', async (t) => {
  const dir = tempDir(t);
  let clock = Date.now();
  const store = await FileArtifactStore.open(dir, { retentionSecs: 1, gcIntervalSecs: 300, now: () => clock });
  t.teardown(() => store.close());
  const puts = Array.from({ length: 40 }, (_, i) => store.put(sampleSnapshot(i, 200)));
  const gcs = Array.from({ length: 10 }, () => store.gc(clock + 3600_000 * 2));
  const ids = await Promise.all(puts);
  await Promise.all(gcs);
  t.equal(ids.length, 40, 'every put resolved');
  const left = await readdir(dir);
  t.ok(
    left.every((n) => /^pr[0-9a-f]{64}\.json$/.test(n)),
    'no temp file left behind',
  );
  clock += 5000;
  await store.gc();
  t.same(await readdir(dir), []);
});
