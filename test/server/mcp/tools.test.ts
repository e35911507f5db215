/**
 * The MCP tool surface (SPEC "MCP tools"): what tools/list shows with inbound auth off, optional
 * and required (svc_incoming_auth only when auth is on), the input schemas and annotations, the
 * initialize instructions (svc_context first), the size of tools/list (sent on every connection),
 * discover_capabilities and list_registry, and bad input: an unknown tool is a JSON-RPC error,
 * arguments of the wrong type are an `isError` result naming the field.
 */
import t from 'tap';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import { startStack } from '../../_helpers/server.js';
import { connectMcp, errorCode, openLogical, svcMeta, textOf } from '../../_helpers/mcp.js';
import { inbound, sc } from './_shared.js';

const BASE_TOOLS = ['discover_capabilities', 'list_registry', 'svc', 'svc_context', 'svc_run'];

const off = await startStack(t);
const optional = await startStack(t, { vendorUrl: off.vendorUrl, auth: inbound('optional') });
const required = await startStack(t, { vendorUrl: off.vendorUrl, auth: inbound('required') });

t.test('tools/list with auth off: exactly the five tools, each schema an object', async (t) => {
  const c = await connectMcp(t, off.url);
  const { tools } = await c.client.listTools();
  t.same(tools.map((x) => x.name).sort(), BASE_TOOLS, 'no svc_incoming_auth when inbound auth is off');
  t.equal(tools.length, 5);
  for (const tool of tools) {
    t.equal(tool.inputSchema.type, 'object', `${tool.name}: inputSchema.type is object`);
    t.type(tool.inputSchema.properties, 'object', `${tool.name}: has properties`);
    t.notOk('$id' in tool.inputSchema, `${tool.name}: no internal $id leaks`);
    t.ok(tool.description && tool.description.length > 10, `${tool.name}: a description`);
    t.ok(tool.annotations?.title, `${tool.name}: a title`);
  }
  const by = Object.fromEntries(tools.map((x) => [x.name, x]));
  for (const ro of ['discover_capabilities', 'list_registry', 'svc_context'])
    t.equal(by[ro]!.annotations?.readOnlyHint, true, `${ro} is readOnlyHint`);
  t.equal(by.svc_run!.annotations?.destructiveHint, true, 'svc_run is destructiveHint');
  t.equal(by.svc_run!.annotations?.readOnlyHint, false, 'svc_run is not read-only');
  t.not(by.svc!.annotations?.readOnlyHint, true, 'svc is not read-only (it runs clean reads)');
  t.same(by.svc!.inputSchema.required, ['logical_session_ref', 'program']);
  t.same(by.svc_run!.inputSchema.required, ['logical_session_ref', 'run_ref']);
  t.same(by.svc_context!.inputSchema.required, ['intent', 'seeds']);
  // The SDK's own JSON Schema validator compiles every input schema and judges real arguments.
  const sdk = new AjvJsonSchemaValidator();
  const examples: Record<string, [Record<string, unknown>, Record<string, unknown>]> = {
    svc_context: [
      { intent: 'x', seeds: [{ api: 'brewery', entity: 'Beer' }] },
      { intent: 'x', seeds: [] },
    ],
    svc: [{ logical_session_ref: 'l_a', program: 'e1[name]' }, { logical_session_ref: 'l_a' }],
    svc_run: [
      { logical_session_ref: 'l_a', run_ref: 'pc0' },
      { logical_session_ref: 'l_a', run_ref: 7 },
    ],
    discover_capabilities: [
      { query: 'beer', limit: 5 },
      { query: 'beer', limit: 500 },
    ],
    list_registry: [{}, { tag: 3 }],
  };
  for (const tool of tools) {
    const v = sdk.getValidator(tool.inputSchema);
    const [good, bad] = examples[tool.name]!;
    t.ok(v(good).valid, `${tool.name}: the SDK validator accepts ${JSON.stringify(good)}`);
    t.notOk(v(bad).valid, `${tool.name}: the SDK validator refuses ${JSON.stringify(bad)}`);
  }
  t.same(by.discover_capabilities!.inputSchema.required, ['query']);
});

t.test('tools/list with auth optional and required adds svc_incoming_auth', async (t) => {
  for (const [mode, stack] of [
    ['optional', optional],
    ['required', required],
  ] as const) {
    const c = await connectMcp(t, stack.url);
    const { tools } = await c.client.listTools();
    t.same(tools.map((x) => x.name).sort(), [...BASE_TOOLS, 'svc_incoming_auth'].sort(), `${mode}: six tools`);
    const auth = tools.find((x) => x.name === 'svc_incoming_auth')!;
    t.equal(auth.inputSchema.type, 'object', `${mode}: svc_incoming_auth schema is an object`);
    t.same(
      Object.keys(auth.inputSchema.properties ?? {}).sort(),
      ['api_key', 'bearer_token'],
      `${mode}: bearer_token and api_key`,
    );
    t.notOk(auth.inputSchema.required, `${mode}: neither is required by the schema (exactly one is, by the tool)`);
    for (const tool of tools) t.equal(tool.inputSchema.type, 'object', `${mode}: ${tool.name} schema is an object`);
  }
});

