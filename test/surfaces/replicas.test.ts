/**
 * Three `svc serve` processes sharing a real redis-server (sessions, tokens, page handles,
 * operation descriptors, MCP transport sessions) and a real S3-compatible server (s3rver: run
 * artifacts), against the json-server demo vendor (brewery) and a slow vendor (helpdesk). The
 * client sends each request to the next replica, as a round-robin load balancer would: open on A,
 * run on B, dry-run on A and commit on B, page on C, `wait=false` on A and `wait` on B, cancel on
 * the owner, MCP calls spread over all three, kill -9 of a replica mid-operation (the operation
 * fails when its lease lapses), a restart of every replica (sessions and artifacts survive), and
 * Redis stopped for 5 s (503 `store_unavailable`, then recovery without a restart).
 */
import t, { type Test } from 'tap';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startDemoVendor } from '../../cli/demo-vendor.js';
import { serve, type Svc } from '../_helpers/cli.js';
import { startFaultVendor } from '../_helpers/fault-vendor.js';
import { svcMeta, textOf } from '../_helpers/mcp.js';
import { startRedis } from '../_helpers/redis.js';
import { startS3rver, S3RVER_KEY } from '../_helpers/s3rver.js';
import { call, codeOf, PACKED, runProgram, type Answer } from '../_helpers/server.js';
import { until } from '../_helpers/until.js';

const redis = await startRedis(t);
const s3 = await startS3rver();
t.teardown(() => s3.close());
await s3.client.send(new CreateBucketCommand({ Bucket: 'svc-runs' }));
const vendor = await startDemoVendor();
t.teardown(() => vendor.close());
// helpdesk's tickets come after 2.5 s (an operation that runs a while); its customers never come.
const slow = await startFaultVendor({
  'GET /tickets': { json: [{ id: 't-1', subject: 'Slow', status: 'open', priority: 'low' }], delayMs: 2_500 },
  'GET /customers': { hang: true },
});
t.teardown(() => slow.close());

const ENV = {
  SVC_MCP_TRANSPORT_KV_URL: redis.url,
  SVC_RUN_ARTIFACTS_URL: 's3://svc-runs/replicas',
  SVC_S3_ENDPOINT: s3.endpoint,
  AWS_ACCESS_KEY_ID: S3RVER_KEY,
  AWS_SECRET_ACCESS_KEY: S3RVER_KEY,
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  SVC_OPERATION_LEASE_SECS: '2',
  SVC_SHUTDOWN_GRACE_SECS: '1',
};

function replica(t: Test): Promise<Svc & { url: string }> {
  return serve(
    t,
    ['--catalog-dir', PACKED, '--port', '0', '--backend', `brewery=${vendor.url}`, '--backend', `helpdesk=${slow.url}`],
    ENV,
  );
}

/** Three replicas; `next()` is the round-robin balancer: each call the next replica's URL. */
async function replicas(t: Test) {
  const rs = await Promise.all([replica(t), replica(t), replica(t)]);
  let n = 0;
  return { rs, urls: rs.map((r) => r.url), next: () => rs[n++ % rs.length]!.url };
}

async function open(base: string, entry: string, seeds: string[]): Promise<string> {
  const a = await call(base, '/execute', {
    body: JSON.stringify({ entry_id: entry, seeds }),
    type: 'application/json',
  });
  if (a.status !== 201) throw new Error(`open answered ${a.status}: ${a.text}`);
  return `/execute/${a.body.prompt_hash}/${a.body.session}`;
}

const brewery = (id: string) =>
  (vendor.db().breweries as Array<{ id: string; city?: string }>).find((b) => b.id === id);
const handleOf = (more: unknown) => /pg\d+/.exec(String(more))?.[0];
const opOf = (a: Answer) => a.body._meta?.svc?.op as { n: string; '~': string; s: string } | undefined;

