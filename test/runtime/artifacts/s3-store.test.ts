/**
 * The S3 artifact store against a real s3rver (test/_helpers/s3rver.ts): the shared store suite,
 * the object layout under the prefix, corrupt objects, GC by LastModified (collected with a `now`
 * pushed into the future, never by touching object times) over several list pages, and the
 * failures: a missing bucket, a closed port, a store that goes away.
 */
import t from 'tap';
import { createServer } from 'node:net';
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { sha256Hex } from '../../../common/canonical.js';
import { SvcFailure, type SvcError } from '../../../common/errors.js';
import { S3ArtifactStore, type S3OpenOptions } from '../../../runtime/artifacts/s3-store.js';
import { artifactId, snapshotJson } from '../../../runtime/artifacts/snapshot.js';
import { startS3rver, useS3rverCredentials, type RunningS3rver } from '../../_helpers/s3rver.js';
import { artifactStoreSuite, sampleSnapshot } from './store.case.js';

useS3rverCredentials();
const s3 = await startS3rver();
t.teardown(() => s3.close());
const BUCKET = 'svc-runs';
await s3.client.send(new CreateBucketCommand({ Bucket: BUCKET }));

const RETENTION_MS = 600_000;
const OPTS: S3OpenOptions = { retentionSecs: RETENTION_MS / 1000, gcIntervalSecs: 300 };

/** Every object under `prefix` of `bucket` (all list pages), with its LastModified. */
async function objects(prefix: string, bucket = BUCKET, server: RunningS3rver = s3) {
  const out: Array<{ key: string; modified: number }> = [];
  let token: string | undefined;
  do {
    const page = await server.client.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
    );
    for (const o of page.Contents ?? []) out.push({ key: o.Key!, modified: o.LastModified!.getTime() });
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return out;
}

async function bytesOf(key: string, bucket = BUCKET): Promise<{ bytes: Uint8Array; type: string | undefined }> {
  const got = await s3.client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return { bytes: await got.Body!.transformToByteArray(), type: got.ContentType };
}

function putRaw(key: string, body: string | Uint8Array, bucket = BUCKET) {
  return s3.client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
}

async function opened(
  t: { teardown(fn: () => unknown): void },
  url: string,
  opts: Partial<S3OpenOptions> = {},
): Promise<S3ArtifactStore> {
  const store = await S3ArtifactStore.open(url, { ...OPTS, endpoint: s3.endpoint, ...opts });
  t.teardown(() => store.close());
  return store;
}

/** The errors of a rejected promise (fails the test when it resolves or rejects with something else). */
async function errorsOf(t: { fail(msg: string): void }, p: Promise<unknown>): Promise<SvcError[]> {
  try {
    await p;
  } catch (e) {
    if (e instanceof SvcFailure) return e.errors;
    t.fail(`rejected with ${String(e)}`);
    return [];
  }
  t.fail('resolved');
  return [];
}

let suiteStores = 0;
artifactStoreSuite('s3', async (opts) => {
  const prefix = `suite/s${suiteStores++}`;
  const store = await S3ArtifactStore.open(`s3://${BUCKET}/${prefix}`, { ...opts, endpoint: s3.endpoint });
  return { store, footprint: async () => (await objects(`${prefix}/`)).length, backendClock: true };
});

t.test('s3: one object <prefix>/<id>.json per snapshot, exactly the hashed bytes, as JSON', async (t) => {
  const store = await opened(t, `s3://${BUCKET}//layout/x/`);
  t.equal(store.prefix, 'layout/x', 'slashes normalised');
  t.same(store.stats(), { kind: 's3' });
  const snap = sampleSnapshot(1);
  const id = await store.put(snap);
  t.equal(id, artifactId(snap));
  t.same(
    (await objects('layout/')).map((o) => o.key),
    [`layout/x/${id}.json`],
  );
  const { bytes, type } = await bytesOf(`layout/x/${id}.json`);
  t.equal(sha256Hex(bytes), id.slice(2), 'the object holds exactly the hashed bytes');
  t.equal(Buffer.from(bytes).toString('utf8'), snapshotJson(snap));
  t.equal(type, 'application/json');

  const other = await opened(t, `s3://${BUCKET}/layout/x`);
  t.same(await other.get(id), snap, 'a store opened on the same URL (a restart, a replica) reads it');
});

t.test('s3: without a prefix the objects sit at the bucket root, and gc leaves other objects alone', async (t) => {
  await s3.client.send(new CreateBucketCommand({ Bucket: 'svc-root' }));
  const store = await opened(t, 's3://svc-root');
  const id = await store.put(sampleSnapshot(2));
  const stray = artifactId(sampleSnapshot(3));
  await putRaw('notes.txt', 'operator notes', 'svc-root');
  await putRaw(`nested/${stray}.json`, snapshotJson(sampleSnapshot(3)), 'svc-root');
  await putRaw(`${stray}.json.bak`, '{}', 'svc-root');
  t.same(
    (await objects('', 'svc-root')).map((o) => o.key).sort(),
    [`${id}.json`, `${stray}.json.bak`, `nested/${stray}.json`, 'notes.txt'].sort(),
  );
  t.equal(await store.gc(Date.now() + 10 * RETENTION_MS), 1, 'only the snapshot counts');
  t.same(
    (await objects('', 'svc-root')).map((o) => o.key).sort(),
    [`${stray}.json.bak`, `nested/${stray}.json`, 'notes.txt'].sort(),
  );
});

