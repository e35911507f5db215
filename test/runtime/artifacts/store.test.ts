import t from 'tap';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { CreateBucketCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { SvcFailure } from '../../../common/errors.js';
import { FileArtifactStore } from '../../../runtime/artifacts/file-store.js';
import { MemoryArtifactStore } from '../../../runtime/artifacts/memory-store.js';
import { artifactSettingsFromEnv, type ArtifactStore } from '../../../runtime/artifacts/store.js';
import { storeFromUrl } from '../../../runtime/artifacts/store-from-url.js';
import { S3ArtifactStore } from '../../../runtime/artifacts/s3-store.js';
import { WriteBehindStore } from '../../../runtime/artifacts/write-behind.js';
import { DEFAULT_HELD_MAX_BYTES } from '../../../runtime/artifacts/held.js';
import { artifactId } from '../../../runtime/artifacts/snapshot.js';
import { startS3rver } from '../../_helpers/s3rver.js';
import { sampleSnapshot } from './store.case.js';

const execFileP = promisify(execFile);

const OPTS = { retentionSecs: 60, gcIntervalSecs: 300 };

/** The codes of a thrown SvcFailure (fails the test when something else was thrown). */
async function codesOf(t: Tap, p: Promise<unknown> | (() => unknown)): Promise<string[]> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    if (e instanceof SvcFailure) return e.errors.map((x) => x.code);
    t.fail(`threw ${String(e)}`);
    return [];
  }
  t.fail('did not throw');
  return [];
}
type Tap = { fail(msg: string): void };

async function opened(t: { teardown(fn: () => unknown): void }, url: string | undefined): Promise<ArtifactStore> {
  const s = await storeFromUrl(url, OPTS);
  t.teardown(() => s.close());
  return s;
}

t.test('storeFromUrl: unset, empty and memory: give a memory store', async (t) => {
  for (const url of [undefined, '', '  ', 'memory:', 'memory://', 'MEMORY:']) {
    t.type(await opened(t, url), MemoryArtifactStore, JSON.stringify(url));
  }
  t.same(await codesOf(t, storeFromUrl('memory:/some/path', OPTS)), ['bad_arguments']);
});

t.test('storeFromUrl: file:///abs/dir gives a file store and creates the directory', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'svc-artifacts-url-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const dir = join(root, 'runs', 'deep');
  const url = pathToFileURL(dir).href;
  t.match(url, /^file:\/\/\//);
  const s = await opened(t, url);
  t.type(s, FileArtifactStore);
  t.equal((s as FileArtifactStore).dir, dir);
  t.ok((await stat(dir)).isDirectory());
  const id = await s.put(sampleSnapshot(1));
  const again = await opened(t, url);
  t.same(await again.get(id), sampleSnapshot(1), 'a second store on the same URL reads it');
  t.type(await opened(t, `${url}/`), FileArtifactStore, 'a trailing slash is fine');
});

t.test('storeFromUrl: a file URL that names no absolute local directory is bad_arguments', async (t) => {
  for (const url of ['file://relative/dir', 'file:relative', 'file://', 'file:///dir%2Fx']) {
    t.same(await codesOf(t, storeFromUrl(url, OPTS)), ['bad_arguments'], url);
  }
});

