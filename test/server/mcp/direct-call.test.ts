/**
 * tools/call run by svc itself (`server/mcp/direct-call.ts`), beside the SDK transport:
 * - the decoder takes only what the SDK's own schemas and header checks take, and reads it as they
 *   do (a seeded fuzz with the SDK's zod schemas as the oracle);
 * - on the wire, a direct answer is the transport's answer (same message, same headers: a call the
 *   decoder passes on, here by a `charset` parameter, is answered by the transport);
 * - what the transport refuses or answers with an error stays the transport's (status and code);
 * - a `notifications/cancelled` for a direct call aborts it: no answer, the HTTP answer ends.
 * The calls of the SDK client in the other MCP tests (progress, cancellation, every tool) take this
 * path too.
 */
import type { IncomingMessage } from 'node:http';
import t from 'tap';
import {
  CallToolRequestSchema,
  JSONRPCRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
import { cancelledIds, directCallOf } from '../../../server/mcp/direct-call.js';
import type { McpSession } from '../../../server/mcp/session.js';
import { startStack } from '../../_helpers/server.js';
import { startFaultVendor } from '../../_helpers/fault-vendor.js';
import { prng } from '../../_helpers/prng.js';
import { rawMcp, rawSession, until } from './_shared.js';

const TOOLS = ['svc', 'svc_context', 'list_registry'];
const session = { has: (name: string) => TOOLS.includes(name) } as unknown as McpSession;
const HEADERS = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
const request = (headers: Record<string, string | undefined>) => ({ headers }) as unknown as IncomingMessage;

/** What the SDK transport and its server take as a tools/call of a known tool, headers included. */
function sdkTakes(body: unknown, headers: Record<string, string | undefined>): boolean {
  const accept = headers.accept ?? '';
  const version = headers['mcp-protocol-version'];
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) return false;
  if (headers['content-type'] !== 'application/json') return false; // the only type the decoder takes
  if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return false;
  const m = JSONRPCRequestSchema.safeParse(body);
  const c = CallToolRequestSchema.safeParse(body);
  return m.success && c.success && TOOLS.includes(c.data.params.name);
}

t.test('the decoder takes a tools/call only when the SDK would, and reads it as the SDK does', async (t) => {
  const base = () => ({
    jsonrpc: '2.0',
    id: 7,
    method: 'tools/call',
    params: { name: 'svc', arguments: { program: 'e1' }, _meta: { progressToken: 'p' } },
  });
  const plain = directCallOf(base(), request(HEADERS), session);
  t.same(plain, { id: 7, name: 'svc', arguments: { program: 'e1' }, progressToken: 'p' }, 'the SDK client’s form');
  const values = [
    undefined,
    null,
    true,
    0,
    -3,
    1.5,
    2 ** 53,
    'x',
    '',
    'svc',
    'tools/call',
    '2.0',
    [],
    [1],
    {},
    { a: 1 },
    { progressToken: 3 },
    { progressToken: 2.5 },
    { other: 1 },
  ];
  const keys = ['jsonrpc', 'id', 'method', 'params', 'result', 'extra'];
  const paramKeys = ['name', 'arguments', '_meta', 'task', 'cursor'];
  const headerValues: Record<string, Array<string | undefined>> = {
    accept: [HEADERS.accept, 'application/json', 'text/event-stream', '*/*', undefined],
    'content-type': ['application/json', 'application/json; charset=utf-8', 'text/plain', undefined],
    'mcp-protocol-version': [undefined, '2025-06-18', '2024-11-05', '1999-01-01', ''],
  };
  const r = prng(2026);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  let taken = 0;
  let refused = 0;
  for (let i = 0; i < 20_000; i++) {
    const body: Record<string, any> = base();
    for (let n = Math.floor(r() * 3); n > 0; n--) {
      const where = r() < 0.5 ? body : r() < 0.6 ? body.params : (body.params?._meta ?? body);
      if (!where || typeof where !== 'object') continue;
      const key = pick(where === body ? keys : where === body.params ? paramKeys : ['progressToken', 'other']);
      if (r() < 0.3) delete where[key];
      else where[key] = structuredClone(pick(values));
    }
    const headers =
      r() < 0.5
        ? { ...HEADERS }
        : Object.fromEntries(
            Object.entries(headerValues).map(([k, vs]) => [
              k,
              r() < 0.6 ? (HEADERS as Record<string, string>)[k] : pick(vs),
            ]),
          );
    const got = directCallOf(body, request(headers), session);
    if (!got) {
      refused++;
      continue;
    }
    taken++;
    if (!sdkTakes(body, headers)) {
      t.fail(`taken, but the SDK refuses: ${JSON.stringify({ body, headers })}`);
      break;
    }
    const sdk = CallToolRequestSchema.parse(body);
    const same =
      JSON.stringify(got) ===
      JSON.stringify({
        id: JSONRPCRequestSchema.parse(body).id,
        name: sdk.params.name,
        arguments: sdk.params.arguments,
        progressToken: sdk.params._meta?.progressToken,
      });
    if (!same) {
      t.fail(`read otherwise than the SDK reads it: ${JSON.stringify(body)}`);
      break;
    }
  }
  t.ok(taken > 2000, `taken often (${taken})`);
  t.ok(refused > 2000, `refused often (${refused})`);
});

