/**
 * A background run that ends while the artifact store is down (docs/operations.md "When the
 * artifact store is down"): a real s3rver stopped before the run ends and started again on the
 * same port over the same data, the real svc server, the json-server vendor. The run's snapshot is
 * held in memory and its write retried: `wait(oN)` answers the rows with `run_artifact_pending`
 * until the write lands, then reads them from the store; a snapshot the budget cannot hold is
 * `run_artifact_lost`; an artifact the store does not have is `run_artifact_unavailable`; never
 * "succeeded" with no rows and no word.
 */
import t, { type Test } from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, DeleteObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { S3ArtifactStore } from '../../runtime/artifacts/s3-store.js';
import { connectMcp, openLogical, svcMeta, textOf } from '../_helpers/mcp.js';
import { startS3rver, type RunningS3rver } from '../_helpers/s3rver.js';
import { call, codeOf, openSession, runProgram, startStack, type Answer, type Stack } from '../_helpers/server.js';
import { until } from '../_helpers/until.js';

const BUCKET = 'svc-runs';

/** An s3rver over a data directory of the test, so the same store can be stopped and started again. */
async function restartableS3(t: Test): Promise<{ s3: () => RunningS3rver; restart(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-outage-s3-'));
  let s3 = await startS3rver({ dir });
  const port = s3.port;
  t.teardown(async () => {
    await s3.close();
    rmSync(dir, { recursive: true, force: true });
  });
  await s3.client.send(new CreateBucketCommand({ Bucket: BUCKET }));
  return {
    s3: () => s3,
    restart: async () => {
      s3 = await startS3rver({ port, dir });
    },
  };
}

async function s3Stack(t: Test, s3: RunningS3rver, prefix: string, limits = {}): Promise<Stack> {
  const store = await S3ArtifactStore.open(`s3://${BUCKET}/${prefix}`, {
    retentionSecs: 3600,
    gcIntervalSecs: 3600,
    endpoint: s3.endpoint,
  });
  return startStack(t, { artifacts: store, limits });
}

const opOf = (a: Answer): { n?: string; '~'?: string; r?: string } => a.body._meta?.svc?.op ?? {};

async function startRun(t: Test, stack: Stack, path: string, program: string): Promise<string> {
  const a = await runProgram(stack.url, path, program, 'wait=false');
  t.equal(a.status, 202, `accepted: ${program}`);
  return opOf(a).n!;
}

/** Poll wait(handle) until it ended; its terminal answer. */
function finished(stack: Stack, path: string, handle: string): Promise<Answer> {
  return until(
    `${handle} to end`,
    async () => {
      const a = await runProgram(stack.url, path, `wait(${handle})`);
      if (a.status !== 200) throw new Error(`wait(${handle}) answered ${a.status}: ${a.text}`);
      return ['!', 'x', '?'].includes(opOf(a)['~'] ?? '') ? a : undefined;
    },
    600,
    50,
  );
}

const names = (a: Answer): string[] => ((a.body.rows ?? []) as Array<{ name: string }>).map((r) => r.name);

t.test('S3 down when a background run ends: its rows are held, answered, and stored once S3 is back', async (t) => {
  const store = await restartableS3(t);
  const stack = await s3Stack(t, store.s3(), 'outage');
  const { path } = await openSession(stack.url, { entry_id: 'brewery' });
  const expected = names(await runProgram(stack.url, path, 'e1(limit=3)[id,name]'));
  t.equal(expected.length, 3, 'the vendor has the rows (a waited read while S3 is up)');

  await store.s3().close(); // S3 unreachable from here on; its data directory stays
  const h = await startRun(t, stack, path, 'e1(limit=3)[id,name]');
  const ended = await finished(stack, path, h);
  t.equal(opOf(ended)['~'], '!', 'the run succeeded');
  const runId = opOf(ended).r;
  t.match(runId, /^pr[0-9a-f]{64}$/, 'and has its run id');
  t.same(names(ended), expected, 'wait(oN) answers the rows the run read, not rows: []');
  t.equal(ended.body.warnings?.[0]?.code, 'run_artifact_pending', 'saying the record is not stored yet');
  t.match(ended.body.warnings?.[0]?.hint, /retried/);
  const art = await call(stack.url, `${path}/artifacts/${runId}`);
  t.equal(art.status, 200, 'GET .../artifacts/:run_id answers the held snapshot');
  t.same(
    art.body.steps?.[0]?.rows?.map((r: { name: string }) => r.name),
    expected,
  );
  const down = (await call(stack.url, '/v1/health')).body.artifacts;
  t.match(down, { kind: 's3', retrying_writes: 1, lost_writes: 0 }, '/v1/health counts the held write');
  t.ok(down.pending_writes >= 1, 'as pending');
  t.ok(down.pending_bytes > 0, 'with its bytes');
  t.ok(down.failed_writes >= 1, 'and the failed attempts');

  await store.restart();
  await until(
    'the held write to land',
    async () => (await call(stack.url, '/v1/health')).body.artifacts.retrying_writes === 0,
    1200,
    50,
  );
  const listed = await store.s3().client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'outage/' }));
  t.ok(
    (listed.Contents ?? []).some((o) => o.Key === `outage/${runId}.json`),
    'the snapshot is in S3 now',
  );
  const later = await runProgram(stack.url, path, `wait(${h})`);
  t.same(names(later), expected, 'a later wait(oN) reads the rows from the store');
  t.equal(later.body.warnings, undefined, 'without a warning');
  const up = (await call(stack.url, '/v1/health')).body.artifacts;
  t.match(up, { pending_writes: 0, retrying_writes: 0, pending_bytes: 0, lost_writes: 0 });
});

