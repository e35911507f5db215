/**
 * A transport session resumed on another replica (server/mcp/resume.ts), over real sockets with a
 * real redis-server as the shared store and the official SDK client: the client's session moves
 * from replica A to replica B with no new initialize and works there (the same session id, its
 * logical sessions, its tool list, ping); B's transport holds the session as the SDK
 * holds one it initialized (a second initialize is refused, the client's initialize is kept for
 * the next replica); a record written before svc kept the client's initialize still resumes; a
 * malformed record is an unknown session; requests that arrive together resume the session once.
 * These go through the SDK's public API only, so an SDK whose internals change cannot pass them by
 * accident of a private field.
 */
import t, { type Test } from 'tap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startDemoVendor } from '../../../cli/demo-vendor.js';
import { RedisSessionRepository } from '../../../server/execute/redis-repository.js';
import { startRedis } from '../../_helpers/redis.js';
import { call, startStack } from '../../_helpers/server.js';
import { svcMeta, textOf } from '../../_helpers/mcp.js';
import { INIT, rawMcp, rawSession } from './_shared.js';

const vendor = await startDemoVendor();
t.teardown(() => vendor.close());
const redis = await startRedis(t);
const repo = await RedisSessionRepository.connect(redis.url, { keyPrefix: 'resume:' });
t.teardown(() => repo.close());
const LIST = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list' });

/** Two replicas sharing the store. */
async function replicas(t: Test) {
  const a = await startStack(t, { vendorUrl: vendor.url, sessions: repo, shared: repo.kv() });
  const b = await startStack(t, { vendorUrl: vendor.url, sessions: repo, shared: repo.kv() });
  return { a, b };
}

t.test("the SDK client's session moves to another replica and works there", async (t) => {
  const { a, b } = await replicas(t);
  let target = a.url;
  // The client's every request goes to `target` (a balancer that moves the session).
  const moving: typeof fetch = (input, init) => {
    const u = new URL(input instanceof Request ? input.url : String(input));
    u.host = new URL(target).host;
    return fetch(u, init);
  };
  const client = new Client({ name: 'resume-tests', version: '2.1.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${a.url}/mcp`), { fetch: moving });
  await client.connect(transport);
  t.teardown(() => client.close());
  const sid = transport.sessionId!;
  const tool = async (name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as CallToolResult;
  const ctx = await tool('svc_context', { intent: 'beers', seeds: [{ api: 'brewery', entity: 'Beer' }] });
  t.notOk(ctx.isError, textOf(ctx));
  const ref = svcMeta(ctx).logical_session_ref as string;

  target = b.url;
  t.equal((await call(b.url, '/v1/health')).body.mcp_sessions, 0, 'B holds no session yet');
  const read = await tool('svc', { logical_session_ref: ref, program: 'e1[id,name]' });
  t.notOk(read.isError, `a read on B with the logical session opened on A: ${textOf(read).slice(0, 80)}`);
  t.equal(transport.sessionId, sid, 'the same transport session');
  t.equal((await call(b.url, '/v1/health')).body.mcp_sessions, 1, 'B resumed it');
  const { tools } = await client.listTools();
  t.ok(
    tools.some((x) => x.name === 'svc_run'),
    'the tool list on B',
  );
  await client.ping();

  const stored = JSON.parse((await repo.kv().get(`mcp:${sid}`))!) as Record<string, any>;
  t.match(
    stored.client_init,
    { clientInfo: { name: 'resume-tests', version: '2.1.0' }, protocolVersion: String },
    "the record keeps the client's initialize",
  );
  const headers = { 'mcp-session-id': sid, 'mcp-protocol-version': stored.client_init.protocolVersion as string };
  const again = await rawMcp(b.url, JSON.stringify(INIT), headers);
  t.equal(again.status, 400, 'a second initialize on the resumed session: refused by the SDK');
  t.match(again.message?.error?.message, /already initialized/);
});

t.test("a record without the client's initialize resumes; a malformed one is an unknown session", async (t) => {
  const { a, b } = await replicas(t);
  const { sid, headers } = await rawSession(a.url);
  t.equal((await rawMcp(a.url, LIST(1), headers)).status, 200);
  const stored = JSON.parse((await repo.kv().get(`mcp:${sid}`))!) as Record<string, unknown>;
  const { client_init: _init, ...older } = stored;
  await repo.kv().set(`mcp:${sid}`, JSON.stringify(older), 60_000);
  const resumed = await rawMcp(b.url, LIST(2), headers);
  t.equal(resumed.status, 200, 'resumed on B');
  t.equal(resumed.headers.get('mcp-session-id'), sid, 'under its own id');
  t.ok(Array.isArray(resumed.message?.result?.tools));

  const other = await rawSession(a.url);
  await repo.kv().set(`mcp:${other.sid}`, '{"principal": 3}', 60_000);
  const c = await startStack(t, { vendorUrl: vendor.url, sessions: repo, shared: repo.kv() });
  const bad = await rawMcp(c.url, LIST(3), other.headers);
  t.equal(bad.status, 404, 'a malformed record: 404');
  t.equal(bad.message?.error?.code, -32001);
  t.equal((await call(c.url, '/v1/health')).body.mcp_sessions, 0, 'and nothing is held for it');
});

t.test('requests that arrive together resume the session once', async (t) => {
  const { a, b } = await replicas(t);
  const { sid, headers } = await rawSession(a.url);
  t.equal((await rawMcp(a.url, LIST(1), headers)).status, 200);
  const answers = await Promise.all([2, 3, 4, 5, 6].map((id) => rawMcp(b.url, LIST(id), headers)));
  t.same(
    answers.map((x) => x.status),
    [200, 200, 200, 200, 200],
    'all answered on B',
  );
  t.same(
    answers.map((x) => x.message?.id),
    [2, 3, 4, 5, 6],
    'each its own answer',
  );
  t.equal((await call(b.url, '/v1/health')).body.mcp_sessions, 1, 'one session on B');
  t.equal(answers[0]!.headers.get('mcp-session-id'), sid);
});