t.test('tools/list stays small: it is sent on every connection', async (t) => {
  const measure = async (url: string) => {
    const c = await connectMcp(t, url);
    return JSON.stringify(await c.client.listTools()).length;
  };
  const offSize = await measure(off.url);
  const reqSize = await measure(required.url);
  t.comment(`tools/list JSON: ${offSize} characters with auth off, ${reqSize} with auth required`);
  // Measured at 2,676 and about 3,100 characters; the bounds leave room for small edits only.
  t.ok(offSize < 3200, `tools/list with auth off is under 3,200 characters (${offSize})`);
  t.ok(reqSize < 3700, `tools/list with auth required is under 3,700 characters (${reqSize})`);
  t.ok(reqSize > offSize, 'the auth tool adds to it');
});

t.test('initialize: server info, capabilities, and instructions that put svc_context first', async (t) => {
  const c = await connectMcp(t, off.url);
  const info = c.client.getServerVersion();
  t.equal(info?.name, 'svc');
  const caps = c.client.getServerCapabilities();
  t.ok(caps?.tools, 'tools capability');
  t.ok(caps?.resources, 'resources capability');
  const ins = c.client.getInstructions() ?? '';
  t.match(ins, /svc_context first/, 'the instructions say to call svc_context first');
  const first = ['svc_context', 'svc_run', 'discover_capabilities', 'svc_incoming_auth']
    .map((n) => ({ n, at: ins.indexOf(n) }))
    .filter((x) => x.at >= 0)
    .sort((a, b) => a.at - b.at)[0];
  t.equal(first?.n, 'svc_context', 'svc_context is the first tool the instructions name');
  t.match(ins, /new_symbol_space/, 'they teach what new_symbol_space means');
  t.match(ins, /svc_run/, 'they name svc_run for writes');
  t.ok(ins.length < 1200, `the instructions are short (${ins.length} characters)`);
});

t.test('discover_capabilities finds seeds; list_registry lists the catalogs', async (t) => {
  const c = await connectMcp(t, off.url);
  const d = await c.tool('discover_capabilities', { query: 'support tickets' });
  t.notOk(d.isError);
  const entities = sc(d).entities as Array<{ seed: string; api: string; entity: string; capabilities: string[] }>;
  t.ok(entities.length > 0, 'some rows');
  t.equal(entities[0]!.seed, 'helpdesk:Ticket', 'the best match for tickets is helpdesk:Ticket');
  t.ok(entities[0]!.capabilities.includes('listTickets'));
  t.match(textOf(d), /`helpdesk:Ticket`/, 'the text shows the seed');
  for (const e of entities) t.equal(e.seed, `${e.api}:${e.entity}`, `seed ${e.seed} is api:Entity`);

  const one = await c.tool('discover_capabilities', { query: 'beer', limit: 1 });
  t.equal((sc(one).entities as unknown[]).length, 1, 'limit bounds the rows');
  t.equal((sc(one).entities as Array<{ api: string }>)[0]!.api, 'brewery');

  const r = await c.tool('list_registry', {});
  t.notOk(r.isError);
  t.same(
    (sc(r).entries as Array<{ entry_id: string }>).map((e) => e.entry_id),
    ['brewery', 'helpdesk'],
    'both catalogs',
  );
  t.match(textOf(r), /entry_id: brewery/);
  const tagged = await c.tool('list_registry', { tag: 'support' });
  t.same(
    (sc(tagged).entries as Array<{ entry_id: string }>).map((e) => e.entry_id),
    ['helpdesk'],
    'a tag filters the entries',
  );
  const none = await c.tool('list_registry', { tag: 'no-such-tag' });
  t.same(sc(none).entries, [], 'an unknown tag lists nothing');
  const noArgs = await c.client.callTool({ name: 'list_registry' });
  t.notOk(noArgs.isError, 'list_registry without arguments works');
});

t.test('an unknown tool is a JSON-RPC error (InvalidParams), not a tool result', async (t) => {
  const c = await connectMcp(t, off.url);
  for (const name of ['no_such_tool', 'svc_incoming_auth', 'SVC', 'x'.repeat(5000)]) {
    const e = await c.client.callTool({ name, arguments: {} }).then(
      () => undefined,
      (err: unknown) => err,
    );
    t.type(e, McpError, `${name.slice(0, 20)}: an McpError`);
    t.equal((e as McpError).code, ErrorCode.InvalidParams, `${name.slice(0, 20)}: InvalidParams`);
    t.match((e as McpError).message, /Unknown tool/);
    t.ok((e as McpError).message.length < 400, 'a huge name is not echoed whole');
  }
  const ok = await c.tool('list_registry', {});
  t.notOk(ok.isError, 'the connection still works');
});