t.test('a held snapshot the budget cannot keep is lost, and wait(oN) says so with a stable code', async (t) => {
  const store = await restartableS3(t);
  const stack = await s3Stack(t, store.s3(), 'lost', { artifactsPendingBytes: 1 });
  const { path } = await openSession(stack.url, { entry_id: 'brewery' });
  await store.s3().close();
  const h = await startRun(t, stack, path, 'e1(limit=2)[name]');
  const ended = await finished(stack, path, h);
  t.equal(opOf(ended)['~'], '!');
  t.equal(ended.body.warnings?.[0]?.code, 'run_artifact_lost', 'never "succeeded" with no rows and no word');
  t.match(ended.body.warnings?.[0]?.hint, /SVC_RUN_ARTIFACTS_PENDING_BYTES/);
  t.equal(ended.body._meta.svc.code, 'run_artifact_lost', '_meta.svc.code names it');
  t.same(ended.body.rows ?? [], [], 'the rows are gone');
  const art = await call(stack.url, `${path}/artifacts/${opOf(ended).r}`);
  t.equal(art.status, 410, 'GET .../artifacts/:run_id: 410');
  t.equal(codeOf(art), 'run_artifact_lost');
  t.match((await call(stack.url, '/v1/health')).body.artifacts, { lost_writes: 1, retrying_writes: 0 });
});

t.test('an artifact the store does not have (another replica, removed) is run_artifact_unavailable', async (t) => {
  const store = await restartableS3(t);
  const stack = await s3Stack(t, store.s3(), 'gone');
  const { path } = await openSession(stack.url, { entry_id: 'brewery' });
  const h = await startRun(t, stack, path, 'e1(limit=2)[name]');
  const ended = await finished(stack, path, h);
  t.equal(names(ended).length, 2, 'stored: the rows read back from S3');
  t.equal(ended.body.warnings, undefined);
  await store.s3().client.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: `gone/${opOf(ended).r}.json` }));
  const again = await runProgram(stack.url, path, `wait(${h})`);
  t.equal(again.status, 200);
  t.equal(again.body.warnings?.[0]?.code, 'run_artifact_unavailable', 'no silent rows: []');
  t.match(again.body.warnings?.[0]?.hint, /wait\(o1\) again/);
});

t.test('MCP: svc_run of a reviewed run while S3 is down answers its rows with run_artifact_pending', async (t) => {
  const store = await restartableS3(t);
  const stack = await s3Stack(t, store.s3(), 'mcp');
  const c = await connectMcp(t, stack.url);
  const { ref } = await openLogical(c, [{ api: 'brewery', entity: 'Beer' }]);
  const dry = await c.tool('svc', { logical_session_ref: ref, program: 'e1(limit=2000)[id]' });
  const pc = svcMeta(dry).run_ref as string;
  t.match(pc, /^pc\d+$/, 'a run past the call cap is dry-run first');
  await store.s3().close();
  const r = await c.tool('svc_run', { logical_session_ref: ref, run_ref: pc });
  t.notOk(r.isError, 'a success: the run did what it was asked');
  const body = r.structuredContent as { count?: number; warnings?: Array<{ code: string }> };
  t.ok((body.count ?? 0) > 0, 'with its rows');
  t.equal(body.warnings?.[0]?.code, 'run_artifact_pending', 'and the warning, rendered by MCP');
  t.match(textOf(r), /run_artifact_pending/);
});
