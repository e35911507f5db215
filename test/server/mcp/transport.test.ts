/**
 * The /mcp endpoint on the wire (Streamable HTTP, the official SDK transport behind svc's own
 * checks): malformed JSON (400, -32700), unknown session (404), no session and not initialize
 * (400), a request is never answered 202, DNS-rebinding checks on Host (421) and Origin (403), method,
 * size and media-type refusals, tools/call refusals and cancellation as the SDK answers them, session
 * termination, the transport-session cap and idle sweep, and
 * that the server keeps serving after all of it.
 */
import t from 'tap';
import { MAX_BODY_BYTES, MAX_JSON_DEPTH } from '../../../server/http/body.js';
import { TenantScopes, TransportKeys } from '../../../server/mcp/config.js';
import { call, raw, startStack } from '../../_helpers/server.js';
import { connectMcp, openLogical, textOf } from '../../_helpers/mcp.js';
import { startFaultVendor } from '../../_helpers/fault-vendor.js';
import { inbound, INIT, KEY_ACME, rawMcp, rawSession, rowsOf, until } from './_shared.js';

const stack = await startStack(t);
const port = new URL(stack.url).port;
const ACCEPT = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
const LIST = (id: unknown) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list' });

t.test('malformed JSON: 400 with a JSON-RPC parse error (-32700)', async (t) => {
  const { headers } = await rawSession(stack.url);
  for (const body of ['{', 'not json', '{"jsonrpc": "2.0", "id": 1,', '', '\u0000']) {
    for (const h of [{}, headers]) {
      const a = await rawMcp(stack.url, body, h);
      const what = `${JSON.stringify(body)} ${'mcp-session-id' in h ? 'in a session' : 'without a session'}`;
      t.equal(a.status, 400, `${what}: 400`);
      t.equal(a.message?.jsonrpc, '2.0', `${what}: a JSON-RPC body`);
      t.equal(a.message?.error?.code, -32700, `${what}: -32700`);
      t.equal(a.message?.id, null, `${what}: id null`);
    }
  }
  const deep = '['.repeat(MAX_JSON_DEPTH + 10) + ']'.repeat(MAX_JSON_DEPTH + 10);
  const d = await rawMcp(stack.url, deep, headers);
  t.equal(d.status, 400, 'JSON nested too deep: 400');
  t.equal(d.message?.error?.code, -32700);
  t.match(d.message?.error?.message, /nested/);
  // Valid JSON that is not a JSON-RPC message is refused by the SDK transport.
  for (const body of ['{}', '42', '[1]', '{"jsonrpc": "1.0", "id": 1, "method": "tools/list"}']) {
    const a = await rawMcp(stack.url, body, headers);
    t.equal(a.status, 400, `${body}: 400`);
    t.type(a.message?.error?.code, 'number', `${body}: a JSON-RPC error`);
  }
});

t.test('an unknown Mcp-Session-Id is 404; a request without one that is not initialize is 400', async (t) => {
  for (const sid of ['00000000-0000-0000-0000-000000000000', 'nope', 'x'.repeat(300)]) {
    const a = await rawMcp(stack.url, LIST(1), { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' });
    t.equal(a.status, 404, `${sid.slice(0, 20)}: 404`);
    t.equal(a.message?.error?.code, -32001, 'the SDK code for an unknown session');
    t.match(a.message?.error?.message, /initialize/, 'says to initialize a new session');
    const g = await rawMcp(stack.url, undefined, { 'mcp-session-id': sid }, 'GET');
    t.equal(g.status, 404, `${sid.slice(0, 20)}: GET 404`);
    const d = await rawMcp(stack.url, undefined, { 'mcp-session-id': sid }, 'DELETE');
    t.equal(d.status, 404, `${sid.slice(0, 20)}: DELETE 404`);
  }
  const list = await rawMcp(stack.url, LIST(1));
  t.equal(list.status, 400, 'tools/list without a session: 400');
  t.match(list.message?.error?.message, /initialize/);
  t.notOk(list.headers.get('mcp-session-id'), 'no session was made');
  const notif = await rawMcp(stack.url, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  t.equal(notif.status, 400, 'a notification without a session: 400');
  const get = await rawMcp(stack.url, undefined, {}, 'GET');
  t.equal(get.status, 400, 'GET without a session: 400');
  const del = await rawMcp(stack.url, undefined, {}, 'DELETE');
  t.equal(del.status, 400, 'DELETE without a session: 400');
  const batchInit = await rawMcp(stack.url, JSON.stringify([INIT]));
  t.not(batchInit.status, 202, 'an initialize in a batch is never 202');
});

t.test('a request (with an id) is never answered 202', async (t) => {
  const { headers } = await rawSession(stack.url);
  for (const id of [2, 'req-2', 0, '']) {
    const a = await rawMcp(stack.url, LIST(id), headers);
    t.equal(a.status, 200, `id ${JSON.stringify(id)}: 200`);
    t.equal(a.message?.id, id, `id ${JSON.stringify(id)}: answered with its id`);
    t.ok(Array.isArray(a.message?.result?.tools), 'the tool list');
  }
  const call1 = await rawMcp(
    stack.url,
    JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'list_registry', arguments: {} } }),
    headers,
  );
  t.equal(call1.status, 200, 'tools/call: 200');
  t.equal(call1.message?.id, 7);
  const unknownMethod = await rawMcp(stack.url, JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'no/such' }), headers);
  t.equal(unknownMethod.status, 200, 'an unknown method is answered, not accepted');
  t.equal(unknownMethod.message?.error?.code, -32601, 'method not found');
  const batch = await rawMcp(
    stack.url,
    JSON.stringify([
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 9, method: 'ping' },
    ]),
    headers,
  );
  t.not(batch.status, 202, 'a batch holding a request is not 202');
  for (const id of [null, 1.5, {}, [], true]) {
    const a = await rawMcp(stack.url, JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list' }), headers);
    t.not(a.status, 202, `id ${JSON.stringify(id)}: not 202`);
    t.equal(a.status, 400, `id ${JSON.stringify(id)}: 400 (not a valid request id)`);
  }
  const n = await rawMcp(stack.url, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), headers);
  t.equal(n.status, 202, 'a notification alone is 202');
  t.equal(n.text, '', 'with no body');
  const resp = await rawMcp(stack.url, JSON.stringify({ jsonrpc: '2.0', id: 99, result: {} }), headers);
  t.equal(resp.status, 202, 'a response alone is 202');
});

