/**
 * Read-only callers (docs/auth.md "Read-only callers"), with `SVC_READ_ONLY=true` read by
 * `startServe` exactly as `svc serve` reads it, next to a server without it on the same json-server
 * vendor: reads run; a plan with a write is refused with 403 `read_only` at compile time (live,
 * dry-run, qualified name, client-compiled plan) and nothing reaches the vendor; the teaching
 * table, the symbol table and the tool model show no write; a bad value stops the start.
 */
import t, { type Test } from 'tap';
import { startDemoVendor } from '../../cli/demo-vendor.js';
import { startServe } from '../../cli/commands/serve.js';
import { SvcFailure } from '../../common/errors.js';
import { compileProgram, SymbolTable, type SymbolTableJson } from '../../compiler/index.js';
import { RESOLVED_PLAN_TYPE } from '../../server/execute/resolved-plan.js';
import { readOnlyFromEnv } from '../../server/read-only-env.js';
import { call, codeOf, openSession, PACKED, runProgram, startStack, type Answer } from '../_helpers/server.js';
import { svcOnce } from '../_helpers/cli.js';
import { connectMcp, errorCode, openLogical, textOf } from '../_helpers/mcp.js';

const vendor = await startDemoVendor();
t.teardown(() => vendor.close());
const running = await startServe(
  { catalogDir: PACKED, port: 0, host: '127.0.0.1' },
  {
    SVC_READ_ONLY: 'true',
    SVC_BACKEND_URL_BREWERY: vendor.url,
    SVC_BACKEND_URL_HELPDESK: vendor.url,
    SVC_LOG_LEVEL: 'error',
  },
  () => undefined,
);
t.teardown(() => running.stop());
const ON = running.listening.url;
const OFF = (await startStack(t, { vendorUrl: vendor.url })).url;

/** The vendor's whole data, to show a refused write sent nothing. */
const vendorData = () => JSON.stringify(vendor.db());
const WRITE_ROW = /\t(create|update|delete|action) /;
const rowsOf = (wave: string) => wave.split('\n').slice(1);

async function session(base: string, seeds = ['brewery:Brewery', 'brewery:Beer']) {
  return openSession(base, { entry_id: 'brewery', seeds });
}

function refused(t: Test, a: Answer, sym: RegExp): void {
  t.equal(a.status, 403, a.text);
  t.equal(codeOf(a), 'read_only');
  const e = (a.body.errors as Array<{ message: string; hint: string }>)[0]!;
  t.match(e.message, sym, 'the message names the write');
  t.match(e.hint, /read-only: only reads run; ask the operator/);
}

t.test('SVC_READ_ONLY=true: a read runs as usual', async (t) => {
  const { path } = await session(ON);
  const a = await runProgram(ON, path, 'e2(style="IPA", limit=3)[id, name]');
  t.equal(a.status, 200, a.text);
  t.equal((a.body.rows as unknown[]).length, 3);
});