t.test('HTTP: every request on the next replica', async (t) => {
  const { urls, next } = await replicas(t);
  const [A, B, C] = urls as [string, string, string];
  const path = await open(A, 'brewery', ['Brewery']);

  const read = await runProgram(B, path, 'e1[id,name]');
  t.equal(read.status, 200, 'a session opened on A runs on B');
  t.same(
    read.body.rows.map((r: { id: string }) => r.id),
    (vendor.db().breweries as Array<{ id: string }>).slice(0, read.body.rows.length).map((b) => b.id),
    'the vendor rows',
  );

  const dry = await runProgram(A, path, 'e1("b-2").m2(city="Replicaville")', 'mode=plan');
  t.equal(dry.status, 200);
  const ref = dry.body._meta.svc.plan_commit_ref as string;
  t.match(ref, /^pc\d+$/);
  const commit = await runProgram(B, path, 'e1("b-2").m2(city="Replicaville")', `plan_commit_ref=${ref}`);
  t.equal(commit.status, 200, 'the pcN minted on A commits on B');
  t.equal(brewery('b-2')?.city, 'Replicaville', 'written once');
  const again = await runProgram(C, path, 'e1("b-2").m2(city="Replicaville")', `plan_commit_ref=${ref}`);
  t.equal(codeOf(again), 'plan_token_consumed', 'and not again on C');

  const first = await runProgram(A, path, 'e1(limit=5)[id]');
  const h = handleOf(first.body.more);
  t.ok(h, 'a page handle');
  const second = await runProgram(C, path, `page(${h})[id]`);
  t.equal(second.status, 200, 'the page handle minted on A continues on C');
  t.not(second.body.rows[0]?.id, first.body.rows[0]?.id, 'the next page');

  const runId = read.body._meta.svc.run_id as string;
  const art = await until('the artifact of the read on B', async () => {
    const a = await call(next(), `${path}/artifacts/${runId}`);
    return a.status === 200 ? a : undefined;
  });
  t.equal(art.body.run_id ?? art.body.id ?? runId, runId, 'the run artifact is read on any replica (S3)');
});

t.test('operations: poll elsewhere, cancel on the owner, rows on any replica', async (t) => {
  const { urls } = await replicas(t);
  const [A, B, C] = urls as [string, string, string];
  const path = await open(A, 'helpdesk', ['Ticket']);
  const started = await runProgram(A, path, 'e1[id,subject]', 'wait=false');
  t.equal(started.status, 202);
  const h = opOf(started)!.n;

  // An SSE stream on a replica that does not run it follows the shared descriptor to the end.
  const stream = fetch(`${C}${path}/operations/${h}/stream`).then((r) => r.text());

  const elsewhere = await runProgram(B, path, `wait(${h})`);
  t.equal(elsewhere.status, 200);
  t.equal(elsewhere.body._meta.svc.code, 'operation_not_on_replica', '`~` from the replica that does not run it');
  t.equal(opOf(elsewhere)?.['~'], '~');
  const refused = await runProgram(C, path, `cancel(${h})`);
  t.equal(refused.status, 400);
  t.equal(codeOf(refused), 'operation_not_on_replica');

  const done = await until('the operation ends', async () => {
    const w = await runProgram(C, path, `wait(${h})`);
    return opOf(w)?.s === 'succeeded' ? w : undefined;
  });
  t.same(
    done.body.rows.map((r: { id: string }) => r.id),
    ['t-1'],
    'rows hydrated from S3 on a replica that did not run it',
  );

  const events = await stream;
  t.match(events, /^event: snapshot\ndata: ~ o\d+ running/, 'the stream opens with the current line');
  t.match(events, new RegExp(`event: terminal\\ndata: ! ${h} succeeded`), 'and ends with the terminal event');

  const second = await runProgram(B, path, 'e1[id,subject]', 'wait=false');
  const h2 = opOf(second)!.n;
  t.not(h2, h, 'counters never repeat across replicas');
  const cancelled = await runProgram(B, path, `cancel(${h2})`);
  t.equal(opOf(cancelled)?.s, 'cancelled', 'cancel on the owner');
});

t.test('a replica killed mid-operation: the operation fails when its lease lapses', async (t) => {
  const { rs, urls } = await replicas(t);
  const [A, B] = urls as [string, string, string];
  const path = await open(A, 'helpdesk', ['Customer']);
  const started = await runProgram(A, path, 'e1[id]', 'wait=false');
  const h = opOf(started)!.n;
  t.equal(opOf(await runProgram(B, path, `wait(${h})`))?.s, 'running');
  rs[0].child.kill('SIGKILL');
  await rs[0].exited;
  const lost = await until(
    'the lease lapses',
    async () => {
      const w = await runProgram(B, path, `wait(${h})`);
      return opOf(w)?.s === 'failed' ? w : undefined;
    },
    400,
  );
  t.equal(lost.body._meta.svc.code, 'operation_lost');
  t.match(opOf(lost)?.['~'], '?');
});

