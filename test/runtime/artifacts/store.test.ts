import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SvcFailure } from '../../../common/errors.js';
import { FileArtifactStore } from '../../../runtime/artifacts/file-store.js';
import { MemoryArtifactStore } from '../../../runtime/artifacts/memory-store.js';
import { artifactSettingsFromEnv, type ArtifactStore } from '../../../runtime/artifacts/store.js';
import { storeFromUrl } from '../../../runtime/artifacts/store-from-url.js';
import { sampleSnapshot } from './store.case.js';

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

t.test('storeFromUrl: s3:// and any other scheme is unsupported_store with a hint', async (t) => {
  for (const url of [
    's3://bucket/prefix',
    'S3://bucket',
    'gs://b',
    'redis://localhost:6379',
    'https://example.com/runs',
  ]) {
    try {
      await storeFromUrl(url, OPTS);
      t.fail(`${url} accepted`);
    } catch (e) {
      t.type(e, SvcFailure);
      const err = (e as SvcFailure).errors[0]!;
      t.equal(err.code, 'unsupported_store', url);
      t.match(err.hint, /memory:/);
      t.match(err.hint, /file:\/\/\//);
    }
  }
  try {
    await storeFromUrl('s3://AKIAEXAMPLE:topsecret@bucket/x', OPTS);
  } catch (e) {
    t.notMatch(
      JSON.stringify((e as SvcFailure).errors),
      /topsecret|AKIA/,
      'the URL (and any credential in it) is not echoed',
    );
  }
});

t.test('storeFromUrl: garbage is unsupported_store', async (t) => {
  for (const url of ['not a url', '/var/lib/svc/runs', './runs', '::', '1http://x', 'C:\\runs']) {
    t.same(await codesOf(t, storeFromUrl(url, OPTS)), ['unsupported_store'], url);
  }
});

t.test('artifactSettingsFromEnv: defaults', async (t) => {
  const defaults = { url: undefined, retentionSecs: 604_800, gcIntervalSecs: 300, memoryMaxBytes: 256 * 1024 * 1024 };
  t.same(artifactSettingsFromEnv({}), defaults);
  t.same(
    artifactSettingsFromEnv({
      SVC_RUN_ARTIFACTS_URL: '',
      SVC_RUN_ARTIFACTS_RETENTION_SECS: '',
      SVC_RUN_ARTIFACTS_GC_INTERVAL_SECS: ' ',
      SVC_RUN_ARTIFACTS_MEMORY_MAX_BYTES: '',
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
    }),
    { url: 'file:///var/lib/svc/runs', retentionSecs: 3600, gcIntervalSecs: 60, memoryMaxBytes: 1_048_576 },
  );
  t.equal(artifactSettingsFromEnv({ SVC_RUN_ARTIFACTS_GC_INTERVAL_SECS: '1' }).gcIntervalSecs, 1);
});

t.test('artifactSettingsFromEnv: non-positive or non-integer values are bad_arguments', async (t) => {
  for (const bad of ['0', '-1', '1.5', '1e3', 'abc', '7d', '0x10', '+5', '99999999999999999999', 'Infinity', 'NaN']) {
    for (const name of [
      'SVC_RUN_ARTIFACTS_RETENTION_SECS',
      'SVC_RUN_ARTIFACTS_GC_INTERVAL_SECS',
      'SVC_RUN_ARTIFACTS_MEMORY_MAX_BYTES',
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
