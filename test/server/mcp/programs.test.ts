/**
 * The svc tool and svc_run over the real json-server vendor (SPEC "MCP tools" svc and svc_run
 * rules, "Plan acceptance token", Limits "inline rows"): a clean read is dry-run and run fused
 * (rows in the same response, no pcN minted), at most 25 rows inline with a resource_link to the
 * full run, paging a whole collection with svc_run and the `more` handles, a write that is only
 * dry-run by svc (no vendor call) and performed by svc_run with its pcN, the pcN consumed,
 * unknown pcN, compile errors, wait/cancel refused, and a failing vendor.
 */
import t from 'tap';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { decode } from '@toon-format/toon';
import { call, startStack } from '../../_helpers/server.js';
import { connectMcp, errorCode, openLogical, svcMeta, textOf, type McpConn } from '../../_helpers/mcp.js';
import { startFaultVendor } from '../../_helpers/fault-vendor.js';
import { codesOf, keyOf, moreHandle, rowsOf, sc, type Row } from './_shared.js';

const stack = await startStack(t);
const BEER = { api: 'brewery', entity: 'Beer' };

/** A vendor collection read directly (no svc in between). */
async function vendor(base: string, path: string): Promise<any> {
  const res = await fetch(base + path);
  if (res.status !== 200) throw new Error(`vendor ${path} answered ${res.status}`);
  return res.json();
}

const ALL_BEERS = (await vendor(stack.vendorUrl, '/beers')) as Row[];
const svc = (c: McpConn, ref: string, program: string) => c.tool('svc', { logical_session_ref: ref, program });
const run = (c: McpConn, ref: string, run_ref: string) => c.tool('svc_run', { logical_session_ref: ref, run_ref });

/** The ids of a run snapshot read back through resources/read. */
async function readRunRows(c: McpConn, uri: string): Promise<Row[]> {
  const r = await c.client.readResource({ uri });
  const content = r.contents[0] as { text: string; mimeType?: string };
  const snap = JSON.parse(content.text) as { steps: Array<{ rows: Row[] }>; returns: string[] };
  return snap.steps[0]!.rows;
}

/** Every row a result holds: inline when it shows them all, else read back from its `full` link. */
async function allRowsOf(c: McpConn, r: CallToolResult): Promise<Row[]> {
  const s = sc(r);
  if (s.shown === undefined) return rowsOf(r);
  if (typeof s.full !== 'string') throw new Error(`a result shows ${s.shown} of ${s.count} rows and links none`);
  return readRunRows(c, s.full);
}

t.test('a clean read runs at once: rows in the same response, a more handle, no pcN', async (t) => {
  const c = await connectMcp(t, stack.url);
  const { ref } = await openLogical(c, [BEER], 'clean read');
  const r = await svc(c, ref, 'e1[name]');
  t.notOk(r.isError, textOf(r));
  const body = sc(r);
  t.equal(body.entity, 'brewery:Beer');
  t.equal(body.count, 25, 'one vendor page of 25');
  t.equal(body.total, ALL_BEERS.length, 'the vendor total');
  t.equal(body.total, 130);
  t.same(
    rowsOf(r),
    ALL_BEERS.slice(0, 25).map((b) => ({ name: b.name })),
    'the rows are the first vendor page, projected',
  );
  t.notOk('shown' in body, 'every row is inline');
  const handle = moreHandle(r);
  t.equal(handle, `${ref}_pg1`, 'the more handle is l_<token>_pg1 of this ref');
  const meta = svcMeta(r);
  t.notOk('run_ref' in meta, 'no run_ref');
  t.notOk('plan_commit_ref' in meta, 'no plan_commit_ref');
  t.notOk('dry_review' in meta, 'no review');
  t.equal(meta.mode, 'live');
  t.equal(meta.status, 'succeeded');
  t.match(meta.run_id, /^pr[0-9a-f]{64}$/);
  t.notOk(JSON.stringify(r).match(/\bpc\d+\b/), 'no pcN anywhere in the answer');
  t.equal(r.content.length, 1, 'no resource_link for 25 rows');
  const text = textOf(r);
  t.match(text, /^entity: "brewery:Beer"$/m, 'the text is TOON');
  t.match(text, /^rows\[25\]\{name\}:$/m, 'a TOON table of 25 rows');
  const decoded = decode(text) as Record<string, any>;
  t.same(decoded.rows, rowsOf(r), 'the TOON text decodes to the structured rows');
  t.equal(decoded.more, body.more);

  const key = await keyOf(stack, ref);
  const status = await call(stack.url, `/execute/${key.prompt_hash}/${key.session}/status`);
  t.same(status.body.plan_tokens, [], 'no plan token was minted on the server');
  t.equal(status.body.runs, 1, 'one run stored');
});

