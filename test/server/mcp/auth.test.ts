/**
 * Authentication on MCP (SPEC "MCP transport session under required auth", "Inbound
 * authentication" 7, "MCP transport auth"): in mode required every tool but svc_incoming_auth
 * fails with auth_required until svc_incoming_auth succeeded on that transport session (another
 * connection stays unauthenticated); bad credentials and bad arguments; tenant isolation of
 * logical sessions and their runs; mode optional; and transport keys, which guard /mcp itself
 * whatever the inbound auth mode.
 */
import t from 'tap';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { SvcFailure } from '../../../common/errors.js';
import { mcpConfigFromEnv, TenantScopes, TransportKeys } from '../../../server/mcp/config.js';
import { call, startStack } from '../../_helpers/server.js';
import { connectMcp, errorCode, openLogical, svcMeta, textOf } from '../../_helpers/mcp.js';
import { INIT, inbound, jwt, KEY_ACME, KEY_GLOBEX, keyOf, rawMcp, rawSession, rowsOf, sc } from './_shared.js';

const BEER = { api: 'brewery', entity: 'Beer' };
const required = await startStack(t, { auth: inbound('required') });

/** A call of every tool but svc_incoming_auth, with arguments that would work once authenticated. */
function everyTool(ref: string): Array<[string, Record<string, unknown>]> {
  return [
    ['svc_context', { intent: 'x', seeds: [BEER] }],
    ['svc', { logical_session_ref: ref, program: 'e1[name]' }],
    ['svc_run', { logical_session_ref: ref, run_ref: 'pc0' }],
    ['discover_capabilities', { query: 'beer' }],
    ['list_registry', {}],
  ];
}

/** The JSON-RPC error of a promise that should reject with one. */
const rpcError = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as McpError,
  );

t.test('mode required: every tool but svc_incoming_auth fails until it succeeded', async (t) => {
  const c = await connectMcp(t, required.url);
  for (const [name, args] of everyTool('l_AAAAAAAAAAAAAAAA')) {
    const r = await c.tool(name, args);
    t.equal(r.isError, true, `${name}: isError`);
    t.equal(errorCode(r), 'auth_required', `${name}: auth_required`);
    t.match(textOf(r), /svc_incoming_auth/, `${name}: the hint names svc_incoming_auth`);
  }
  const listed = await c.client.listTools();
  t.ok(
    listed.tools.some((x) => x.name === 'svc_incoming_auth'),
    'tools/list works before auth',
  );
  t.same(await c.client.listResources(), { resources: [] }, 'resources/list shows nothing');
  const read = await rpcError(
    c.client.readResource({ uri: `svc://session/l_AAAAAAAAAAAAAAAA/run/pr${'0'.repeat(64)}` }),
  );
  t.type(read, McpError, 'resources/read is a JSON-RPC error before auth');
  t.equal(read?.code, ErrorCode.InvalidRequest);
  t.match(read?.message, /svc_incoming_auth/);

  const ok = await c.tool('svc_incoming_auth', { api_key: KEY_ACME });
  t.notOk(ok.isError, textOf(ok));
  t.same(sc(ok), { method: 'api_key', tenant_id: 'acme', subject: 'ci-bot' }, 'who it authenticated as');
  t.match(textOf(ok), /tenant acme/);
  t.notMatch(textOf(ok), new RegExp(KEY_ACME), 'the key is not echoed');

  const { ref } = await openLogical(c, [BEER], 'after auth');
  for (const [name, args] of everyTool(ref)) {
    const r = await c.tool(name, args);
    t.not(errorCode(r), 'auth_required', `${name}: no longer auth_required`);
  }
  const read2 = await c.tool('svc', { logical_session_ref: ref, program: 'e1[name]' });
  t.equal(rowsOf(read2).length, 25, 'a read works');

  const other = await connectMcp(t, required.url);
  const still = await other.tool('list_registry', {});
  t.equal(errorCode(still), 'auth_required', 'a second connection is still unauthenticated');
  const theirs = await other.tool('svc', { logical_session_ref: ref, program: 'e1[name]' });
  t.equal(errorCode(theirs), 'auth_required', 'and cannot use the ref of the first');
});

