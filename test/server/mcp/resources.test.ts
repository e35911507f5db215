/**
 * MCP resources (SPEC "MCP tools", resources): the two URI templates, resources/read of a stored
 * run in the short form `svc://session/{ref}/run/pr…` and the execute form
 * `svc://execute/{ph}/{sid}/run/pr…` (the same snapshot the HTTP artifact route serves),
 * resources/list of this connection's runs, and JSON-RPC error -32002 for anything unknown,
 * malformed or not the caller's.
 */
import t from 'tap';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { RESOURCE_NOT_FOUND } from '../../../server/mcp/resources.js';
import { call, startStack } from '../../_helpers/server.js';
import { connectMcp, openLogical, svcMeta, type McpConn } from '../../_helpers/mcp.js';
import { keyOf, sc, type Row } from './_shared.js';

const stack = await startStack(t);
const BEER = { api: 'brewery', entity: 'Beer' };
const ALL_BEERS = (await (await fetch(`${stack.vendorUrl}/beers`)).json()) as Row[];

async function readJson(c: McpConn, uri: string): Promise<{ mimeType?: string; uri: string; snap: any }> {
  const r = await c.client.readResource({ uri });
  if (r.contents.length !== 1) throw new Error(`${uri}: ${r.contents.length} content items`);
  const item = r.contents[0] as { uri: string; mimeType?: string; text: string };
  return { mimeType: item.mimeType, uri: item.uri, snap: JSON.parse(item.text) };
}

async function notFound(c: McpConn, uri: string): Promise<McpError | undefined> {
  return c.client.readResource({ uri }).then(
    () => undefined,
    (e: unknown) => e as McpError,
  );
}

t.test('resources/templates/list names both URI forms', async (t) => {
  const c = await connectMcp(t, stack.url);
  const { resourceTemplates } = await c.client.listResourceTemplates();
  t.same(resourceTemplates.map((x) => x.uriTemplate).sort(), [
    'svc://execute/{prompt_hash}/{session}/run/{run_id}',
    'svc://session/{logical_session_ref}/run/{run_id}',
  ]);
  for (const x of resourceTemplates) {
    t.equal(x.mimeType, 'application/json', `${x.name}: JSON`);
    t.ok(x.description, `${x.name}: described`);
  }
});

t.test('resources/read returns the run snapshot in both forms, as the HTTP route serves it', async (t) => {
  const c = await connectMcp(t, stack.url);
  const { ref } = await openLogical(c, [BEER], 'resources');
  const program = 'e1(limit=30)[id,name]';
  const r = await c.tool('svc', { logical_session_ref: ref, program });
  const runId = svcMeta(r).run_id as string;
  t.match(runId, /^pr[0-9a-f]{64}$/);
  const short = `svc://session/${ref}/run/${runId}`;
  const a = await readJson(c, short);
  t.equal(a.uri, short, 'the content names the URI read');
  t.equal(a.mimeType, 'application/json');
  t.equal(a.snap.format, 1);
  t.equal(a.snap.plan_commit_id, svcMeta(r).commit_id, 'the commit id of the run');
  t.equal(a.snap.program, program, 'the program text');
  t.equal(a.snap.status, 'succeeded');
  t.same(a.snap.returns, ['n1']);
  t.same(
    a.snap.steps[0].rows,
    ALL_BEERS.slice(0, 30).map((b) => ({ id: b.id, name: b.name })),
    'every row, not only the 25 inline',
  );
  t.equal(sc(r).full, short, 'the result linked this very URI');

  const key = await keyOf(stack, ref);
  t.same(a.snap.session, { ...key, tenant: '' }, 'the snapshot names its session and tenant');
  const long = `svc://execute/${key.prompt_hash}/${key.session}/run/${runId}`;
  const b = await readJson(c, long);
  t.equal(b.uri, long);
  t.same(b.snap, a.snap, 'the execute form reads the same snapshot');
  const http = await call(stack.url, `/execute/${key.prompt_hash}/${key.session}/artifacts/${runId}`);
  t.equal(http.status, 200);
  t.same(http.body, a.snap, 'the same snapshot as the HTTP artifact route');

  // Another connection of the same (anonymous) tenant reads it too: runs belong to tenants.
  const other = await connectMcp(t, stack.url);
  t.same((await readJson(other, short)).snap, a.snap, 'readable from another connection of the tenant');
});