t.test('DNS rebinding: a foreign Host is 421, a foreign Origin 403', async (t) => {
  const body = JSON.stringify(INIT);
  const post = (headers: Record<string, string>) =>
    raw(stack.url, 'POST', '/mcp', { ...ACCEPT, 'content-length': String(Buffer.byteLength(body)), ...headers }, body);
  for (const host of [
    'evil.example',
    `evil.example:${port}`,
    `127.0.0.1.evil.example:${port}`,
    'localhost.evil.example',
  ]) {
    const a = await post({ host });
    t.equal(a.status, 421, `Host ${host}: 421`);
    t.match(a.text, /SVC_ALLOWED_HOSTS/, `Host ${host}: says why and what to set`);
    t.notOk(a.headers['mcp-session-id'], `Host ${host}: no session`);
  }
  for (const origin of [
    'http://evil.example',
    `http://evil.example:${port}`,
    'null',
    'https://localhost.evil.example',
    'not a url',
  ]) {
    const a = await post({ host: `127.0.0.1:${port}`, origin });
    t.equal(a.status, 403, `Origin ${origin}: 403`);
  }
  for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, 'localhost', `[::1]:${port}`]) {
    const a = await post({ host });
    t.equal(a.status, 200, `Host ${host}: allowed`);
  }
  for (const origin of [`http://localhost:${port}`, `http://127.0.0.1:${port}`, 'http://localhost:5173']) {
    const a = await post({ host: `127.0.0.1:${port}`, origin });
    t.equal(a.status, 200, `Origin ${origin}: allowed (a loopback page)`);
  }
  // The checks come first: a foreign Host is refused on an existing session too, and before a transport key.
  const { headers } = await rawSession(stack.url);
  const inSession = await raw(
    stack.url,
    'POST',
    '/mcp',
    { ...ACCEPT, ...headers, host: 'evil.example', 'content-length': String(Buffer.byteLength(LIST(3))) },
    LIST(3),
  );
  t.equal(inSession.status, 421, 'a foreign Host on an existing session: 421');
  const keyed = await startStack(t, {
    vendorUrl: stack.vendorUrl,
    mcp: { keys: new TransportKeys(['k'.repeat(20)]), tenants: new TenantScopes() },
  });
  const k = await raw(keyed.url, 'POST', '/mcp', { ...ACCEPT, host: 'evil.example' }, body);
  t.equal(k.status, 421, 'the rebinding check comes before the transport key check');
});