t.test('svc_incoming_auth: bad credentials and bad arguments', async (t) => {
  const c = await connectMcp(t, required.url);
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ api_key: 'key-nobody-000000000000' }, 'auth_unknown_key'],
    [{ api_key: KEY_ACME + ' ' }, 'auth_unknown_key'],
    [{ bearer_token: 'not-a-jwt' }, 'auth_malformed_token'],
    [{ bearer_token: await jwt('acme', 'alice', 'another-secret-0123456789abcdefghij') }, 'auth_bad_signature'],
    [{ bearer_token: 'two words' }, 'bad_authorization_header'],
    [{ api_key: KEY_ACME, bearer_token: await jwt('acme') }, 'bad_arguments'],
    [{}, 'bad_arguments'],
    [{ api_key: '' }, 'bad_arguments'],
    [{ api_key: 5 }, 'bad_arguments'],
    [{ api_key: KEY_ACME, tenant: 'acme' }, 'bad_arguments'],
  ];
  for (const [args, code] of cases) {
    const r = await c.tool('svc_incoming_auth', args);
    const what = JSON.stringify(args).slice(0, 60);
    t.equal(r.isError, true, `${what}: isError`);
    t.equal(errorCode(r), code, `${what}: ${code}`);
    t.notMatch(textOf(r), /key-acme-4f9c2a7e1b55|key-nobody/, `${what}: the credential is not echoed`);
  }
  const both = await c.tool('svc_incoming_auth', { api_key: KEY_ACME, bearer_token: await jwt('acme') });
  t.match(textOf(both), /exactly one/, 'both: the message says exactly one');
  const still = await c.tool('list_registry', {});
  t.equal(errorCode(still), 'auth_required', 'failed attempts leave the connection unauthenticated');

  const byJwt = await c.tool('svc_incoming_auth', { bearer_token: await jwt('globex', 'bob') });
  t.notOk(byJwt.isError, textOf(byJwt));
  t.same(sc(byJwt), { method: 'jwt', tenant_id: 'globex', subject: 'bob' }, 'a JWT authenticates too');
  t.notOk((await c.tool('list_registry', {})).isError, 'and the tools work');
});

t.test("another tenant's logical session and runs are out of reach", async (t) => {
  const a = await connectMcp(t, required.url);
  const b = await connectMcp(t, required.url);
  t.notOk((await a.tool('svc_incoming_auth', { api_key: KEY_ACME })).isError);
  t.notOk((await b.tool('svc_incoming_auth', { api_key: KEY_GLOBEX })).isError);
  const { ref } = await openLogical(a, [BEER], 'tenant A');
  const big = await a.tool('svc', { logical_session_ref: ref, program: 'e1(limit=40)[id]' });
  const runId = svcMeta(big).run_id as string;
  const link = (big.content.find((x) => x.type === 'resource_link') as { uri: string }).uri;
  const pc = svcMeta(await a.tool('svc', { logical_session_ref: ref, program: 'e1(limit=2000)[id]' }))
    .run_ref as string;

  const svc = await b.tool('svc', { logical_session_ref: ref, program: 'e1[id]' });
  t.equal(svc.isError, true, 'svc on the ref of another tenant fails');
  t.equal(errorCode(svc), 'forbidden');
  const run = await b.tool('svc_run', { logical_session_ref: ref, run_ref: pc });
  t.equal(errorCode(run), 'forbidden', "svc_run with another tenant's ref and pcN fails");
  const page = await b.tool('svc_run', { logical_session_ref: ref, run_ref: `${ref}_pg1` });
  t.equal(errorCode(page), 'forbidden', 'and so does its page handle');

  const key = await keyOf(required, ref, 'acme');
  for (const uri of [link, `svc://execute/${key.prompt_hash}/${key.session}/run/${runId}`]) {
    const e = await rpcError(b.client.readResource({ uri }));
    t.type(e, McpError, `${uri.slice(0, 30)}: a JSON-RPC error for tenant B`);
    t.equal(e?.code, -32002, 'resource not found');
    t.notMatch(JSON.stringify(e), /"id":/, 'no row leaks into the error');
  }
  t.same(await b.client.listResources(), { resources: [] }, "B lists none of A's runs");

  // Tenant A still reaches all of it, from this connection and from another one of the same tenant.
  const own = await a.client.readResource({ uri: link });
  t.equal((JSON.parse((own.contents[0] as { text: string }).text) as { steps: unknown[] }).steps.length, 1);
  const a2 = await connectMcp(t, required.url);
  t.notOk((await a2.tool('svc_incoming_auth', { bearer_token: await jwt('acme') })).isError);
  const shared = await a2.tool('svc', { logical_session_ref: ref, program: 'e1[id]' });
  t.notOk(shared.isError, 'the same tenant on another connection may use the ref');
  const ranByA = await a.tool('svc_run', { logical_session_ref: ref, run_ref: pc });
  t.notOk(ranByA.isError, "B's attempt did not spend A's pcN");
});