t.test('arguments of the wrong type: isError bad_arguments naming the field', async (t) => {
  const c = await connectMcp(t, off.url);
  const cases: Array<[string, Record<string, unknown>, string, string]> = [
    ['svc', { logical_session_ref: 'l_abc', program: 5 }, 'program', 'bad_arguments'],
    ['svc', { logical_session_ref: 5, program: 'e1' }, 'logical_session_ref', 'bad_arguments'],
    ['svc', { logical_session_ref: 'l_abc' }, 'program', 'bad_arguments'],
    ['svc', { logical_session_ref: 'l_abc', program: 'e1', force: true }, 'force', 'bad_arguments'],
    ['svc_context', { intent: 7, seeds: [{ api: 'brewery', entity: 'Beer' }] }, 'intent', 'bad_arguments'],
    ['svc_context', { intent: 'x', seeds: 'brewery:Beer' }, 'seeds', 'bad_seed'],
    ['svc_context', { intent: 'x', seeds: [] }, 'seeds', 'bad_seed'],
    ['svc_context', { seeds: [{ api: 'brewery', entity: 'Beer' }] }, 'intent', 'bad_arguments'],
    ['svc_run', { logical_session_ref: 'l_abc', run_ref: 3 }, 'run_ref', 'bad_arguments'],
    ['svc_run', { logical_session_ref: 'l_abc' }, 'run_ref', 'bad_arguments'],
    ['discover_capabilities', { query: 'beer', limit: 'ten' }, 'limit', 'bad_arguments'],
    ['discover_capabilities', { query: 'beer', limit: 0 }, 'limit', 'bad_arguments'],
    ['discover_capabilities', { query: ['beer'] }, 'query', 'bad_arguments'],
    ['discover_capabilities', { query: 'beer', extra: 1 }, 'extra', 'bad_arguments'],
    ['list_registry', { tag: 5 }, 'tag', 'bad_arguments'],
  ];
  for (const [tool, args, field, code] of cases) {
    const r = await c.tool(tool, args);
    const what = `${tool} ${JSON.stringify(args)}`;
    t.equal(r.isError, true, `${what}: isError`);
    t.equal(errorCode(r), code, `${what}: ${code}`);
    t.match(textOf(r), new RegExp(`\`${field}\``), `${what}: names \`${field}\``);
    t.ok((sc(r).errors as Array<{ hint?: string }>)[0]?.hint, `${what}: a hint`);
    t.equal(svcMeta(r).code, code, `${what}: the code in _meta.svc`);
  }
});

t.test('tool arguments that are not an object at all', async (t) => {
  const c = await connectMcp(t, off.url);
  // The SDK client sends arguments as given; an absent object is {} on the server.
  const r = await c.client.callTool({ name: 'svc' });
  t.equal(r.isError, true);
  t.equal(errorCode(r as never), 'bad_arguments');
  const d = await c.client.callTool({ name: 'discover_capabilities' });
  t.equal(d.isError, true, 'a required query is missing');
  t.match(textOf(d as never), /`query` is required/);
});

t.test('logical_session_ref: unknown refs and malformed ones', async (t) => {
  const c = await connectMcp(t, off.url);
  const { ref } = await openLogical(c, [{ api: 'brewery', entity: 'Beer' }], 'refs');
  for (const tool of ['svc', 'svc_run']) {
    const args = (r: unknown) =>
      tool === 'svc' ? { logical_session_ref: r, program: 'e1[id]' } : { logical_session_ref: r, run_ref: 'pc0' };
    for (const unknown of ['l_NeverMinted0000', 'l_A', `l_${'z'.repeat(64)}`]) {
      const r = await c.tool(tool, args(unknown));
      t.equal(errorCode(r), 'unknown_logical_session', `${tool} ${unknown.slice(0, 20)}: unknown_logical_session`);
      t.match(textOf(r), /svc_context/, 'the hint names svc_context');
    }
    for (const malformed of ['nope', 'l_', `${ref}_pg1`, 'l_abc-def', `l_${'z'.repeat(65)}`, ` ${ref}`, 'L_abc']) {
      const r = await c.tool(tool, args(malformed));
      t.equal(errorCode(r), 'bad_arguments', `${tool} ${JSON.stringify(malformed.slice(0, 30))}: bad_arguments`);
      t.match(textOf(r), /logical_session_ref/, 'names the field');
    }
  }
  const ok = await c.tool('svc', { logical_session_ref: ref, program: 'e1[id]' });
  t.notOk(ok.isError, 'the real ref works');
});