t.test('configured hosts and origins add to the loopback defaults', async (t) => {
  const s = await startStack(t, {
    vendorUrl: stack.vendorUrl,
    mcp: {
      keys: new TransportKeys([]),
      tenants: new TenantScopes(),
      allowedHosts: ['svc.example', '127.0.0.1'],
      allowedOrigins: ['https://app.example'],
    },
  });
  const p = new URL(s.url).port;
  const body = JSON.stringify(INIT);
  const post = (headers: Record<string, string>) => raw(s.url, 'POST', '/mcp', { ...ACCEPT, ...headers }, body);
  t.equal((await post({ host: `svc.example:${p}` })).status, 200, 'a listed host');
  t.equal((await post({ host: `SVC.EXAMPLE:${p}` })).status, 200, 'host names are case-insensitive');
  t.equal((await post({ host: `localhost:${p}` })).status, 200, 'loopback names still pass');
  t.equal((await post({ host: `other.example:${p}` })).status, 421, 'a name not listed is refused');
  t.equal((await post({ host: `127.0.0.1:${p}`, origin: 'https://app.example' })).status, 200, 'a listed origin');
  t.equal(
    (await post({ host: `127.0.0.1:${p}`, origin: 'https://svc.example' })).status,
    200,
    'an origin of a listed host',
  );
  t.equal((await post({ host: `127.0.0.1:${p}`, origin: 'https://other.example' })).status, 403, 'any other origin');
});

t.test('method, size, media type and Accept refusals', async (t) => {
  for (const method of ['PUT', 'PATCH']) {
    const a = await raw(stack.url, method, '/mcp', ACCEPT, '{}');
    t.equal(a.status, 405, `${method}: 405`);
    t.equal(a.headers.allow, 'GET, POST, DELETE');
  }
  const big = JSON.stringify({ ...INIT, params: { ...INIT.params, pad: 'x'.repeat(MAX_BODY_BYTES + 10) } });
  const tooBig = await raw(stack.url, 'POST', '/mcp', ACCEPT, big);
  t.equal(tooBig.status, 413, 'a body over the limit: 413');
  t.match(JSON.parse(tooBig.text), { jsonrpc: '2.0', id: null, error: { message: /over \d+ bytes/ } });
  const { headers } = await rawSession(stack.url);
  const text = await rawMcp(stack.url, LIST(4), { ...headers, 'content-type': 'text/plain' });
  t.equal(text.status, 415, 'not application/json: 415');
  const accept = await rawMcp(stack.url, LIST(5), { ...headers, accept: 'application/json' });
  t.equal(accept.status, 406, 'an Accept without text/event-stream: 406');
  const again = await rawMcp(stack.url, JSON.stringify(INIT), headers);
  t.equal(again.status, 400, 'initialize on an initialized session: 400');
});

t.test('DELETE ends a transport session; its id is unknown afterwards', async (t) => {
  const { sid, headers } = await rawSession(stack.url);
  const before = (await call(stack.url, '/v1/health')).body.mcp_sessions as number;
  const d = await rawMcp(stack.url, undefined, headers, 'DELETE');
  t.equal(d.status, 200, 'DELETE: 200');
  const after = (await call(stack.url, '/v1/health')).body.mcp_sessions as number;
  t.equal(after, before - 1, 'health counts one session less');
  const a = await rawMcp(stack.url, LIST(6), headers);
  t.equal(a.status, 404, `${sid}: 404 after DELETE`);
});

t.test('the transport-session cap: 503 when full of signed-in sessions; idle ones are swept', async (t) => {
  let clock = Date.now();
  const s = await startStack(t, {
    vendorUrl: stack.vendorUrl,
    auth: inbound('optional'),
    limits: { maxMcpSessions: 2, mcpSessionIdleMs: 60_000 },
    now: () => clock,
  });
  // Signed in: the cap never closes such a session to make room (session-limits.test.ts has the rest).
  const signIn = JSON.stringify({
    jsonrpc: '2.0',
    id: 9,
    method: 'tools/call',
    params: { name: 'svc_incoming_auth', arguments: { api_key: KEY_ACME } },
  });
  const one = await rawSession(s.url);
  t.equal((await rawMcp(s.url, signIn, one.headers)).status, 200);
  const two = await rawSession(s.url);
  t.equal((await rawMcp(s.url, signIn, two.headers)).status, 200);
  const full = await rawMcp(s.url, JSON.stringify(INIT));
  t.equal(full.status, 503, 'a third session: 503');
  t.equal(full.headers.get('retry-after'), '60');
  t.match(full.message?.error?.message, /cap/);
  t.equal((await rawMcp(s.url, LIST(1), one.headers)).status, 200, 'the sessions held still work');
  clock += 120_000;
  const third = await rawMcp(s.url, JSON.stringify(INIT));
  t.equal(third.status, 200, 'after they idled out, a new session opens');
  t.equal((await rawMcp(s.url, LIST(2), one.headers)).status, 404, 'an idled-out session is gone');
  t.equal((await call(s.url, '/v1/health')).body.mcp_sessions, 1);
});