t.test('storeFromUrl: any scheme but memory:, file: and s3: is unsupported_store with a hint', async (t) => {
  for (const url of ['gs://b', 'redis://localhost:6379', 'https://example.com/runs', 's3a://bucket/x']) {
    try {
      await storeFromUrl(url, OPTS);
      t.fail(`${url} accepted`);
    } catch (e) {
      t.type(e, SvcFailure);
      const err = (e as SvcFailure).errors[0]!;
      t.equal(err.code, 'unsupported_store', url);
      t.match(err.hint, /memory:/);
      t.match(err.hint, /file:\/\/\//);
      t.match(err.hint, /s3:\/\/bucket\/prefix/);
    }
  }
  try {
    await storeFromUrl('gs://AKIAEXAMPLE:topsecret@bucket/x', OPTS);
  } catch (e) {
    t.notMatch(
      JSON.stringify((e as SvcFailure).errors),
      /topsecret|AKIA/,
      'the URL (and any credential in it) is not echoed',
    );
  }
});

t.test(
  'storeFromUrl: s3:// opens an S3ArtifactStore from the settings; a WriteBehindStore works over it',
  async (t) => {
    const s3 = await startS3rver();
    t.teardown(() => s3.close());
    await s3.client.send(new CreateBucketCommand({ Bucket: 'svc-behind' }));
    const settings = artifactSettingsFromEnv({
      SVC_RUN_ARTIFACTS_URL: 's3://svc-behind/runs',
      SVC_S3_ENDPOINT: s3.endpoint,
    });
    const inner = await storeFromUrl(settings.url, settings);
    t.type(inner, S3ArtifactStore);
    const store = new WriteBehindStore(inner);
    t.teardown(() => store.close());
    const snap = sampleSnapshot(7);
    const id = store.putLater(() => snap);
    t.equal(id, artifactId(snap), 'S3 checks ids: the id is the hash');
    t.same(await store.get(id), snap, 'a read waits for the write');
    await store.flush();
    t.same(store.stats(), {
      kind: 's3',
      pending_writes: 0,
      retrying_writes: 0,
      pending_bytes: 0,
      pending_max_bytes: DEFAULT_HELD_MAX_BYTES,
      failed_writes: 0,
      lost_writes: 0,
    });
    const listed = await s3.client.send(new ListObjectsV2Command({ Bucket: 'svc-behind' }));
    t.same(
      listed.Contents?.map((o) => o.Key),
      [`runs/${id}.json`],
    );
  },
);

t.test('storeFromUrl loads the AWS SDK only for an s3 URL', async (t) => {
  const s3 = await startS3rver();
  t.teardown(() => s3.close());
  await s3.client.send(new CreateBucketCommand({ Bucket: 'svc-lazy' }));
  const root = join(import.meta.dirname, '..', '..', '..');
  /** How many @aws-sdk modules a fresh process holds after opening (and closing) the store of `url`. */
  const sdkModules = async (url: string) => {
    const code = `
      import { createRequire } from 'node:module';
      const { storeFromUrl } = await import(${JSON.stringify(pathToFileURL(join(root, 'runtime/artifacts/store-from-url.ts')).href)});
      const store = await storeFromUrl(process.env.PROBE_URL, { retentionSecs: 60, gcIntervalSecs: 60, s3: { endpoint: ${JSON.stringify(s3.endpoint)} } });
      await store.close();
      const loaded = Object.keys(createRequire(import.meta.url).cache).filter((k) => k.includes('@aws-sdk'));
      process.stdout.write(String(loaded.length));`;
    const env: NodeJS.ProcessEnv = { ...process.env, PROBE_URL: url };
    delete env.NODE_OPTIONS;
    const { stdout } = await execFileP(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
      cwd: root,
      env,
    });
    return Number(stdout);
  };
  t.equal(await sdkModules('memory:'), 0, 'memory: loads none');
  const dir = mkdtempSync(join(tmpdir(), 'svc-lazy-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  t.equal(await sdkModules(pathToFileURL(dir).href), 0, 'file: loads none');
  t.ok((await sdkModules('s3://svc-lazy/x')) > 0, 's3: loads it');
});

t.test('storeFromUrl: garbage is unsupported_store', async (t) => {
  for (const url of ['not a url', '/var/lib/svc/runs', './runs', '::', '1http://x', 'C:\\runs']) {
    t.same(await codesOf(t, storeFromUrl(url, OPTS)), ['unsupported_store'], url);
  }
});

t.test('artifactSettingsFromEnv: defaults', async (t) => {
  const defaults = {
    url: undefined,
    retentionSecs: 604_800,
    gcIntervalSecs: 300,
    memoryMaxBytes: 256 * 1024 * 1024,
    memoryPerSession: 256,
  };
  t.same(artifactSettingsFromEnv({}), defaults);
  t.same(
    artifactSettingsFromEnv({
      SVC_RUN_ARTIFACTS_URL: '',
      SVC_RUN_ARTIFACTS_RETENTION_SECS: '',
      SVC_RUN_ARTIFACTS_GC_INTERVAL_SECS: ' ',
      SVC_RUN_ARTIFACTS_MEMORY_MAX_BYTES: '',
      SVC_RUN_ARTIFACTS_MEMORY_PER_SESSION: '',
    }),
    defaults,
    'empty counts as unset',
  );
});

t.test('artifactSettingsFromEnv: values', async (t) => {
  t.same(
    artifactSettingsFromEnv({
      SVC_RUN_ARTIFACTS_URL: ' file:///var/lib/svc/runs ',
      SVC_RUN_ARTIFACTS_RETENTION_SECS: '3600',
      SVC_RUN_ARTIFACTS_GC_INTERVAL_SECS: ' 60 ',
      SVC_RUN_ARTIFACTS_MEMORY_MAX_BYTES: '1048576',
      SVC_RUN_ARTIFACTS_MEMORY_PER_SESSION: '32',
    }),
    {
      url: 'file:///var/lib/svc/runs',
      retentionSecs: 3600,
      gcIntervalSecs: 60,
      memoryMaxBytes: 1_048_576,
      memoryPerSession: 32,
    },
  );
  t.equal(artifactSettingsFromEnv({ SVC_RUN_ARTIFACTS_GC_INTERVAL_SECS: '1' }).gcIntervalSecs, 1);
});

t.test('artifactSettingsFromEnv: non-positive or non-integer values are bad_arguments', async (t) => {
  for (const bad of ['0', '-1', '1.5', '1e3', 'abc', '7d', '0x10', '+5', '99999999999999999999', 'Infinity', 'NaN']) {
    for (const name of [
      'SVC_RUN_ARTIFACTS_RETENTION_SECS',
      'SVC_RUN_ARTIFACTS_GC_INTERVAL_SECS',
      'SVC_RUN_ARTIFACTS_MEMORY_MAX_BYTES',
      'SVC_RUN_ARTIFACTS_MEMORY_PER_SESSION',
    ]) {
      try {
        artifactSettingsFromEnv({ [name]: bad });
        t.fail(`${name}=${bad} accepted`);
      } catch (e) {
        t.type(e, SvcFailure);
        const err = (e as SvcFailure).errors[0]!;
        t.equal(err.code, 'bad_arguments', `${name}=${bad}`);
        t.match(err.message, name);
        t.match(err.hint, name);
      }
    }
  }
  const both = await codesOf(t, () =>
    artifactSettingsFromEnv({ SVC_RUN_ARTIFACTS_RETENTION_SECS: '0', SVC_RUN_ARTIFACTS_GC_INTERVAL_SECS: '-3' }),
  );
  t.same(both, ['bad_arguments', 'bad_arguments'], 'both problems are reported at once');
});

t.test('settings feed storeFromUrl', async (t) => {
  const s = artifactSettingsFromEnv({});
  t.type(await opened(t, s.url), MemoryArtifactStore);
});
