/**
 * svc_context (SPEC "MCP tools", svc_context rules 2-6): the primary catalog is the
 * lexicographically first api and seed order never changes the teaching; federating a new api on
 * an existing ref sends a delta wave only; seeds already taught resend nothing; continuity meta on
 * every answer; one ref per intent per transport session; recovery after a catalog reload changed
 * a pinned catalog; and tenant scopes (a disallowed api fails the whole call, opens nothing, and
 * discovery shows only what the tenant may use).
 */
import t, { type Test } from 'tap';
import { cp, mkdtemp, readFile, readdir, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { compileSource, readSourceDir, writeArtifacts } from '../../../pack/index.js';
import { promptHash } from '../../../server/execute/state.js';
import { TenantScopes, TransportKeys } from '../../../server/mcp/config.js';
import { call, PACKED, ROOT, startStack, type Stack } from '../../_helpers/server.js';
import { connectMcp, errorCode, svcMeta, textOf, type McpConn } from '../../_helpers/mcp.js';
import { continuity, inbound, KEY_ACME, keyOf, rowsOf, sc, teachingRows } from './_shared.js';

const seed = (api: string, entity: string) => ({ api, entity });
const BEER = seed('brewery', 'Beer');
const BREWERY = seed('brewery', 'Brewery');
const REVIEW = seed('brewery', 'Review');
const TICKET = seed('helpdesk', 'Ticket');
const CUSTOMER = seed('helpdesk', 'Customer');

const ctx = (c: McpConn, intent: string, seeds: Array<{ api: string; entity: string }>) =>
  c.tool('svc_context', { intent, seeds });

/** The text after the `logical_session_ref:` line (the teaching itself). */
const teachingOf = (r: CallToolResult) => textOf(r).split('\n').slice(1).join('\n');
const refOf = (r: CallToolResult) => svcMeta(r).logical_session_ref as string;

/** The e# a teaching row gives `api:Entity`. */
function entitySymbol(rows: string[], qualified: string): string {
  const row = rows.find((r) => r.split('\t')[1]?.startsWith(`${qualified}: `));
  if (!row) throw new Error(`no teaching row for ${qualified}`);
  return /^e\d+/.exec(row)![0];
}

/** Asserts the continuity block has exactly the SPEC keys for its case. */
function checkContinuity(t: Test, r: CallToolResult, recovered: boolean, fresh: boolean, what: string): void {
  const c = continuity(r);
  t.same(
    c,
    fresh
      ? { stale_binding_recovered: recovered, new_symbol_space: true, discard_cached_svc_symbols: true }
      : { stale_binding_recovered: recovered, new_symbol_space: false },
    `${what}: continuity`,
  );
  t.same(sc(r).continuity, c, `${what}: continuity in structuredContent too`);
}

const stack = await startStack(t);

t.test('seed order never changes the result: the primary catalog is the first api by name', async (t) => {
  const a = await connectMcp(t, stack.url);
  const b = await connectMcp(t, stack.url);
  const one = await ctx(a, 'order', [TICKET, BEER, CUSTOMER, BEER]);
  const two = await ctx(b, 'order', [CUSTOMER, BEER, TICKET]);
  t.notOk(one.isError, textOf(one));
  t.notOk(two.isError, textOf(two));
  t.not(refOf(one), refOf(two), 'two connections, two refs');
  t.equal(teachingOf(one), teachingOf(two), 'identical teaching text');
  t.same(svcMeta(one).entries, svcMeta(two).entries, 'identical entries');
  t.same(
    (svcMeta(one).entries as Array<{ entry_id: string }>).map((e) => e.entry_id),
    ['brewery', 'helpdesk'],
    'brewery (first by name) is primary, helpdesk federated after it',
  );
  const key = await keyOf(stack, refOf(one));
  t.equal(key.prompt_hash, promptHash('brewery', 'order'), 'the session is opened on brewery');
  const rows = teachingRows(one);
  t.equal(entitySymbol(rows, 'brewery:Beer'), 'e1', 'the primary catalog is taught first');
  t.equal(entitySymbol(rows, 'helpdesk:Customer'), 'e2', 'then helpdesk entities, by name');
  t.equal(entitySymbol(rows, 'helpdesk:Ticket'), 'e3');
  t.equal(
    rows.filter((r) => r.split('\t')[1]!.startsWith('brewery:Beer: ')).length,
    1,
    'a duplicated seed is taught once',
  );
  t.match(teachingOf(one), /^svc programs/, 'a fresh open starts with the rules');
  checkContinuity(t, one, false, true, 'fresh open');
  checkContinuity(t, two, false, true, 'fresh open (second connection)');
  // Both symbol spaces mean the same: the same program reads the same rows.
  const ra = await a.tool('svc', { logical_session_ref: refOf(one), program: 'e3(status="open")[id]' });
  const rb = await b.tool('svc', { logical_session_ref: refOf(two), program: 'e3(status="open")[id]' });
  t.notOk(ra.isError, textOf(ra));
  t.same(rowsOf(ra), rowsOf(rb), 'the same program means the same on both');
  t.ok(rowsOf(ra).length > 0);
});

t.test('a single-catalog open whose api sorts after another still opens on the first by name', async (t) => {
  const c = await connectMcp(t, stack.url);
  const r = await ctx(c, 'helpdesk only', [TICKET]);
  t.equal((await keyOf(stack, refOf(r))).prompt_hash, promptHash('helpdesk', 'helpdesk only'));
  t.same(
    (svcMeta(r).entries as Array<{ entry_id: string }>).map((e) => e.entry_id),
    ['helpdesk'],
  );
});

t.test('federating a new api on an existing ref: same ref, a delta wave only', async (t) => {
  const c = await connectMcp(t, stack.url);
  const first = await ctx(c, 'federate', [BEER]);
  const ref = refOf(first);
  const firstRows = teachingRows(first);
  t.ok(firstRows.length > 0);
  t.equal(svcMeta(first).domain_revision, 1);

  const more = await ctx(c, 'federate', [BEER, TICKET]);
  t.notOk(more.isError, textOf(more));
  t.equal(refOf(more), ref, 'the same ref');
  checkContinuity(t, more, false, false, 'federation');
  const rows = teachingRows(more);
  t.ok(rows.length > 0, 'a delta wave');
  for (const r of firstRows) t.notOk(rows.includes(r), `not sent again: ${r.slice(0, 50)}`);
  t.notMatch(teachingOf(more), /^svc programs/m, 'the rules are not sent again');
  t.ok(
    rows.some((r) => r.includes('helpdesk:Ticket: ')),
    'the new entity is taught',
  );
  t.notOk(
    rows.some((r) => r.includes('brewery:Beer: ')),
    'the loaded entity is not',
  );
  t.equal(svcMeta(more).domain_revision, 2, 'the domain revision moves');
  t.same(
    (svcMeta(more).entries as Array<{ entry_id: string }>).map((e) => e.entry_id),
    ['brewery', 'helpdesk'],
  );
  // The new symbol works; the old one still means the same.
  const ticket = entitySymbol(rows, 'helpdesk:Ticket');
  t.not(ticket, 'e1', 'the federated entity gets a new symbol');
  const tr = await c.tool('svc', { logical_session_ref: ref, program: `${ticket}(status="open")[id,status]` });
  t.notOk(tr.isError, textOf(tr));
  t.ok(rowsOf(tr).every((x) => x.status === 'open'));
  const br = await c.tool('svc', { logical_session_ref: ref, program: 'e1(style="IPA")[style]' });
  t.ok(rowsOf(br).length > 0 && rowsOf(br).every((x) => x.style === 'IPA'), 'e1 is still brewery:Beer');
});

t.test('expanding with seeds already taught resends no teaching', async (t) => {
  const c = await connectMcp(t, stack.url);
  const first = await ctx(c, 'expand', [BEER, TICKET]);
  const sent = teachingRows(first);
  const again = await ctx(c, 'expand', [TICKET, BEER]);
  t.equal(refOf(again), refOf(first), 'the same ref');
  checkContinuity(t, again, false, false, 'reuse');
  t.same(teachingRows(again), [], 'no teaching row');
  for (const r of sent) t.notOk(textOf(again).includes(r), `not resent: ${r.slice(0, 50)}`);
  t.notMatch(textOf(again), /^svc programs/m, 'no rules');
  t.ok(textOf(again).length < 300, `a short answer (${textOf(again).length} characters)`);
  t.equal(svcMeta(again).domain_revision, svcMeta(first).domain_revision, 'nothing new: the revision stays');

  // One new entity next to taught ones: only its rows.
  const plus = await ctx(c, 'expand', [BEER, REVIEW, TICKET]);
  const rows = teachingRows(plus);
  t.ok(rows.length > 0);
  for (const r of sent) t.notOk(rows.includes(r), `not resent: ${r.slice(0, 50)}`);
  t.ok(
    rows.some((r) => r.includes('brewery:Review: ')),
    'Review is taught',
  );
  t.notOk(rows.some((r) => r.includes('brewery:Beer: ') || r.includes('helpdesk:Ticket: ')));
  checkContinuity(t, plus, false, false, 'expand');
});

t.test('one ref per intent per connection: same intent reuses, another intent opens another', async (t) => {
  const c = await connectMcp(t, stack.url);
  const a1 = await ctx(c, 'intent A', [BREWERY]);
  const a2 = await ctx(c, 'intent A', [BREWERY]);
  const b1 = await ctx(c, 'intent B', [BREWERY]);
  const a3 = await ctx(c, 'intent A', [BEER]);
  t.match(refOf(a1), /^l_[A-Za-z0-9]{16}$/, 'a ref is l_ and 16 base62 characters');
  t.equal(refOf(a2), refOf(a1), 'same intent: same ref');
  t.not(refOf(b1), refOf(a1), 'another intent: another ref');
  t.equal(refOf(a3), refOf(a1), 'intent A is still bound after intent B');
  checkContinuity(t, b1, false, true, 'another intent');
  t.match(teachingOf(b1), /^svc programs/, 'another intent gets its own full teaching');
  const ka = await keyOf(stack, refOf(a1));
  const kb = await keyOf(stack, refOf(b1));
  t.not(ka.session, kb.session, 'two execute sessions');
  // Symbols of one ref do not leak into the other: e2 (Beer, taught to A only) is unknown in B.
  const inB = await c.tool('svc', { logical_session_ref: refOf(b1), program: 'e2[name]' });
  t.equal(inB.isError, true, 'e2 means nothing in B');
  const inA = await c.tool('svc', { logical_session_ref: refOf(a1), program: 'e2[name]' });
  t.notOk(inA.isError, 'e2 is Beer in A');

  const other = await connectMcp(t, stack.url);
  const elsewhere = await ctx(other, 'intent A', [BREWERY]);
  t.not(refOf(elsewhere), refOf(a1), 'another connection: its own ref for the same intent');
  checkContinuity(t, elsewhere, false, true, 'another connection');
});

t.test('seeds that name nothing fail the whole call; nothing is opened or taught', async (t) => {
  const c = await connectMcp(t, stack.url);
  const before = await stack.app.sessions.size();
  for (const seeds of [[BEER, seed('brewery', 'Nope')], [seed('nowhere', 'Beer')], [seed('brewery', '')]]) {
    const r = await ctx(c, 'bad seeds', seeds);
    t.equal(r.isError, true, JSON.stringify(seeds));
    t.ok(['bad_seed', 'bad_arguments'].includes(errorCode(r)!), `${JSON.stringify(seeds)}: ${errorCode(r)}`);
  }
  t.equal(await stack.app.sessions.size(), before, 'no session was opened');
  const ok = await ctx(c, 'bad seeds', [BEER]);
  checkContinuity(t, ok, false, true, 'the first good call opens');
  const bad = await ctx(c, 'bad seeds', [BEER, seed('brewery', 'Nope')]);
  t.equal(errorCode(bad), 'bad_seed');
  t.match(textOf(bad), /brewery has no entity/);
  t.match(textOf(bad), /Nope/);
  const again = await ctx(c, 'bad seeds', [REVIEW]);
  t.equal(refOf(again), refOf(ok), 'a failed call does not unbind the intent');
  t.equal(svcMeta(again).domain_revision, 2, 'and taught nothing (Review is revision 2)');
});

// ---------------------------------------------------------------- reload

const SECRET = 'reload-secret-mcp-7c1d9e4b2a';
const BREWERY_SRC = join(ROOT, 'fixtures', 'catalogs', 'brewery');

async function tmp(t: Test, prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Repack brewery into `dir` with a new Brewery field `taproom` (a new cgs_hash). */
async function changeBrewery(t: Test, dir: string): Promise<string> {
  for (const n of await readdir(dir)) if (n.startsWith('brewery.')) await unlink(join(dir, n));
  const src = await tmp(t, 'svc-mcp-src-');
  await cp(BREWERY_SRC, src, { recursive: true });
  const file = join(src, 'entities.yaml');
  const text = await readFile(file, 'utf8');
  const changed = text.replace(
    '      website: {type: string, description: Home page URL}\n',
    '      website: {type: string, description: Home page URL}\n      taproom: {type: string, description: Address of the taproom}\n',
  );
  t.not(changed, text, 'the test edit applied');
  await writeFile(file, changed);
  const compiled = compileSource(await readSourceDir(src));
  t.same(compiled.diagnostics, []);
  await writeArtifacts(compiled.cgs!, compiled.cgs_hash!, dir);
  return compiled.cgs_hash!;
}

t.test('after a reload changed a pinned catalog, svc_context with the same intent recovers', async (t) => {
  const dir = await tmp(t, 'svc-mcp-reload-');
  await cp(PACKED, dir, { recursive: true });
  const s: Stack = await startStack(t, { catalogDir: dir, controlPlaneSecret: SECRET, vendorUrl: stack.vendorUrl });
  const c = await connectMcp(t, s.url);
  const first = await ctx(c, 'reload', [BREWERY, BEER]);
  const oldRef = refOf(first);
  const oldHash = (svcMeta(first).entries as Array<{ cgs_hash: string }>)[0]!.cgs_hash;
  const read = await c.tool('svc', { logical_session_ref: oldRef, program: 'e2(city="Berlin")[name]' });
  t.notOk(read.isError, 'the ref works before the reload');
  t.notMatch(teachingOf(first), /taproom/);

  const newHash = await changeBrewery(t, dir);
  t.not(newHash, oldHash);
  const rl = await call(s.url, '/internal/catalog-registry/v1/reload', {
    method: 'POST',
    headers: { 'x-svc-control-plane-secret': SECRET },
  });
  t.equal(rl.status, 200, 'reloaded');

  const stale = await c.tool('svc', { logical_session_ref: oldRef, program: 'e2(city="Berlin")[name]' });
  t.equal(stale.isError, true, 'the old ref no longer runs programs');
  t.equal(errorCode(stale), 'session_stale');
  t.match(textOf(stale), /svc_context/, 'the hint names svc_context');

  const rec = await ctx(c, 'reload', [BREWERY, BEER]);
  t.notOk(rec.isError, textOf(rec));
  checkContinuity(t, rec, true, true, 'recovery');
  const newRef = refOf(rec);
  t.not(newRef, oldRef, 'a new ref');
  t.match(teachingOf(rec), /^svc programs/, 'a full teaching again (a new symbol space)');
  t.match(teachingOf(rec), /taproom/, 'the new catalog is taught');
  t.same(svcMeta(rec).entries, [{ entry_id: 'brewery', cgs_hash: newHash }], 'pinned to the new hash');
  const fresh = await c.tool('svc', { logical_session_ref: newRef, program: 'e2(city="Berlin")[name]' });
  t.notOk(fresh.isError, textOf(fresh));
  t.same(rowsOf(fresh), rowsOf(read), 'the new ref reads what the old one did');

  const again = await ctx(c, 'reload', [BEER]);
  t.equal(refOf(again), newRef, 'the intent is bound to the new ref from now on');
  checkContinuity(t, again, false, false, 'after recovery');

  const still = await c.tool('svc', { logical_session_ref: oldRef, program: 'e1[name]' });
  t.equal(errorCode(still), 'session_stale', 'the old ref stays stale');
  // What the old session ran stays readable.
  const oldRun = await c.client.readResource({
    uri: `svc://session/${oldRef}/run/${svcMeta(read).run_id as string}`,
  });
  const snap = JSON.parse((oldRun.contents[0] as { text: string }).text) as { steps: Array<{ rows: unknown[] }> };
  t.same(snap.steps[0]!.rows, rowsOf(read), 'the run of the stale session is still readable');
});

// ---------------------------------------------------------------- tenant scopes

t.test('tenant scopes: a disallowed api fails the whole call and opens nothing', async (t) => {
  const s = await startStack(t, {
    vendorUrl: stack.vendorUrl,
    mcp: { keys: new TransportKeys([]), tenants: new TenantScopes({ '': { apis: ['brewery'] } }) },
  });
  const c = await connectMcp(t, s.url);
  const before = await s.app.sessions.size();
  const denied = await ctx(c, 'scoped', [BEER, TICKET]);
  t.equal(denied.isError, true);
  t.equal(errorCode(denied), 'api_not_allowed');
  t.match(textOf(denied), /`helpdesk`/, 'names the api');
  t.match(textOf(denied), /brewery/, 'the hint names what it may use');
  t.equal(await s.app.sessions.size(), before, 'no session was opened');
  t.same(await c.client.listResources(), { resources: [] }, 'no ref is bound');

  const only = await ctx(c, 'scoped', [TICKET]);
  t.equal(errorCode(only), 'api_not_allowed', 'a helpdesk seed alone fails too');

  const ok = await ctx(c, 'scoped', [BEER]);
  t.notOk(ok.isError, textOf(ok));
  checkContinuity(t, ok, false, true, 'the allowed open');
  const ref = refOf(ok);
  const fed = await ctx(c, 'scoped', [BEER, TICKET]);
  t.equal(errorCode(fed), 'api_not_allowed', 'federating a disallowed api into a bound ref fails');
  const after = await ctx(c, 'scoped', [BEER]);
  t.equal(refOf(after), ref, 'the binding is kept');
  t.same(
    (svcMeta(after).entries as Array<{ entry_id: string }>).map((e) => e.entry_id),
    ['brewery'],
    'helpdesk was not federated',
  );
  const viaSymbol = await c.tool('svc', { logical_session_ref: ref, program: 'helpdesk:Ticket[id]' });
  t.equal(viaSymbol.isError, true, 'a qualified name of a disallowed catalog does not run');
  t.equal(errorCode(viaSymbol), 'catalog_not_in_session');

  const beers = await c.tool('discover_capabilities', { query: 'beer reviews', limit: 50 });
  const beerApis = (sc(beers).entities as Array<{ api: string }>).map((e) => e.api);
  t.ok(beerApis.length > 0, 'discovery of an allowed catalog still answers');
  t.ok(
    beerApis.every((a) => a === 'brewery'),
    `discovery shows brewery only: ${beerApis.join(',')}`,
  );
  const d = await c.tool('discover_capabilities', { query: 'support tickets customers', limit: 50 });
  t.notOk(d.isError);
  t.same(sc(d).entities, [], 'a need only a disallowed catalog meets finds nothing');
  t.notMatch(textOf(d), /helpdesk/);
  const open = await startStack(t, { vendorUrl: stack.vendorUrl });
  const oc = await connectMcp(t, open.url);
  const od = await oc.tool('discover_capabilities', { query: 'support tickets customers', limit: 50 });
  t.ok(
    (sc(od).entities as Array<{ api: string }>).some((e) => e.api === 'helpdesk'),
    'without scopes the same query finds helpdesk',
  );
  const reg = await c.tool('list_registry', {});
  t.same(
    (sc(reg).entries as Array<{ entry_id: string }>).map((e) => e.entry_id),
    ['brewery'],
    'list_registry shows brewery only',
  );
  t.notMatch(textOf(reg), /helpdesk/);
});

t.test('tenant scopes: errors about seeds do not reveal catalogs the tenant may not use', async (t) => {
  const s = await startStack(t, {
    vendorUrl: stack.vendorUrl,
    mcp: { keys: new TransportKeys([]), tenants: new TenantScopes({ '': { apis: ['brewery'] } }) },
  });
  const c = await connectMcp(t, s.url);
  const typo = await ctx(c, 'leak', [seed('helpdesk', 'Tickets')]);
  t.equal(typo.isError, true);
  t.equal(errorCode(typo), 'api_not_allowed', 'a disallowed api is refused before its entities are looked up');
  t.notMatch(textOf(typo), /helpdesk:Ticket\b/, 'no entity of a disallowed catalog is suggested');
  const unknown = await ctx(c, 'leak', [seed('nowhere', 'Beer')]);
  t.equal(unknown.isError, true);
  t.notMatch(textOf(unknown), /helpdesk/, 'an unknown api is answered without listing other catalogs');
  t.equal(errorCode(unknown), 'api_not_allowed', 'unknown and disallowed apis answer alike');
});

t.test('tenant scopes follow the authenticated tenant; unlisted tenants get "*"', async (t) => {
  const s = await startStack(t, {
    vendorUrl: stack.vendorUrl,
    auth: inbound('optional'),
    mcp: {
      keys: new TransportKeys([]),
      tenants: new TenantScopes({ acme: { apis: ['helpdesk'] }, '*': { apis: [] } }),
    },
  });
  const c = await connectMcp(t, s.url);
  const anon = await ctx(c, 'scoped', [BEER]);
  t.equal(errorCode(anon), 'api_not_allowed', 'the anonymous tenant falls under "*" (no api)');
  t.match(textOf(anon), /no catalog/);
  t.same(sc(await c.tool('list_registry', {})).entries, [], 'it lists no catalog');
  const auth = await c.tool('svc_incoming_auth', { api_key: KEY_ACME });
  t.notOk(auth.isError, textOf(auth));
  t.equal(errorCode(await ctx(c, 'scoped', [BEER])), 'api_not_allowed', 'acme may not use brewery');
  const ok = await ctx(c, 'scoped', [TICKET]);
  t.notOk(ok.isError, 'acme may use helpdesk');
  t.same(
    (sc(await c.tool('list_registry', {})).entries as Array<{ entry_id: string }>).map((e) => e.entry_id),
    ['helpdesk'],
  );
});