const CALL = (id: number, name: string, args: unknown) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

t.test('tools/call refusals and errors are the SDK’s own (status and code)', async (t) => {
  const { headers } = await rawSession(stack.url);
  const ok = await rawMcp(stack.url, CALL(3, 'list_registry', {}), headers);
  t.equal(ok.status, 200);
  t.match(ok.headers.get('content-type'), /^application\/json/, 'an answer alone: JSON');
  t.ok(Array.isArray(ok.message?.result?.content), 'a tool result');
  const unknown = await rawMcp(stack.url, CALL(4, 'no_such_tool', {}), headers);
  t.equal(unknown.status, 200);
  t.equal(unknown.message?.error?.code, -32602, 'an unknown tool: -32602 from the server');
  t.match(unknown.message?.error?.message, /Unknown tool: no_such_tool/);
  const extra = JSON.stringify({ ...JSON.parse(CALL(5, 'list_registry', {})), extra: 1 });
  const bad = await rawMcp(stack.url, extra, headers);
  t.equal(bad.status, 400, 'a member JSON-RPC does not have: 400');
  t.equal(bad.message?.error?.code, -32700);
  const args = await rawMcp(stack.url, CALL(6, 'list_registry', []), headers);
  t.equal(args.status, 200);
  t.match(args.message?.error, { code: -32603, message: /expected record/ }, 'arguments not an object');
  const accept = await rawMcp(stack.url, CALL(7, 'list_registry', {}), { ...headers, accept: 'application/json' });
  t.equal(accept.status, 406, 'an Accept without text/event-stream: 406');
  const type = await rawMcp(stack.url, CALL(8, 'list_registry', {}), { ...headers, 'content-type': 'text/plain' });
  t.equal(type.status, 415, 'not application/json: 415');
  const version = await rawMcp(stack.url, CALL(9, 'list_registry', {}), {
    ...headers,
    'mcp-protocol-version': '1999-01-01',
  });
  t.equal(version.status, 400, 'an unsupported protocol version: 400');
  t.match(version.message?.error?.message, /Unsupported protocol version/);
  const batch = await rawMcp(stack.url, `[${CALL(10, 'list_registry', {})}]`, headers);
  t.equal(batch.status, 200, 'a batch: answered');
  t.match(batch.text, /"id":10/);
});

t.test('notifications/cancelled for a tools/call: no answer, and its HTTP answer ends', async (t) => {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let asked = 0;
  const vendor = await startFaultVendor({
    'GET /beers': async () => {
      asked++;
      await held;
      return { json: [{ id: 1, breweryId: 'b-1', name: 'B', style: 'IPA', abv: 5, ibu: 30, available: true }] };
    },
  });
  t.teardown(() => vendor.close());
  const slow = await startStack(t, { vendorUrl: vendor.url });
  const { headers } = await rawSession(slow.url);
  const ctx = await rawMcp(
    slow.url,
    CALL(2, 'svc_context', { intent: 'cancel', seeds: [{ api: 'brewery', entity: 'Beer' }] }),
    headers,
  );
  const ref = ctx.message?.result?._meta?.svc?.logical_session_ref as string;
  t.match(ref, /^l_/);
  const pending = rawMcp(slow.url, CALL(3, 'svc', { logical_session_ref: ref, program: 'e1[id]' }), headers);
  await until('the vendor to be asked', () => asked === 1);
  const note = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 3, reason: 'stop' } };
  const cancelled = await rawMcp(slow.url, JSON.stringify(note), headers);
  t.equal(cancelled.status, 202, 'the notification: 202');
  // Were the call not cancelled, it would answer once the vendor does (released in a while).
  const timer = setTimeout(release, 3000);
  const answer = await pending;
  clearTimeout(timer);
  release();
  t.equal(answer.status, 200);
  t.match(answer.headers.get('content-type'), /text\/event-stream/, 'an event stream');
  t.equal(answer.text, '', 'that ends with no message: a cancelled request is not answered');
  const after = await rawMcp(slow.url, CALL(4, 'list_registry', {}), headers);
  t.equal(after.message?.id, 4, 'the session goes on');
});

t.test('after all of the above the server is up and serves MCP', async (t) => {
  const health = await call(stack.url, '/v1/health');
  t.equal(health.status, 200, 'health 200');
  t.equal(health.body.status, 'ok');
  const c = await connectMcp(t, stack.url);
  const { ref } = await openLogical(c, [{ api: 'brewery', entity: 'Beer' }], 'still up');
  const r = await c.tool('svc', { logical_session_ref: ref, program: 'e1[id]' });
  t.notOk(r.isError, textOf(r));
  t.equal(rowsOf(r).length, 25);
});