t.test('more than 25 rows: 25 inline and a resource_link that reads back the full run', async (t) => {
  const c = await connectMcp(t, stack.url);
  const { ref } = await openLogical(c, [BEER], 'big read');
  const r = await svc(c, ref, 'e1(limit=40)[id,name]');
  t.notOk(r.isError, textOf(r));
  const body = sc(r);
  t.equal(body.count, 40, 'the result holds 40 rows');
  t.equal(body.shown, 25, 'shows 25');
  t.equal((body.rows as Row[]).length, 25, '25 inline');
  t.same(
    body.rows,
    ALL_BEERS.slice(0, 25).map((b) => ({ id: b.id, name: b.name })),
  );
  const runId = svcMeta(r).run_id as string;
  const link = r.content.find((x) => x.type === 'resource_link');
  t.ok(link, 'a resource_link');
  t.equal(link?.uri, `svc://session/${ref}/run/${runId}`, 'to the stored run, in the short form');
  t.equal(link?.mimeType, 'application/json');
  t.equal(body.full, link?.uri, 'the structured result names it too');
  t.match(textOf(r), /full: /, 'and so does the text');
  const full = await readRunRows(c, link!.uri);
  t.same(
    full,
    ALL_BEERS.slice(0, 40).map((b) => ({ id: b.id, name: b.name })),
    'the resource holds all 40 rows',
  );
  t.equal(moreHandle(r), `${ref}_pg1`, 'and the result continues');
});

t.test('paging the whole collection with svc_run and the more handles', async (t) => {
  const c = await connectMcp(t, stack.url);
  const { ref } = await openLogical(c, [BEER], 'paging');
  let r = await svc(c, ref, 'e1[id]');
  const ids: unknown[] = rowsOf(r).map((x) => x.id);
  const handles: string[] = [];
  for (let h = moreHandle(r); h; h = moreHandle(r)) {
    t.notOk(handles.includes(h), `${h} is new`);
    handles.push(h);
    if (handles.length > 20) throw new Error('the pages never end');
    r = await run(c, ref, h);
    t.notOk(r.isError, `${h}: ${textOf(r).slice(0, 200)}`);
    t.ok(rowsOf(r).length <= 25, `${h}: at most 25 rows inline`);
    t.notOk('shown' in sc(r), `${h}: every row of the page is inline`);
    ids.push(...rowsOf(r).map((x) => x.id));
  }
  t.same(
    handles,
    [1, 2, 3, 4, 5].map((n) => `${ref}_pg${n}`),
    'five more pages after the first',
  );
  t.equal(ids.length, 130, '130 rows in all');
  t.equal(new Set(ids).size, 130, '130 distinct ids');
  t.same(
    [...ids].sort((a, b) => Number(a) - Number(b)),
    ALL_BEERS.map((b) => b.id),
    'exactly the vendor ids',
  );

  // A handle sent again (an answer lost in transit) answers the same page and the same next handle.
  const again = await run(c, ref, handles[1]!);
  const first = await run(c, ref, handles[1]!);
  t.same(rowsOf(again), rowsOf(first), 'the same page again');
  t.equal(sc(again).more, sc(first).more, 'and the same next handle');
});

