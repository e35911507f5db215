/**
 * Read-only per tenant (docs/auth.md "Read-only callers"): an app built with a tenant predicate
 * (as the credentials file will give it) and inbound auth by JWT. Tenant acme may only read (HTTP,
 * tool model, MCP svc and svc_context), globex writes; the predicate is asked on every compile, so
 * a pcN minted before a tenant became read-only is refused when it is run (HTTP and MCP svc_run).
 */
import t, { type Test } from 'tap';
import { startDemoVendor } from '../../cli/demo-vendor.js';
import { call, codeOf, openSession, runProgram, startStack } from '../_helpers/server.js';
import { connectMcp, errorCode, openLogical, svcMeta, textOf, type McpConn } from '../_helpers/mcp.js';
import { inbound, jwt, teachingRows } from './mcp/_shared.js';

const vendor = await startDemoVendor();
t.teardown(() => vendor.close());
/** initech becomes read-only when this is set (the answer may change at runtime). */
let initechFrozen = false;
const stack = await startStack(t, {
  vendorUrl: vendor.url,
  auth: inbound('required'),
  readOnly: (tenant) => tenant === 'acme' || (tenant === 'initech' && initechFrozen),
});
const BASE = stack.url;
const as = async (tenant: string) => ({ authorization: `Bearer ${await jwt(tenant)}` });
const vendorData = () => JSON.stringify(vendor.db());
const breweriesNamed = async (name: string) =>
  ((await (await fetch(`${vendor.url}/breweries?name=${encodeURIComponent(name)}`)).json()) as unknown[]).length;
const CREATE = (name: string) => `m1(name="${name}", city="Ghent", country="BE")`;
const WRITE_ROW = /\t(create|update|delete|action) /;

t.test('per tenant over HTTP: acme may only read, globex writes', async (t) => {
  const acme = await as('acme');
  const globex = await as('globex');
  const a = await openSession(BASE, { entry_id: 'brewery', seeds: ['brewery:Brewery'] }, acme);
  const g = await openSession(BASE, { entry_id: 'brewery', seeds: ['brewery:Brewery'] }, globex);
  t.notMatch(a.answer.body.wave, WRITE_ROW, "acme's wave teaches no write");
  t.match(g.answer.body.wave, WRITE_ROW, "globex's wave teaches its writes");
  const before = vendorData();
  const refused = await runProgram(BASE, a.path, CREATE('Acme Brew'), 'force=true', { headers: acme });
  t.equal(refused.status, 403, refused.text);
  t.equal(codeOf(refused), 'read_only');
  t.equal(vendorData(), before, "acme's write sent nothing");
  const read = await runProgram(BASE, a.path, 'e1(country="BE")[name]', '', { headers: acme });
  t.equal(read.status, 200, 'acme reads');
  const wrote = await runProgram(BASE, g.path, CREATE('Globex Brew'), 'force=true', { headers: globex });
  t.equal(wrote.status, 200, wrote.text);
  t.equal(await breweriesNamed('Globex Brew'), 1, "globex's write reached the vendor");

  const model = async (h: Record<string, string>) =>
    Object.values((await call(BASE, '/v1/registry/brewery/tool-model', { headers: h })).body.entities).flatMap(
      (e: any) => (e.verbs as Array<{ effect: string }>).map((v) => v.effect),
    );
  t.notOk((await model(acme)).includes('write'), "acme's tool model has no write");
  t.ok((await model(globex)).includes('write'), "globex's has");
});

/** An MCP connection signed in as `tenant`. */
async function mcpAs(t: Test, tenant: string): Promise<McpConn> {
  const c = await connectMcp(t, BASE);
  const r = await c.tool('svc_incoming_auth', { bearer_token: await jwt(tenant) });
  if (r.isError) throw new Error(textOf(r));
  return c;
}

t.test('MCP: a read-only tenant learns no write, and svc refuses one with a read_only tool error', async (t) => {
  const c = await mcpAs(t, 'acme');
  const { ref, result } = await openLogical(c, [{ api: 'brewery', entity: 'Beer' }], 'read only');
  t.ok(teachingRows(result).length > 0);
  t.notOk(
    teachingRows(result).some((r) => WRITE_ROW.test(r)),
    'svc_context teaches no write',
  );
  t.ok(
    teachingRows(result).some((r) => r.startsWith('m1(breweryId=$)[..]\tquery e1')),
    'a read behind an m# (listBreweryBeers) is still taught',
  );
  t.notOk(
    teachingRows(result).some((r) => /\bm[234]\b/.test(r)),
    'createBeer (m2), retireBeer (m3), deleteBeer (m4) are not',
  );
  t.match(textOf(result), /this session only reads/);
  const before = vendorData();
  const r = await c.tool('svc', {
    logical_session_ref: ref,
    program: 'm2(breweryId="b-1", name="X", style="IPA", abv=5)',
  });
  t.equal(errorCode(r), 'read_only', textOf(r));
  t.match(textOf(r), /brewery:createBeer/);
  t.equal(vendorData(), before, 'nothing reached the vendor');
  const read = await c.tool('svc', { logical_session_ref: ref, program: 'e1(style="IPA", limit=2)[name]' });
  t.notOk(read.isError, textOf(read));
});

t.test('a pcN minted before the tenant became read-only is refused when run', async (t) => {
  t.teardown(() => {
    initechFrozen = false;
  });
  const initech = await as('initech');
  const { path } = await openSession(BASE, { entry_id: 'brewery', seeds: ['brewery:Brewery'] }, initech);
  const dry = await runProgram(BASE, path, CREATE('Initech Brew'), 'mode=plan', { headers: initech });
  t.equal(dry.status, 200, dry.text);
  const pc = dry.body._meta.svc.plan_commit_ref as string;
  const c = await mcpAs(t, 'initech');
  const { ref } = await openLogical(c, [{ api: 'brewery', entity: 'Brewery' }], 'flip');
  const mcpDry = await c.tool('svc', { logical_session_ref: ref, program: CREATE('Initech MCP Brew') });
  t.notOk(mcpDry.isError, textOf(mcpDry));
  const runRef = svcMeta(mcpDry).run_ref as string;
  t.match(runRef, /^pc\d+$/);

  initechFrozen = true;
  const before = vendorData();
  const live = await runProgram(BASE, path, CREATE('Initech Brew'), `plan_commit_ref=${pc}`, { headers: initech });
  t.equal(live.status, 403, live.text);
  t.equal(codeOf(live), 'read_only', 'HTTP: the pcN is refused');
  const run = await c.tool('svc_run', { logical_session_ref: ref, run_ref: runRef });
  t.equal(errorCode(run), 'read_only', `MCP svc_run: ${textOf(run)}`);
  t.equal(vendorData(), before, 'nothing reached the vendor');

  initechFrozen = false;
  const again = await runProgram(BASE, path, CREATE('Initech Brew'), `plan_commit_ref=${pc}`, { headers: initech });
  t.equal(again.status, 200, 'writable again: the refused pcN was not spent');
  t.equal(await breweriesNamed('Initech Brew'), 1);
});
