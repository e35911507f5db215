/**
 * A transport session is bound to the transport key that opened it (hardening issue 41, item 7),
 * over real sockets against the real svc server: with another provisioned key its
 * `Mcp-Session-Id` answers exactly as an unknown one (404, -32001) on POST, GET and DELETE, the
 * DELETE closes nothing, and the SDK client's session works on with its own key. With a shared
 * store (a real redis-server) the binding travels with the session to another replica, and the
 * store holds the key's id, never the key.
 */
import t from 'tap';
import { startDemoVendor } from '../../../cli/demo-vendor.js';
import { RedisSessionRepository } from '../../../server/execute/redis-repository.js';
import { TenantScopes, TransportKeys } from '../../../server/mcp/config.js';
import { startRedis } from '../../_helpers/redis.js';
import { call, startStack } from '../../_helpers/server.js';
import { connectMcp } from '../../_helpers/mcp.js';
import { rawMcp, rawSession } from './_shared.js';

const vendor = await startDemoVendor();
t.teardown(() => vendor.close());
const K1 = 'first-transport-key-0001';
const K2 = 'second-transport-key-002';
const keys = () => ({ keys: new TransportKeys([K1, K2]), tenants: new TenantScopes() });
const bearer = (k: string) => ({ authorization: `Bearer ${k}` });
const LIST = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list' });
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

t.test("another key's session id answers as an unknown session, and DELETE closes nothing", async (t) => {
  const s = await startStack(t, { vendorUrl: vendor.url, mcp: keys() });
  const { sid, headers } = await rawSession(s.url, bearer(K1));
  const other = { ...headers, ...bearer(K2) };
  const unknown = await rawMcp(s.url, LIST(1), { ...other, 'mcp-session-id': UNKNOWN });
  const post = await rawMcp(s.url, LIST(1), other);
  t.equal(post.status, 404, 'POST with another key: 404');
  t.equal(post.message?.error?.code, -32001, 'the code of an unknown session');
  t.equal(post.text, unknown.text, 'the same answer as for an unknown session id');
  t.notOk(post.headers.get('mcp-session-id'), 'the session id is not echoed');
  t.equal((await rawMcp(s.url, undefined, other, 'GET')).status, 404, 'GET stream with another key: 404');
  t.equal((await rawMcp(s.url, undefined, other, 'DELETE')).status, 404, 'DELETE with another key: 404');
  t.equal((await call(s.url, '/v1/health')).body.mcp_sessions, 1, 'the session is still held');
  const own = await rawMcp(s.url, LIST(2), headers);
  t.equal(own.status, 200, `${sid}: its own key still reaches it`);
  t.ok(Array.isArray(own.message?.result?.tools), 'the tool list');
  const { authorization: _a, ...noKey } = headers;
  t.equal((await rawMcp(s.url, LIST(3), noKey)).status, 401, 'no key: 401, as for any request');
  t.equal((await rawMcp(s.url, undefined, headers, 'DELETE')).status, 200, 'its own key may DELETE it');
  t.equal((await rawMcp(s.url, LIST(4), headers)).status, 404, 'then it is gone');
});

t.test("the SDK client's session: a leaked Mcp-Session-Id is useless with another key", async (t) => {
  const s = await startStack(t, { vendorUrl: vendor.url, mcp: keys() });
  const c = await connectMcp(t, s.url, { headers: bearer(K2) });
  const sid = c.transport.sessionId!;
  const leaked = { ...bearer(K1), 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' };
  const call1 = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'list_registry', arguments: {} },
  });
  t.equal((await rawMcp(s.url, call1, leaked)).status, 404, 'a tools/call with the other key: 404');
  t.equal((await rawMcp(s.url, undefined, leaked, 'DELETE')).status, 404, 'DELETE with the other key: 404');
  const r = await c.tool('list_registry', {});
  t.notOk(r.isError, 'the client works on');
  t.equal(c.transport.sessionId, sid, 'on the same session');
});

t.test('with a shared store the binding goes with the session to another replica', async (t) => {
  const redis = await startRedis(t);
  const repo = await RedisSessionRepository.connect(redis.url, { keyPrefix: 'binding:' });
  t.teardown(() => repo.close());
  const a = await startStack(t, { vendorUrl: vendor.url, mcp: keys(), shared: repo.kv() });
  const b = await startStack(t, { vendorUrl: vendor.url, mcp: keys(), shared: repo.kv() });
  const { sid, headers } = await rawSession(a.url, bearer(K1));
  t.equal((await rawMcp(a.url, LIST(1), headers)).status, 200, 'used on replica A');
  const stored = await repo.kv().get(`mcp:${sid}`);
  t.ok(stored, 'the session is in the shared store');
  t.notOk(stored?.includes(K1), 'which holds no transport key');
  t.equal((await rawMcp(b.url, LIST(2), { ...headers, ...bearer(K2) })).status, 404, 'replica B, other key: 404');
  t.equal((await call(b.url, '/v1/health')).body.mcp_sessions, 0, 'B resumed nothing for it');
  t.equal((await rawMcp(b.url, LIST(3), headers)).status, 200, 'replica B, its own key: resumed');
  t.equal((await rawMcp(b.url, LIST(4), { ...headers, ...bearer(K2) })).status, 404, 'and bound there too');
});