t.test('"did you mean" names no write for a read-only caller; it does for others', async (t) => {
  const hints = async (base: string, program: string) => {
    const { path } = await session(base);
    const a = await runProgram(base, path, program);
    t.equal(a.status, 400, a.text);
    return JSON.stringify(a.body.errors);
  };
  // `createBeers` is a near miss of the write `createBeer` (and of nothing that reads).
  const off = await hints(OFF, 'createBeers(name="x")');
  t.match(off, /createBeer/, 'a caller who may write is pointed at the write');
  const on = await hints(ON, 'createBeers(name="x")');
  t.notMatch(on, /createBeer`|createBeer\)/, 'a read-only caller is not');
  t.notMatch(on, /\bm\d+\b/, 'nor at an m# of a write');
  const qualified = await hints(ON, 'brewery:createBeers(name="x")');
  t.notMatch(qualified, /brewery:createBeer\b/, 'qualified names too');
});

t.test('a write is refused with 403 read_only, live and as a dry-run, and the vendor is untouched', async (t) => {
  const { path } = await session(ON);
  const before = vendorData();
  const create = 'm1(name="Read Only Brew", city="Ghent", country="BE")';
  refused(t, await runProgram(ON, path, create, 'force=true'), /`brewery:createBrewery`/);
  const dry = await runProgram(ON, path, create, 'mode=plan');
  refused(t, dry, /`brewery:createBrewery`/);
  t.notOk(JSON.stringify(dry.body).includes('plan_commit_ref'), 'a dry-run mints no pcN for a write');
  // A write after reads, on a row, by its qualified name: each is refused whole.
  refused(
    t,
    await runProgram(ON, path, 'x = e2(style="IPA", limit=2)[id]\nx.m4', 'force=true'),
    /`brewery:retireBeer`/,
  );
  refused(t, await runProgram(ON, path, 'brewery:deleteBeer(id=3)', 'force=true'), /brewery:deleteBeer/);
  t.equal(vendorData(), before, 'nothing reached the vendor');
  t.equal((await call(ON, `${path}/status`)).body.runs, 0, 'no run was recorded');
  // The same program on the server without SVC_READ_ONLY dry-runs to a pcN.
  const off = await session(OFF);
  const offDry = await runProgram(OFF, off.path, create, 'mode=plan');
  t.equal(offDry.status, 200, offDry.text);
  t.match(offDry.body._meta.svc.plan_commit_ref, /^pc\d+$/);
});

t.test('the teaching table, its rules and the symbol table show no write', async (t) => {
  const on = await session(ON);
  const off = await session(OFF);
  const offRows = rowsOf(off.answer.body.wave as string);
  t.ok(
    offRows.some((r) => WRITE_ROW.test(r)),
    'without SVC_READ_ONLY the wave teaches writes',
  );
  t.same(
    rowsOf(on.answer.body.wave as string),
    offRows.filter((r) => !WRITE_ROW.test(r)),
    'every read row, no write',
  );
  t.match(on.answer.body.rules, /this session only reads/);
  t.notMatch(on.answer.text, /create, update, delete, action/, 'the rules name no write');
  t.notMatch(on.answer.body.wave, /\bm\d+/, 'brewery has no read behind an m#: the wave names none');
  const onSym = (await call(ON, `${on.path}/symbols`)).body;
  const offSym = (await call(OFF, `${off.path}/symbols`)).body;
  t.equal(offSym.capabilities.length, 5, 'createBrewery, updateBrewery, createBeer, retireBeer, deleteBeer');
  t.same(onSym.capabilities, [], 'brewery has no read behind an m#: none is listed');
  t.same(onSym.entities, offSym.entities);
  t.same(onSym.relations, offSym.relations);
  t.notMatch(onSym.teaching, WRITE_ROW);
  // A delta wave (another entity) teaches no write either.
  const delta = await call(ON, `${on.path}/context`, {
    body: JSON.stringify({ seeds: ['brewery:Review'] }),
    type: 'application/json',
  });
  t.equal(delta.status, 200, delta.text);
  t.match(delta.body.wave, /brewery:Review/);
  t.notMatch(delta.body.wave, WRITE_ROW, 'no createReview row');
  t.notMatch((await call(ON, `${on.path}/symbols`)).body.teaching, WRITE_ROW);
});

t.test('the tool model of a read-only caller has no write', async (t) => {
  const on = (await call(ON, '/v1/registry/brewery/tool-model')).body;
  const off = (await call(OFF, '/v1/registry/brewery/tool-model')).body;
  const verbs = (m: any) => Object.values(m.entities).flatMap((e: any) => e.verbs as Array<{ effect: string }>);
  t.ok(verbs(off).some((v) => v.effect === 'write'));
  t.ok(verbs(on).length > 0 && verbs(on).every((v) => v.effect === 'read'), 'reads only');
  t.same(
    verbs(on),
    verbs(off).filter((v) => v.effect === 'read'),
  );
  const lines = Object.values(on.entities).flatMap((e: any) => e.domain_lines as string[]);
  t.notMatch(lines.join('\n'), /\[write|^(create|update|delete|action) /m);
  t.same(Object.keys(on.domain.model.kinds), ['query', 'get', 'search']);
  t.equal(on.overview.verb_count, verbs(on).length);
  t.equal(on.read_only, true);
  t.equal(off.read_only, undefined);
  t.match(on.execute.review_gate, /read_only/);
});

t.test('a client-compiled plan with a write is refused with read_only; a read runs', async (t) => {
  const { path } = await session(ON);
  const symbols = SymbolTable.fromJSON((await call(ON, `${path}/symbols`)).body as unknown as SymbolTableJson);
  const compile = (program: string) => {
    const c = compileProgram(program, { registry: running.app.registry, symbols });
    if (c.kind !== 'plan') throw new Error(JSON.stringify(c.diagnostics));
    return c.plan;
  };
  const send = (plan: unknown) =>
    call(ON, `${path}/plan?force=true`, { method: 'POST', body: JSON.stringify({ plan }), type: RESOLVED_PLAN_TYPE });
  const before = vendorData();
  refused(
    t,
    await send(compile('brewery:createBrewery(name="Plan Brew", city="Ghent", country="BE")')),
    /`brewery:createBrewery`/,
  );
  t.equal(vendorData(), before, 'nothing reached the vendor');
  const read = await send(compile('e2(style="IPA", limit=2)[id]'));
  t.equal(read.status, 200, read.text);
});

t.test('MCP: the svc tool answers a write with a read_only tool error', async (t) => {
  const c = await connectMcp(t, ON);
  const { ref, result } = await openLogical(c, [{ api: 'brewery', entity: 'Brewery' }], 'read only');
  t.notMatch(textOf(result), WRITE_ROW, 'svc_context teaches no write');
  const before = vendorData();
  const r = await c.tool('svc', { logical_session_ref: ref, program: 'e1("b-1").m2(name="Renamed")' });
  t.ok(r.isError);
  t.equal(errorCode(r), 'read_only', textOf(r));
  t.match(textOf(r), /brewery:updateBrewery/);
  t.equal(vendorData(), before, 'nothing reached the vendor');
});

t.test('discovery lists no write capability for a read-only caller (HTTP and MCP)', async (t) => {
  const caps = async (base: string) => {
    const a = await call(base, '/v1/discover?q=create%20beer&limit=5');
    t.equal(a.status, 200, a.text);
    const rows = a.body.rows as Array<{ seed: string; capabilities: string[] }>;
    return rows.find((r) => r.seed === 'brewery:Beer')?.capabilities ?? [];
  };
  const off = await caps(OFF);
  t.ok(off.includes('createBeer'), `others see the writes: ${off.join(', ')}`);
  const on = await caps(ON);
  t.ok(on.length > 0 && !on.includes('createBeer'), `the reads only: ${on.join(', ')}`);
  t.same(
    on,
    off.filter((c) => !/^(create|update|delete|retire)/.test(c)),
    'the same reads',
  );
  const c = await connectMcp(t, ON);
  const r = await c.tool('discover_capabilities', { query: 'create beer', limit: 5 });
  t.notOk(r.isError, textOf(r));
  t.notMatch(textOf(r), /createBeer/, 'MCP discovery neither');
  t.match(textOf(r), /brewery:Beer/);
});

t.test('SVC_READ_ONLY takes true or false; anything else stops the start with bad_arguments', async (t) => {
  t.equal(readOnlyFromEnv({}), undefined, 'unset: nobody');
  t.equal(readOnlyFromEnv({ SVC_READ_ONLY: 'false' }), undefined);
  t.equal(readOnlyFromEnv({ SVC_READ_ONLY: 'true' })?.('anyone'), true);
  const acme = (tenant: string) => tenant === 'acme';
  t.equal(readOnlyFromEnv({ SVC_READ_ONLY: 'false' }, acme), acme, 'off: the per-tenant predicate');
  t.equal(readOnlyFromEnv({ SVC_READ_ONLY: 'true' }, acme)?.('globex'), true, 'on: every tenant');
  const err = await startServe({ catalogDir: PACKED, port: 0, host: '127.0.0.1' }, { SVC_READ_ONLY: 'maybe' }, () => {
    throw new Error('nothing is printed');
  }).catch((e: unknown) => e);
  t.ok(err instanceof SvcFailure);
  t.equal((err as SvcFailure).errors[0]?.code, 'bad_arguments');
  t.match((err as SvcFailure).errors[0]?.message, /^SVC_READ_ONLY="maybe" is not true or false$/);
  const r = await svcOnce(t, ['serve', '--catalog-dir', PACKED, '--port', '0'], { SVC_READ_ONLY: 'yes' });
  t.not(r.code, 0);
  t.match(r.stderr, /^bad_arguments: SVC_READ_ONLY="yes" is not true or false/m);
  t.notMatch(r.stdout, /listening/);
});