t.test('resources/list: the runs of this connection, newest first, each readable', async (t) => {
  const c = await connectMcp(t, stack.url);
  t.same(await c.client.listResources(), { resources: [] }, 'nothing before any run');
  const one = await openLogical(c, [BEER], 'list one');
  const two = await openLogical(c, [BEER], 'list two');
  const r1 = await c.tool('svc', { logical_session_ref: one.ref, program: 'e1[id]' });
  const r2 = await c.tool('svc', { logical_session_ref: one.ref, program: 'e1(style="IPA")[id]' });
  const r3 = await c.tool('svc', { logical_session_ref: two.ref, program: 'e1[name]' });
  const { resources } = await c.client.listResources();
  const uris = resources.map((x) => x.uri);
  t.same(
    uris.filter((u) => u.includes(one.ref)),
    [r2, r1].map((r) => `svc://session/${one.ref}/run/${svcMeta(r).run_id as string}`),
    'the runs of the first ref, newest first',
  );
  t.ok(uris.includes(`svc://session/${two.ref}/run/${svcMeta(r3).run_id as string}`), 'and of the second');
  t.equal(resources.length, 3);
  for (const x of resources) {
    t.equal(x.mimeType, 'application/json');
    t.match(x.description, /succeeded, \d+ rows/);
    const read = await readJson(c, x.uri);
    t.equal(read.snap.status, 'succeeded', `${x.name} reads`);
  }
  const other = await connectMcp(t, stack.url);
  t.same(await other.client.listResources(), { resources: [] }, "another connection lists none of this one's runs");
});

t.test('unknown, malformed and foreign resources: JSON-RPC error -32002', async (t) => {
  const c = await connectMcp(t, stack.url);
  const a = await openLogical(c, [BEER], 'foreign A');
  const b = await openLogical(c, [BEER], 'foreign B');
  const runA = svcMeta(await c.tool('svc', { logical_session_ref: a.ref, program: 'e1[id]' })).run_id as string;
  const keyA = await keyOf(stack, a.ref);
  const keyB = await keyOf(stack, b.ref);
  const zeros = `pr${'0'.repeat(64)}`;
  const uris = [
    `svc://session/${a.ref}/run/${zeros}`, // no such run
    `svc://session/${b.ref}/run/${runA}`, // a run of another session
    `svc://session/l_NeverMinted00000/run/${runA}`, // no such ref
    `svc://execute/${keyB.prompt_hash}/${keyB.session}/run/${runA}`, // a run of another session
    `svc://execute/${'0'.repeat(16)}/${'0'.repeat(16)}/run/${runA}`, // no such session
    `svc://session/${a.ref}/run/${runA.slice(0, -1)}`, // a run id one digit short
    `svc://session/${a.ref}/run/${runA.toUpperCase()}`,
    `svc://session/not-a-ref/run/${runA}`,
    `svc://execute/${keyA.prompt_hash}/${keyA.session}/run/../../etc/passwd`,
    `svc://session/${a.ref}/run/${runA}/extra`,
    'svc://nothing',
    'https://example.com/run',
    `file:///etc/passwd`,
    'x'.repeat(5000),
  ];
  for (const uri of uris) {
    const e = await notFound(c, uri);
    t.type(e, McpError, `${uri.slice(0, 70)}: an error`);
    t.equal(e?.code, RESOURCE_NOT_FOUND, `${uri.slice(0, 70)}: -32002`);
    t.equal(e?.code, -32002);
    t.ok((e?.message.length ?? 0) < 600, 'a long URI is not echoed whole');
  }
  const ok = await readJson(c, `svc://session/${a.ref}/run/${runA}`);
  t.equal(ok.snap.status, 'succeeded', 'the real one still reads');
});