t.test('authenticating as another tenant forgets the intents bound for the former one', async (t) => {
  const c = await connectMcp(t, required.url);
  await c.tool('svc_incoming_auth', { api_key: KEY_ACME });
  const first = await openLogical(c, [BEER], 'switch');
  await c.tool('svc_incoming_auth', { api_key: KEY_GLOBEX });
  const second = await openLogical(c, [BEER], 'switch');
  t.not(second.ref, first.ref, 'the intent opens a new ref for the new tenant');
  t.equal(svcMeta(second.result).continuity.new_symbol_space, true);
  const old = await c.tool('svc', { logical_session_ref: first.ref, program: 'e1[id]' });
  t.equal(errorCode(old), 'forbidden', "the former tenant's ref is out of reach");
  await c.tool('svc_incoming_auth', { api_key: KEY_GLOBEX });
  const same = await openLogical(c, [BEER], 'switch');
  t.equal(same.ref, second.ref, 'authenticating again as the same tenant keeps the binding');
});

t.test('mode optional: anonymous until svc_incoming_auth; the anonymous tenant is its own', async (t) => {
  const s = await startStack(t, { vendorUrl: required.vendorUrl, auth: inbound('optional') });
  const c = await connectMcp(t, s.url);
  const { ref } = await openLogical(c, [BEER], 'optional');
  t.equal(rowsOf(await c.tool('svc', { logical_session_ref: ref, program: 'e1[id]' })).length, 25, 'works anonymously');
  const bad = await c.tool('svc_incoming_auth', { api_key: 'key-nobody-000000000000' });
  t.equal(errorCode(bad), 'auth_unknown_key', 'a wrong key is still an error');
  t.notOk((await c.tool('list_registry', {})).isError, 'and leaves the anonymous principal in place');
  t.notOk((await c.tool('svc_incoming_auth', { api_key: KEY_ACME })).isError);
  const after = await c.tool('svc', { logical_session_ref: ref, program: 'e1[id]' });
  t.equal(errorCode(after), 'forbidden', "acme may not use the anonymous tenant's ref");
});

// ---------------------------------------------------------------- transport keys

const TKEY = 'k'.repeat(20);

t.test('transport keys: /mcp needs Authorization: Bearer <key>, on every request', async (t) => {
  const s = await startStack(t, {
    mcp: { keys: new TransportKeys([TKEY, 'second-transport-key-000']), tenants: new TenantScopes() },
  });
  const body = JSON.stringify(INIT);
  const none = await rawMcp(s.url, body);
  t.equal(none.status, 401, 'no Authorization: 401');
  t.match(none.headers.get('www-authenticate'), /^Bearer/, 'with a Bearer challenge');
  t.equal(none.message?.jsonrpc, '2.0', 'a JSON-RPC error body');
  t.type(none.message?.error?.code, 'number');
  t.match(none.message?.error?.message, /transport key/);
  t.notOk(none.headers.get('mcp-session-id'), 'no session is opened');
  for (const authorization of [
    `Bearer ${'k'.repeat(19)}`,
    `Bearer ${TKEY}x`,
    `Basic ${TKEY}`,
    TKEY,
    'Bearer ',
    `Bearer  ${TKEY} extra`,
  ]) {
    const a = await rawMcp(s.url, body, { authorization });
    t.equal(a.status, 401, `${JSON.stringify(authorization)}: 401`);
  }
  const ok = await rawMcp(s.url, body, { authorization: `Bearer ${TKEY}` });
  t.equal(ok.status, 200, 'the right key opens a session');
  t.ok(ok.headers.get('mcp-session-id'));
  const second = await rawMcp(s.url, body, { authorization: `bearer second-transport-key-000` });
  t.equal(second.status, 200, 'any provisioned key, the scheme case-insensitive');

  const { headers } = await rawSession(s.url, { authorization: `Bearer ${TKEY}` });
  const { authorization: _a, ...withoutKey } = headers;
  const list = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
  t.equal((await rawMcp(s.url, list, headers)).status, 200, 'a request of the session with the key');
  t.equal((await rawMcp(s.url, list, withoutKey)).status, 401, 'the same request without it: 401');

  const sdkFail = await connectMcp(t, s.url).then(
    () => 'connected',
    (e: unknown) => String(e),
  );
  t.not(sdkFail, 'connected', 'the SDK client cannot connect without the key');
  const c = await connectMcp(t, s.url, { headers: { authorization: `Bearer ${TKEY}` } });
  const { ref } = await openLogical(c, [BEER], 'transport');
  t.equal(rowsOf(await c.tool('svc', { logical_session_ref: ref, program: 'e1[id]' })).length, 25, 'tools work');
  const health = await call(s.url, '/v1/health');
  t.equal(health.status, 200, 'health needs no transport key');
  const registry = await call(s.url, '/v1/registry');
  t.equal(registry.status, 200, 'the HTTP routes are not behind transport keys');
});