t.test('paging a result of more than 25 rows a page loses no row', async (t) => {
  const c = await connectMcp(t, stack.url);
  const { ref } = await openLogical(c, [BEER], 'big pages');
  let r = await svc(c, ref, 'e1(limit=40)[id]');
  const ids: unknown[] = (await allRowsOf(c, r)).map((x) => x.id);
  let pages = 0;
  for (let h = moreHandle(r); h; h = moreHandle(r)) {
    if (++pages > 20) throw new Error('the pages never end');
    r = await run(c, ref, h);
    t.notOk(r.isError, `${h}: ${textOf(r).slice(0, 200)}`);
    t.ok(rowsOf(r).length <= 25, `${h}: at most 25 rows inline`);
    ids.push(...(await allRowsOf(c, r)).map((x) => x.id));
  }
  t.equal(new Set(ids).size, ids.length, 'no row twice');
  t.same(
    [...ids].sort((a, b) => Number(a) - Number(b)),
    ALL_BEERS.map((b) => b.id),
    'every vendor row, once',
  );
  t.ok(pages >= 5, `the 40-row pages came 25 rows at a time (${pages} pages)`);
  // A split page sent again answers the same rows and the same next handle (the chain never forks).
  const p1 = await run(c, ref, `${ref}_pg1`);
  const p1again = await run(c, ref, `${ref}_pg1`);
  t.same(rowsOf(p1again), rowsOf(p1));
  t.equal(sc(p1again).more, sc(p1).more);
  const rest = await run(c, ref, moreHandle(p1)!);
  t.same(
    rowsOf(rest).map((x) => x.id),
    ALL_BEERS.slice(65, 80).map((b) => b.id),
    'the rows held back from a split page come next, in order',
  );
});

t.test('a page handle belongs to its logical session', async (t) => {
  const c = await connectMcp(t, stack.url);
  const a = await openLogical(c, [BEER], 'handles A');
  const b = await openLogical(c, [BEER], 'handles B');
  const ra = await svc(c, a.ref, 'e1[id]');
  const h = moreHandle(ra)!;
  const foreign = await run(c, b.ref, h);
  t.equal(foreign.isError, true, "B cannot follow A's handle");
  t.equal(errorCode(foreign), 'unknown_page_handle');
  const unknown = await run(c, a.ref, `${a.ref}_pg99`);
  t.equal(errorCode(unknown), 'unknown_page_handle', 'a handle never minted');
  t.match(textOf(unknown), /more/, 'the hint says where handles come from');
  const ok = await run(c, a.ref, h);
  t.notOk(ok.isError, 'the owner can');
});

t.test('a program of two results answers both', async (t) => {
  const c = await connectMcp(t, stack.url);
  const { ref } = await openLogical(c, [BEER, { api: 'brewery', entity: 'Brewery' }], 'two');
  // Sorted seeds: Beer is e1, Brewery is e2.
  const r = await svc(c, ref, 'e2(city="Berlin")[name]\ne1(style="Stout")[name,style]');
  t.notOk(r.isError, textOf(r));
  const results = sc(r).results as Array<{ entity: string; rows: Row[] }>;
  t.same(
    results.map((x) => x.entity),
    ['brewery:Brewery', 'brewery:Beer'],
    'in program order',
  );
  const berlin = ((await vendor(stack.vendorUrl, '/breweries?city=Berlin')) as Row[]).map((b) => b.name).sort();
  t.same(results[0]!.rows.map((x) => x.name).sort(), berlin, 'the Berlin breweries of the vendor');
  t.ok(results[1]!.rows.length > 0 && results[1]!.rows.every((x) => x.style === 'Stout'));
});

