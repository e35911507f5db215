/**
 * The S3 store's URL and settings (runtime/artifacts/s3-settings.ts), through the functions the
 * server calls: `artifactSettingsFromEnv` and `storeFromUrl`. No server is needed: every case is
 * refused before a request is sent.
 */
import t from 'tap';
import { SvcFailure, type SvcError } from '../../../common/errors.js';
import { isBucketName, parseS3Url } from '../../../runtime/artifacts/s3-settings.js';
import { artifactSettingsFromEnv } from '../../../runtime/artifacts/store.js';
import { storeFromUrl } from '../../../runtime/artifacts/store-from-url.js';

const OPTS = { retentionSecs: 60, gcIntervalSecs: 300 };

/** The errors of a thrown SvcFailure (fails the test when something else, or nothing, was thrown). */
async function errorsOf(t: { fail(msg: string): void }, run: () => unknown): Promise<SvcError[]> {
  try {
    await run();
  } catch (e) {
    if (e instanceof SvcFailure) return e.errors;
    t.fail(`threw ${String(e)}`);
    return [];
  }
  t.fail('did not throw');
  return [];
}

t.test('parseS3Url: bucket and a normalised prefix', async (t) => {
  t.same(parseS3Url('s3://svc-runs/prod/runs'), { bucket: 'svc-runs', prefix: 'prod/runs' });
  t.same(parseS3Url(' S3://svc-runs//prod///runs/ '), { bucket: 'svc-runs', prefix: 'prod/runs' });
  t.same(parseS3Url('s3://svc-runs'), { bucket: 'svc-runs', prefix: '' });
  t.same(parseS3Url('s3://svc-runs/'), { bucket: 'svc-runs', prefix: '' });
  t.same(parseS3Url("s3://a.b-c/x_y/(1)!*'.z-"), { bucket: 'a.b-c', prefix: "x_y/(1)!*'.z-" });
});

t.test('bucket names: 3-63 lower-case letters, digits, dots and hyphens', async (t) => {
  for (const good of ['abc', 'svc-runs', 'a.b.c', '1bucket', 'x'.repeat(63), 'my.bucket-2']) {
    t.ok(isBucketName(good), good);
  }
  for (const bad of ['ab', 'x'.repeat(64), 'Runs', 'svc_runs', '-abc', 'abc-', '.abc', 'abc.', 'a..b', '192.168.0.1']) {
    t.notOk(isBucketName(bad), bad);
  }
});

t.test('storeFromUrl: a bad s3 URL is bad_arguments with a hint, before any request', async (t) => {
  const urls: Array<[string, RegExp]> = [
    ['s3://ab/x', /3 to 63/],
    ['s3://Svc-Runs/x', /lower-case/],
    ['s3://svc_runs', /lower-case/],
    ['s3://', /3 to 63/],
    ['s3:///prefix', /3 to 63/],
    ['s3://a..b/x', /\.\./],
    ['s3://10.0.0.1/x', /IP address/],
    ['s3://svc-runs:9000/x', /SVC_S3_ENDPOINT/],
    ['s3://svc-runs/x?region=eu', /s3:\/\/bucket\/prefix/],
    ['s3://svc-runs/x#frag', /s3:\/\/bucket\/prefix/],
    ['s3://svc-runs/a/../b', /segments/],
    ['s3://svc-runs/a/./b', /segments/],
    ['s3://svc-runs/with space', /segments/],
    ['s3://svc-runs/' + 'p'.repeat(901), /at most 900/],
  ];
  for (const [url, hint] of urls) {
    const errors = await errorsOf(t, () => storeFromUrl(url, OPTS));
    t.equal(errors[0]?.code, 'bad_arguments', url.slice(0, 40));
    t.match(errors[0]?.message, /SVC_RUN_ARTIFACTS_URL/);
    t.match(errors[0]?.hint, hint, url.slice(0, 40));
  }
});

t.test('storeFromUrl: credentials in an s3 URL are refused and never echoed', async (t) => {
  for (const url of ['s3://AKIAEXAMPLE:topsecret@svc-runs/x', 's3://topsecret@svc-runs']) {
    const errors = await errorsOf(t, () => storeFromUrl(url, OPTS));
    t.equal(errors[0]?.code, 'bad_arguments');
    t.match(errors[0]?.message, /carries credentials/);
    t.match(errors[0]?.hint, /AWS_ACCESS_KEY_ID/);
    t.notMatch(JSON.stringify(errors), /topsecret|AKIA/, 'nothing of the URL is echoed');
  }
});