t.test('transport keys are independent of inbound auth', async (t) => {
  const s = await startStack(t, {
    vendorUrl: required.vendorUrl,
    auth: inbound('required'),
    mcp: { keys: new TransportKeys([TKEY]), tenants: new TenantScopes() },
  });
  const c = await connectMcp(t, s.url, { headers: { authorization: `Bearer ${TKEY}` } });
  const r = await c.tool('list_registry', {});
  t.equal(errorCode(r), 'auth_required', 'the transport key is not an inbound credential');
  const asKey = await c.tool('svc_incoming_auth', { api_key: TKEY });
  t.equal(errorCode(asKey), 'auth_unknown_key', 'nor an API key');
  t.notOk((await c.tool('svc_incoming_auth', { api_key: KEY_ACME })).isError);
  t.notOk((await c.tool('list_registry', {})).isError, 'both together work');

  // An inbound API key in the Authorization header does not pass the transport check.
  const a = await rawMcp(s.url, JSON.stringify(INIT), { authorization: `Bearer ${KEY_ACME}` });
  t.equal(a.status, 401);
  // With inbound auth required and no transport keys, /mcp itself is open (the tools are not).
  const open = await rawMcp(required.url, JSON.stringify(INIT));
  t.equal(open.status, 200, 'no transport keys: /mcp answers without Authorization');
});

t.test('transport keys and tenant scopes are read from files', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-mcp-config-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const keys = join(dir, 'keys.json');
  const tenants = join(dir, 'tenants.json');
  await writeFile(keys, JSON.stringify([{ key: TKEY, label: 'laptop' }]));
  await writeFile(tenants, JSON.stringify({ acme: { apis: ['brewery'] }, '*': { apis: [] } }));
  const cfg = await mcpConfigFromEnv({
    SVC_MCP_TRANSPORT_KEYS_FILE: keys,
    SVC_MCP_TENANTS_FILE: tenants,
    SVC_MCP_ALLOWED_HOSTS: 'svc.example, localhost',
    SVC_MCP_ALLOWED_ORIGINS: 'https://app.example',
  });
  t.equal(cfg.keys.required, true);
  t.ok(cfg.keys.accepts(`Bearer ${TKEY}`));
  t.notOk(cfg.keys.accepts(undefined));
  t.same([...(cfg.tenants.allowed('acme') ?? [])], ['brewery']);
  t.same([...(cfg.tenants.allowed('someone') ?? ['?'])], [], 'an unlisted tenant gets "*"');
  t.same(cfg.allowedHosts, ['svc.example', 'localhost']);
  t.same(cfg.allowedOrigins, ['https://app.example']);
  const open = await mcpConfigFromEnv({});
  t.equal(open.keys.required, false, 'no file: /mcp is open');
  t.equal(open.tenants.allowed('x'), undefined, 'no file: no restriction');

  const bad: Array<[string, string]> = [
    ['[{"key": "short"}]', 'SVC_MCP_TRANSPORT_KEYS_FILE'],
    ['[{"key": "has white space in it"}]', 'SVC_MCP_TRANSPORT_KEYS_FILE'],
    ['not json', 'SVC_MCP_TRANSPORT_KEYS_FILE'],
  ];
  for (const [text, name] of bad) {
    await writeFile(keys, text);
    const e = await mcpConfigFromEnv({ SVC_MCP_TRANSPORT_KEYS_FILE: keys }).then(
      () => undefined,
      (x: unknown) => x,
    );
    t.type(e, SvcFailure, `${text}: refused`);
    t.equal((e as SvcFailure).errors[0]!.code, 'mcp_config_invalid');
    t.match((e as SvcFailure).errors[0]!.message, new RegExp(name));
    t.notMatch((e as SvcFailure).errors[0]!.message, /has white space/, 'the key is not echoed');
  }
  await writeFile(tenants, '{"acme": {"apis": "brewery"}}');
  const te = await mcpConfigFromEnv({ SVC_MCP_TENANTS_FILE: tenants }).catch((x: unknown) => x);
  t.equal((te as SvcFailure).errors[0]!.code, 'mcp_config_invalid', 'a malformed tenants file');
  const missing = await mcpConfigFromEnv({ SVC_MCP_TENANTS_FILE: join(dir, 'nope.json') }).catch((x: unknown) => x);
  t.match((missing as SvcFailure).errors[0]!.message, /cannot be read/);
});

t.test('tenant names that are Object.prototype keys get the "*" scope', async (t) => {
  const scopes = new TenantScopes({ '*': { apis: ['brewery'] } });
  for (const tenant of ['constructor', 'toString', '__proto__', 'hasOwnProperty'])
    t.same([...(scopes.allowed(tenant) ?? [])], ['brewery'], `${tenant}: the "*" scope`);
  const none = new TenantScopes({ acme: { apis: [] } });
  t.equal(none.allowed('constructor'), undefined, 'no "*": not restricted, like any unlisted tenant');
});