t.test('a write: svc dry-runs it (no vendor call), svc_run performs it once by its pcN', async (t) => {
  const s = await startStack(t);
  const c = await connectMcp(t, s.url);
  const { ref } = await openLogical(c, [BEER], 'writes');
  const name = `MCP Test Ale ${Date.now()}`;
  const program = `m2(breweryId="b-1", name="${name}", style="IPA", abv=5.5)`;
  const count = async () => ((await vendor(s.vendorUrl, '/beers')) as Row[]).length;
  const named = async () => (await vendor(s.vendorUrl, `/beers?name=${encodeURIComponent(name)}`)) as Row[];
  const before = await count();

  const dry = await svc(c, ref, program);
  t.notOk(dry.isError, textOf(dry));
  const meta = svcMeta(dry);
  t.match(meta.run_ref, /^pc\d+$/, 'run_ref pcN in _meta.svc');
  t.equal(meta.dry_verdict, 'review', 'dry_verdict in _meta.svc');
  t.equal(meta.dry_review.verdict, 'review');
  t.equal(meta.dry_review.mutations, 1, 'one write');
  t.match(meta.dry_review.summary, /WRITE brewery:Beer createBeer/, 'the review names the write');
  t.match(meta.commit_id, /^[0-9a-f]{64}$/);
  t.equal(meta.mode, 'plan');
  t.same(sc(dry).run_ref, meta.run_ref, 'run_ref in structuredContent too');
  t.match(textOf(dry), new RegExp(`svc_run with run_ref=${meta.run_ref}`), 'the text says how to run it');
  t.notOk(sc(dry).rows, 'no rows: nothing ran');
  t.equal(await count(), before, 'the vendor was not touched');
  t.same(await named(), [], 'no such beer yet');

  const pc = meta.run_ref as string;
  const done = await run(c, ref, pc);
  t.notOk(done.isError, textOf(done));
  const rows = rowsOf(done);
  t.equal(rows.length, 1, 'the created row');
  t.equal(rows[0]!.name, name);
  t.equal(sc(done).entity, 'brewery:Beer');
  t.match(sc(done).status, /^! o\d+ succeeded/, 'the terminal line');
  t.equal(svcMeta(done).status, 'succeeded');
  t.match(svcMeta(done).run_id, /^pr[0-9a-f]{64}$/);
  t.equal(await count(), before + 1, 'the vendor has one more beer');
  const created = await named();
  t.equal(created.length, 1);
  t.equal(created[0]!.id, rows[0]!.id, 'the row svc_run answered is the one the vendor stored');

  const reused = await run(c, ref, pc);
  t.equal(reused.isError, true, 'a consumed pcN does not run again');
  t.equal(errorCode(reused), 'plan_token_consumed');
  t.match(textOf(reused), /call svc with the program again/, 'the hint says what to do');
  t.equal(await count(), before + 1, 'no second write');

  const unknown = await run(c, ref, 'pc999');
  t.equal(errorCode(unknown), 'plan_token_unknown', 'an unknown pcN');
  t.match(textOf(unknown), /call svc/);
  const malformed = await run(c, ref, 'xyz');
  t.equal(errorCode(malformed), 'bad_arguments', 'neither a pcN nor a page handle');

  // Each dry-run mints its own pcN; a pcN is bound to its logical session.
  const d1 = svcMeta(await svc(c, ref, program)).run_ref as string;
  const d2 = svcMeta(await svc(c, ref, program)).run_ref as string;
  t.not(d1, d2, 'two dry-runs, two tokens');
  const other = await openLogical(c, [BEER], 'writes elsewhere');
  const foreign = await run(c, other.ref, d1);
  t.equal(foreign.isError, true, "another logical session cannot run this session's pcN");
  t.equal(errorCode(foreign), 'plan_token_unknown');
  t.equal(await count(), before + 1, 'still no second write');
});

t.test('a read that needs review (an unbounded list) returns a pcN; svc_run runs it', async (t) => {
  const c = await connectMcp(t, stack.url);
  const { ref } = await openLogical(c, [BEER], 'unbounded');
  const dry = await svc(c, ref, 'e1(limit=2000)[id]');
  t.notOk(dry.isError, textOf(dry));
  t.equal(svcMeta(dry).dry_verdict, 'review');
  t.same(svcMeta(dry).dry_review.flow, ['unbounded_list'], 'flagged unbounded_list');
  t.equal(svcMeta(dry).dry_review.mutations, 0);
  const done = await run(c, ref, svcMeta(dry).run_ref);
  t.notOk(done.isError, textOf(done));
  t.equal(sc(done).count, 130, 'every beer');
  t.equal(rowsOf(done).length, 25, '25 inline');
  const link = done.content.find((x) => x.type === 'resource_link') as { uri: string } | undefined;
  t.ok(link, 'and a resource_link');
  const full = await readRunRows(c, link!.uri);
  t.same(
    full.map((x) => x.id),
    ALL_BEERS.map((b) => b.id),
    'the full run holds all 130',
  );
  t.notOk(moreHandle(done), 'nothing more to page');
});