t.test('every replica restarted: sessions, tokens and artifacts survive', async (t) => {
  const first = await replicas(t);
  const path = await open(first.next(), 'brewery', ['Brewery']);
  const read = await runProgram(first.next(), path, 'e1[id]');
  const runId = read.body._meta.svc.run_id as string;
  const dry = await runProgram(first.next(), path, 'e1("b-4").m2(city="Afterwards")', 'mode=plan');
  await until(
    'the artifact is written',
    async () => (await call(first.next(), `${path}/artifacts/${runId}`)).status === 200,
  );
  for (const r of first.rs) r.child.kill('SIGTERM');
  await Promise.all(first.rs.map((r) => r.exited));

  const second = await replicas(t);
  const again = await runProgram(second.next(), path, 'e1[id]');
  t.equal(again.status, 200, 'the session answers after the restart');
  t.same(again.body.rows, read.body.rows);
  const commit = await runProgram(
    second.next(),
    path,
    'e1("b-4").m2(city="Afterwards")',
    `plan_commit_ref=${dry.body._meta.svc.plan_commit_ref}`,
  );
  t.equal(commit.status, 200, 'a pcN minted before the restart commits after it');
  t.equal((await call(second.next(), `${path}/artifacts/${runId}`)).status, 200, 'a run stored before the restart');
});

t.test('MCP: one client, its requests spread over the replicas', async (t) => {
  const { urls } = await replicas(t);
  let n = 0;
  const seen = new Set<string>();
  // The balancer: each HTTP request of the SDK client goes to the next replica.
  const balanced: typeof fetch = (input, init) => {
    const u = new URL(input instanceof Request ? input.url : String(input));
    const to = new URL(urls[n++ % urls.length]!);
    u.host = to.host;
    seen.add(u.host);
    return fetch(u, init);
  };
  const client = new Client({ name: 'replica-tests', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${urls[0]}/mcp`), { fetch: balanced });
  await client.connect(transport);
  t.teardown(() => client.close());
  const tool = async (name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as CallToolResult;

  const ctx = await tool('svc_context', { intent: 'breweries', seeds: [{ api: 'brewery', entity: 'Brewery' }] });
  t.notOk(ctx.isError, textOf(ctx));
  const ref = svcMeta(ctx).logical_session_ref as string;
  for (let i = 0; i < 3; i++) {
    const r = await tool('svc', { logical_session_ref: ref, program: 'e1[id,name]' });
    t.notOk(r.isError, `svc call ${i + 1}: ${textOf(r).slice(0, 80)}`);
  }
  const dry = await tool('svc', { logical_session_ref: ref, program: 'e1("b-3").m2(city="Mcpville")' });
  const pc = svcMeta(dry).run_ref as string;
  t.match(pc, /^pc\d+$/);
  const run = await tool('svc_run', { logical_session_ref: ref, run_ref: pc });
  t.notOk(run.isError, textOf(run));
  t.equal(brewery('b-3')?.city, 'Mcpville');
  t.equal(seen.size, 3, 'the calls reached all three replicas');
});

t.test('Redis stopped for 5 s: 503 store_unavailable, then recovery without a restart', async (t) => {
  const { next } = await replicas(t);
  await redis.stop();
  const down = await call(next(), '/execute', {
    body: JSON.stringify({ entry_id: 'brewery' }),
    type: 'application/json',
  });
  t.equal(down.status, 503);
  t.equal(codeOf(down), 'store_unavailable');
  t.equal(down.headers.get('retry-after'), '2');
  t.equal((await call(next(), '/v1/registry')).status, 200, 'what needs no store still answers');
  const health = await call(next(), '/v1/health');
  t.equal(health.status, 503, 'health says the replica cannot serve sessions now');
  t.equal(codeOf(health), 'store_unavailable');
  await new Promise((r) => setTimeout(r, 5_000));
  await redis.restart();
  const path = await until('Redis is back', async () => {
    const a = await call(next(), '/execute', {
      body: JSON.stringify({ entry_id: 'brewery' }),
      type: 'application/json',
    });
    return a.status === 201 ? `/execute/${a.body.prompt_hash}/${a.body.session}` : undefined;
  });
  for (let i = 0; i < 3; i++)
    t.equal((await runProgram(next(), path, 'e1[id]')).status, 200, `replica ${i + 1} serves`);
});