t.test('s3: a corrupt object reads as undefined, and a put repairs it', async (t) => {
  const store = await opened(t, `s3://${BUCKET}/corrupt`);
  const snap = sampleSnapshot(4);
  const id = await store.put(snap);
  const key = `corrupt/${id}.json`;
  const good = snapshotJson(snap);
  const bad: Array<[string, string | Uint8Array]> = [
    ['truncated', good.slice(0, -10)],
    ['one byte changed, still valid JSON', good.replace('Berlin', 'Berlim')],
    ['empty', ''],
    ['binary garbage', new Uint8Array([0xff, 0xfe, 0x00, 0x7b])],
    ['same content, not the hashed bytes', JSON.stringify(snap, null, 2)],
  ];
  for (const [what, body] of bad) {
    await putRaw(key, body);
    t.equal(await store.get(id), undefined, what);
  }
  const notSnapshot = '[1,2,3]';
  const fakeId = 'pr' + sha256Hex(notSnapshot);
  await putRaw(`corrupt/${fakeId}.json`, notSnapshot);
  t.equal(await store.get(fakeId), undefined, 'hashes to its name but is no snapshot');
  t.equal(await store.put(snap), id);
  t.same(await store.get(id), snap, 'the put rewrote the object');
});

t.test('s3: gc deletes by LastModified over several list pages', async (t) => {
  const store = await opened(t, `s3://${BUCKET}/paged`, { listPageSize: 2 });
  const before = Math.floor(Date.now() / 1000) * 1000;
  const ids = await Promise.all(Array.from({ length: 7 }, (_, i) => store.put(sampleSnapshot(100 + i))));
  const after = Date.now();
  await putRaw(`paged/README.txt`, 'kept');
  await putRaw(`paged-not-under-the-prefix/${ids[0]}.json`, snapshotJson(sampleSnapshot(100)));
  const held = await objects('paged/');
  t.equal(held.length, 8);
  t.ok(
    held.every((o) => o.modified >= before && o.modified <= after),
    'LastModified is the time of the write',
  );
  t.equal(await store.gc(after), 0, 'nothing is past the retention');
  t.equal(await store.gc(before - 1 + RETENTION_MS), 0, 'not even a millisecond early');
  t.equal(await store.gc(after + RETENTION_MS), 7, 'all seven, listed two at a time');
  t.same((await objects('paged')).map((o) => o.key).sort(), [
    `paged-not-under-the-prefix/${ids[0]}.json`,
    'paged/README.txt',
  ]);
  t.equal(await store.gc(after + 10 * RETENTION_MS), 0);
});

t.test('s3: open on a bucket that does not exist is bad_arguments and creates nothing', async (t) => {
  const errors = await errorsOf(t, S3ArtifactStore.open('s3://no-such-bucket/x', { ...OPTS, endpoint: s3.endpoint }));
  t.equal(errors[0]?.code, 'bad_arguments');
  t.match(errors[0]?.message, /SVC_RUN_ARTIFACTS_URL.*`no-such-bucket` does not exist/);
  t.match(errors[0]?.hint, /create it/);
  t.notOk((await objects('', BUCKET)).some((o) => o.key.startsWith('x/')));
});

t.test('s3: open on a closed port is store_unavailable naming the variable, not the secrets', async (t) => {
  const probe = createServer().listen(0, '127.0.0.1');
  await new Promise((r) => probe.once('listening', r));
  const port = (probe.address() as { port: number }).port;
  await new Promise((r) => probe.close(r));
  const errors = await errorsOf(
    t,
    S3ArtifactStore.open(`s3://${BUCKET}/x`, { ...OPTS, endpoint: `http://127.0.0.1:${port}` }),
  );
  t.equal(errors[0]?.code, 'store_unavailable');
  t.match(errors[0]?.message, /SVC_RUN_ARTIFACTS_URL/);
  t.match(errors[0]?.message, new RegExp(`\`${BUCKET}\``));
  t.match(errors[0]?.cause, /ECONNREFUSED/);
  t.match(errors[0]?.hint, /retry/);
  t.notMatch(JSON.stringify(errors), /S3RVER/, 'no credential is echoed');
});

t.test('s3: ids that are no artifact ids never reach the store; other reads fail as store_unavailable', async (t) => {
  const gone = await startS3rver();
  t.teardown(() => gone.close());
  await gone.client.send(new CreateBucketCommand({ Bucket: 'svc-gone' }));
  const store = await S3ArtifactStore.open('s3://svc-gone/runs', { ...OPTS, endpoint: gone.endpoint });
  t.teardown(() => store.close());
  const id = await store.put(sampleSnapshot(5));
  t.equal((await objects('runs/', 'svc-gone', gone)).length, 1);
  await gone.close();
  for (const bad of ['pr' + '../'.repeat(20), id.toUpperCase(), `${id}.json`, `/${id}`, '', 'o1']) {
    t.equal(await store.get(bad), undefined, `get ${JSON.stringify(bad)} answers without a request`);
    t.equal(await store.delete(bad), false, `delete ${JSON.stringify(bad)} too`);
  }
  const requests = [() => store.get(id), () => store.delete(id), () => store.put(sampleSnapshot(6)), () => store.gc()];
  for (const request of requests) {
    const errors = await errorsOf(t, request());
    t.equal(errors[0]?.code, 'store_unavailable');
    t.match(errors[0]?.message, /SVC_RUN_ARTIFACTS_URL \(bucket `svc-gone`\) could not/);
    t.match(errors[0]?.hint, /retry shortly/);
  }
});