t.test('compile errors: isError with code, position and hint; nothing runs', async (t) => {
  const c = await connectMcp(t, stack.url);
  const { ref } = await openLogical(c, [BEER], 'errors');
  const cases: Array<[string, string]> = [
    ['e1(nope=1)', 'unknown_argument'],
    ['e1(', 'syntax_error'],
    ['e9[name]', 'unknown_symbol'],
    ['e1(limit=0)', 'wrong_type'],
    ["e1(name='x')", 'unexpected_character'],
  ];
  for (const [program, code] of cases) {
    const r = await svc(c, ref, program);
    t.equal(r.isError, true, `${program}: isError`);
    const first = (sc(r).errors as Array<Record<string, unknown>>)[0]!;
    t.equal(errorCode(r), first.code, `${program}: the first code in _meta.svc`);
    t.equal(first.code, code, `${program}: ${code} (got ${String(first.code)})`);
    t.type(first.hint, 'string', `${program}: a hint`);
    t.type(first.line, 'number', `${program}: a line`);
    t.type(first.col, 'number', `${program}: a column`);
    t.notOk(svcMeta(r).run_ref, `${program}: no pcN`);
  }
  const many = await svc(c, ref, 'e1(nope=1)\ne9');
  t.ok(codesOf(many).length >= 2, 'every error of the program at once');
  const key = await keyOf(stack, ref);
  const status = await call(stack.url, `/execute/${key.prompt_hash}/${key.session}/status`);
  t.equal(status.body.runs, 0, 'nothing ran');
  t.same(status.body.plan_tokens, [], 'nothing was minted');
});

t.test('wait(oN) and cancel(oN) are not dispatched through MCP', async (t) => {
  const c = await connectMcp(t, stack.url);
  const { ref } = await openLogical(c, [BEER], 'continuations');
  for (const program of ['wait(o1)', 'cancel(o1)', 'wait(o1)\n']) {
    const r = await svc(c, ref, program);
    t.equal(r.isError, true, `${JSON.stringify(program)}: refused`);
    t.equal(errorCode(r), 'bad_arguments', `${JSON.stringify(program)}: bad_arguments`);
    t.match(textOf(r), /awaited|svc_run|pcN/, `${JSON.stringify(program)}: says how runs go here`);
  }
  for (const runRef of ['wait(o1)', 'o1']) {
    const r = await run(c, ref, runRef);
    t.equal(errorCode(r), 'bad_arguments', `svc_run ${runRef}: bad_arguments`);
  }
});

t.test('a failing vendor: the error comes back as isError with the vendor status; the server stays up', async (t) => {
  const v = await startFaultVendor({
    'GET /beers': { status: 500, json: { message: 'the vendor exploded' } },
    'POST /beers': { status: 503, json: { message: 'down for maintenance' } },
  });
  t.teardown(() => v.close());
  const s = await startStack(t, { vendorUrl: v.url });
  const c = await connectMcp(t, s.url);
  const { ref } = await openLogical(c, [BEER], 'failing');
  const r = await svc(c, ref, 'e1[name]');
  t.equal(r.isError, true);
  t.equal(errorCode(r), 'vendor_error');
  t.match(textOf(r), /500/, 'the vendor status');
  t.match(textOf(r), /the vendor exploded/, "the vendor's message");
  t.same(rowsOf(r), [], 'no rows');
  t.equal(svcMeta(r).status, 'failed');
  t.equal(v.hits('/beers', 'GET').length >= 1, true, 'the vendor was asked');

  const dry = await svc(c, ref, 'm2(breweryId="b-1", name="X", style="IPA", abv=5)');
  t.equal(v.hits('/beers', 'POST').length, 0, 'the dry-run sent nothing');
  const w = await run(c, ref, svcMeta(dry).run_ref);
  t.equal(w.isError, true, 'a failed write is isError');
  t.equal(errorCode(w), 'vendor_error');
  t.match(sc(w).status, /^\? o\d+ failed/, 'the terminal line says failed');
  t.equal(v.hits('/beers', 'POST').length, 1, 'one write attempt (writes are not retried)');

  const health = await call(s.url, '/v1/health');
  t.equal(health.status, 200, 'the server is up');
  const list = await c.tool('list_registry', {});
  t.notOk(list.isError, 'the connection still works');
});