t.test('artifactSettingsFromEnv: the s3 settings of an s3 URL, defaults filled in', async (t) => {
  const url = 's3://svc-runs/prod';
  t.same(artifactSettingsFromEnv({ SVC_RUN_ARTIFACTS_URL: url }).s3, { forcePathStyle: false, region: 'us-east-1' });
  t.same(artifactSettingsFromEnv({ SVC_RUN_ARTIFACTS_URL: url, AWS_REGION: 'eu-west-1' }).s3, {
    forcePathStyle: false,
    region: 'eu-west-1',
  });
  t.same(
    artifactSettingsFromEnv({
      SVC_RUN_ARTIFACTS_URL: url,
      SVC_S3_ENDPOINT: ' http://127.0.0.1:9000 ',
      SVC_S3_REGION: 'garage',
      AWS_REGION: 'eu-west-1',
    }).s3,
    { endpoint: 'http://127.0.0.1:9000', forcePathStyle: true, region: 'garage' },
    'path style by default with an endpoint; SVC_S3_REGION wins over AWS_REGION',
  );
  t.equal(
    artifactSettingsFromEnv({
      SVC_RUN_ARTIFACTS_URL: url,
      SVC_S3_ENDPOINT: 'https://minio.internal',
      SVC_S3_FORCE_PATH_STYLE: 'FALSE',
    }).s3?.forcePathStyle,
    false,
  );
  t.equal(
    artifactSettingsFromEnv({ SVC_RUN_ARTIFACTS_URL: url, SVC_S3_FORCE_PATH_STYLE: 'true' }).s3?.forcePathStyle,
    true,
  );
  t.same(
    artifactSettingsFromEnv({ SVC_RUN_ARTIFACTS_URL: url, SVC_S3_ENDPOINT: '', SVC_S3_REGION: ' ' }).s3,
    { forcePathStyle: false, region: 'us-east-1' },
    'empty counts as unset',
  );
  t.equal(artifactSettingsFromEnv({ SVC_S3_REGION: 'eu-west-1' }).s3, undefined, 'absent for another store');
  t.equal(
    artifactSettingsFromEnv({ SVC_RUN_ARTIFACTS_URL: 'file:///var/lib/svc', AWS_REGION: '!!' }).s3,
    undefined,
    'AWS_REGION is the SDK variable: never refused',
  );
});

t.test('artifactSettingsFromEnv: bad SVC_S3_* values are bad_arguments naming the variable', async (t) => {
  const cases: Array<[string, string]> = [
    ['SVC_S3_ENDPOINT', 'ftp://minio:21'],
    ['SVC_S3_ENDPOINT', 'minio:9000'],
    ['SVC_S3_ENDPOINT', 'not a url'],
    ['SVC_S3_ENDPOINT', 'http://minio:9000/?x=1'],
    ['SVC_S3_ENDPOINT', 'http://minio:9000/#x'],
    ['SVC_S3_FORCE_PATH_STYLE', 'yes'],
    ['SVC_S3_FORCE_PATH_STYLE', '1'],
    ['SVC_S3_REGION', 'us east 1'],
    ['SVC_S3_REGION', '-eu'],
  ];
  for (const [name, value] of cases) {
    for (const url of ['s3://svc-runs/x', undefined]) {
      const errors = await errorsOf(t, () => artifactSettingsFromEnv({ SVC_RUN_ARTIFACTS_URL: url, [name]: value }));
      t.same(
        errors.map((e) => e.code),
        ['bad_arguments'],
        `${name}=${value} (${url ?? 'memory'})`,
      );
      t.match(errors[0]?.message, name);
      t.ok(errors[0]?.hint, 'with a hint');
    }
  }
  const errors = await errorsOf(t, () =>
    artifactSettingsFromEnv({ SVC_S3_ENDPOINT: 'http://AKIAEXAMPLE:topsecret@minio:9000' }),
  );
  t.match(errors[0]?.message, /SVC_S3_ENDPOINT carries credentials/);
  t.notMatch(JSON.stringify(errors), /topsecret|AKIA/, 'the endpoint is not echoed');
  const all = await errorsOf(t, () =>
    artifactSettingsFromEnv({
      SVC_RUN_ARTIFACTS_RETENTION_SECS: '0',
      SVC_S3_FORCE_PATH_STYLE: 'maybe',
      SVC_S3_REGION: 'a b',
    }),
  );
  t.equal(all.length, 3, 'every problem is reported at once');
});