t.test('cancelledIds: the request ids of notifications/cancelled, one message or a batch', async (t) => {
  const cancel = (requestId: unknown) => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId } });
  t.same(cancelledIds(cancel(4)), [4]);
  t.same(cancelledIds([cancel('a'), { jsonrpc: '2.0', method: 'ping', id: 1 }, cancel(5)]), ['a', 5]);
  t.same(cancelledIds([cancel(1.5), cancel(null), { method: 'notifications/cancelled' }, null, 3]), []);
});

const stack = await startStack(t);
const call = (id: number, name: string, args: Record<string, unknown>) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

t.test('a direct answer is the transport’s answer: the same message and headers', async (t) => {
  const { sid, headers } = await rawSession(stack.url);
  for (const [name, args] of [
    ['list_registry', {}],
    ['discover_capabilities', { query: 'beers' }],
    ['svc', { logical_session_ref: 'l_nope', program: 'e1' }],
  ] as const) {
    const direct = await rawMcp(stack.url, call(3, name, args), headers);
    // A charset parameter: the decoder passes it on, the transport takes it.
    const sdk = await rawMcp(stack.url, call(3, name, args), {
      ...headers,
      'content-type': 'application/json; charset=utf-8',
    });
    t.equal(direct.status, 200, `${name}: 200`);
    t.equal(sdk.status, 200);
    // The same message; the transport's schema check of the result orders its keys otherwise.
    t.same(direct.message, sdk.message, `${name}: the same JSON-RPC message`);
    for (const h of ['content-type', 'cache-control', 'mcp-session-id', 'content-length'])
      t.equal(direct.headers.get(h), sdk.headers.get(h), `${name}: the same ${h}`);
    t.equal(direct.headers.get('mcp-session-id'), sid);
  }
});

t.test('what the transport refuses stays its refusal', async (t) => {
  const { headers } = await rawSession(stack.url);
  const unknown = await rawMcp(stack.url, call(4, 'no_such_tool', {}), headers);
  t.equal(unknown.status, 200);
  t.equal(unknown.message?.error?.code, -32602, 'an unknown tool: -32602 from the server');
  t.match(unknown.message?.error?.message, /Unknown tool: no_such_tool/);
  const extra = JSON.stringify({ ...JSON.parse(call(5, 'list_registry', {})), extra: 1 });
  const bad = await rawMcp(stack.url, extra, headers);
  t.equal(bad.status, 400, 'a member JSON-RPC does not have: 400');
  t.equal(bad.message?.error?.code, -32700);
  const args = await rawMcp(stack.url, call(6, 'list_registry', [] as never), headers);
  t.equal(args.status, 200);
  t.match(
    args.message?.error,
    { code: -32603, message: /expected record/ },
    'arguments not an object: the SDK’s error',
  );
  const accept = await rawMcp(stack.url, call(7, 'list_registry', {}), { ...headers, accept: 'application/json' });
  t.equal(accept.status, 406, 'an Accept without text/event-stream: 406');
  const type = await rawMcp(stack.url, call(8, 'list_registry', {}), { ...headers, 'content-type': 'text/plain' });
  t.equal(type.status, 415, 'not application/json: 415');
  const version = await rawMcp(stack.url, call(9, 'list_registry', {}), {
    ...headers,
    'mcp-protocol-version': '1999-01-01',
  });
  t.equal(version.status, 400, 'an unsupported protocol version: 400');
  t.match(version.message?.error?.message, /Unsupported protocol version/);
  const batch = await rawMcp(stack.url, `[${call(10, 'list_registry', {})}]`, headers);
  t.equal(batch.status, 200, 'a batch goes to the transport');
  t.match(batch.text, /"id":10/);
});

t.test('notifications/cancelled for a direct call: no answer, the HTTP answer ends', async (t) => {
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
    call(2, 'svc_context', { intent: 'cancel', seeds: [{ api: 'brewery', entity: 'Beer' }] }),
    headers,
  );
  const ref = ctx.message?.result?._meta?.svc?.logical_session_ref as string;
  t.match(ref, /^l_/);
  const pending = rawMcp(slow.url, call(3, 'svc', { logical_session_ref: ref, program: 'e1[id]' }), headers);
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
  t.equal(answer.text, '', 'with no message: a cancelled request is not answered');
  const after = await rawMcp(slow.url, call(4, 'list_registry', {}), headers);
  t.equal(after.message?.id, 4, 'the session goes on');
});
