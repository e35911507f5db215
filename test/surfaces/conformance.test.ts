/**
 * Surface conformance: every scenario is written once against the `Driver` / `Session` interface of
 * drivers.ts and run through both surfaces of the one execute core, HTTP (`/execute/...` over
 * fetch) and MCP (`/mcp` with the official SDK client), against the same real server and the real
 * json-server demo vendor. The answers are normalized (rows, codes, commit ids, verdicts) and
 * compared with t.same; each scenario also checks its own expectation (vendor truth, documented
 * codes and statuses), so two surfaces that agree on a wrong answer still fail.
 *
 * SPEC.md: "Plan commit id", "MCP tools", "Plan acceptance token"; docs/http.md.
 */
import t, { type Test } from 'tap';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call, startStack } from '../_helpers/server.js';
import { startFaultVendor } from '../_helpers/fault-vendor.js';
import type { McpConn } from '../_helpers/mcp.js';
import { inboundAuthFromEnv } from '../../server/auth/inbound.js';
import {
  failure,
  httpDriver,
  mcpDriver,
  show,
  view,
  type DryRun,
  type Driver,
  type Reply,
  type Row,
  type Session,
  type Surface,
} from './drivers.js';

const TEN_MINUTES = 10 * 60 * 1000;

// ---------------------------------------------------------------- the shared stack

/** The app's clock: real time plus `skew` (scenario 5 moves it past the plan token lifetime). */
let skew = 0;
const stack = await startStack(t, { now: () => Date.now() + skew });
const drivers: Driver[] = [httpDriver(stack.url), await mcpDriver(t, stack.url)];

type Both<T> = Record<Surface, T>;

/** Runs `fn` through each driver in turn (HTTP first, then MCP). */
async function both<T>(list: Driver[], fn: (d: Driver) => Promise<T>): Promise<Both<T>> {
  const out: Partial<Both<T>> = {};
  for (const d of list) out[d.surface] = await fn(d);
  return out as Both<T>;
}

/** Opens a session or fails the test with the surface's answer. */
async function open(t: Test, d: Driver, seeds: string[], intent: string): Promise<Session> {
  const o = await d.open(seeds, intent);
  if (!o.session) {
    t.fail(`${d.surface}: opening ${seeds.join(', ')} failed: ${show(o.reply)}`);
    throw new Error('no session');
  }
  return o.session;
}

/** JSON of the demo vendor (json-server), read directly: the truth both surfaces must match. */
async function vendor<T = Row[]>(base: string, path: string): Promise<T> {
  const res = await fetch(base + path);
  if (!res.ok) throw new Error(`vendor ${path}: ${res.status}`);
  return (await res.json()) as T;
}

const pick = (rows: Row[], fields: string[]): Row[] =>
  rows.map((r) => Object.fromEntries(fields.filter((f) => f in r).map((f) => [f, r[f]])));
const byId = (a: Row, b: Row) => String(a.id).localeCompare(String(b.id), 'en', { numeric: true });
const omit = (rows: Row[], field: string): Row[] =>
  rows.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => k !== field)));

/** Per-surface check that an answer succeeded, with the answer in the message. */
function ok(t: Test, r: Reply, what: string): void {
  t.ok(r.ok, `${r.surface}: ${what} succeeds`, { found: show(r) });
}

/** Per-surface check of a refusal: not ok, this code, and on HTTP this status. */
function refused(t: Test, r: Reply, code: string, status: number, what: string): void {
  t.same(
    { ok: r.ok, code: r.code ?? null, status: r.surface === 'http' ? r.status : status },
    { ok: false, code, status },
    `${r.surface}: ${what} is refused with ${code}${r.surface === 'http' ? ` (${status})` : ' (isError)'}`,
    { found: show(r) },
  );
}

// ---------------------------------------------------------------- 1. read

t.test('1. read: the same program yields the same rows and the same commit id', async (t) => {
  const program = '{{brewery:Beer}}(style="IPA")[id,name]';
  const truth = pick(await vendor(stack.vendorUrl, '/beers?style=IPA'), ['id', 'name']);
  t.ok(truth.length > 0 && truth.length <= 25, 'the demo vendor has a few IPAs (fits one page, inline on MCP)');

  const out = await both(drivers, async (d) => {
    const s = await open(t, d, ['brewery:Brewery', 'brewery:Beer'], 'conformance read');
    t.comment(`${d.surface}: ${s.program(program)}`);
    return { s, r: await s.read(program) };
  });

  for (const { r } of Object.values(out)) {
    ok(t, r, 'the read');
    t.same(r.blocks[0]?.rows, truth, `${r.surface}: rows are the vendor's IPAs`);
    t.match(r.commit_id, /^[0-9a-f]{64}$/, `${r.surface}: _meta.svc.commit_id is a sha256`);
    t.equal(r.meta.mode, 'live', `${r.surface}: the read ran live`);
    t.notOk(r.meta.run_ref ?? r.meta.plan_commit_ref, `${r.surface}: a clean read mints no token`);
  }
  t.same(view(out.http.r), view(out.mcp.r), 'both surfaces answer the same rows, counts and commit id');
  t.equal(out.http.r.commit_id, out.mcp.r.commit_id, 'the same commit id on both surfaces');
  t.same(
    out.http.s.symbols.coverage(),
    out.mcp.s.symbols.coverage(),
    'both teach the same entities, capabilities and rows (symbol numbers aside)',
  );
  t.same(out.http.s.entries, out.mcp.s.entries, 'both pin the same catalog hash');

  // The HTTP dry-run of the same program names the same commit (MCP fuses a clean read, so it has none).
  const dry = await out.http.s.dryRun(program);
  t.same(
    { verdict: dry.verdict, commit_id: dry.commit_id },
    { verdict: 'proceed', commit_id: out.mcp.r.commit_id },
    'the HTTP dry-run of the read names the commit id MCP ran',
  );
});

// ---------------------------------------------------------------- 2. relations

t.test('2. relation traversal: the same rows', async (t) => {
  const one = '{{brewery:Brewery}}("b-1").beers[id,name,breweryId]';
  const fan = 'b = {{brewery:Brewery}}(country="DE")[id]\nb.beers[id,name,breweryId]';
  const truthOne = pick(await vendor(stack.vendorUrl, '/breweries/b-1/beers'), ['id', 'name', 'breweryId']);
  const de = new Set((await vendor(stack.vendorUrl, '/breweries?country=DE')).map((b) => b.id));
  const truthFan = pick(
    (await vendor(stack.vendorUrl, '/beers')).filter((b) => de.has(b.breweryId)),
    ['id', 'name', 'breweryId'],
  ).sort(byId);
  t.ok(truthOne.length > 0 && truthFan.length > 0 && truthFan.length <= 25, 'the vendor has rows to traverse');

  const out = await both(drivers, async (d) => {
    const s = await open(t, d, ['brewery:Brewery', 'brewery:Beer'], 'conformance relations');
    return { one: await s.read(one), fan: await s.read(fan) };
  });
  for (const { one: r1, fan: r2 } of Object.values(out)) {
    ok(t, r1, 'Brewery("b-1").beers');
    t.same(r1.blocks[0]?.rows, truthOne, `${r1.surface}: the beers of b-1`);
    ok(t, r2, 'the fan-out over German breweries');
    t.same([...(r2.blocks[0]?.rows ?? [])].sort(byId), truthFan, `${r2.surface}: the beers of the German breweries`);
  }
  t.same(view(out.http.one), view(out.mcp.one), 'relation: same rows and commit id on both surfaces');
  t.same(view(out.http.fan), view(out.mcp.fan), 'fan-out: same rows, order and commit id on both surfaces');
});

// ---------------------------------------------------------------- 3. paging

t.test('3. paging through a whole collection: the same ids', async (t) => {
  const all = (await vendor(stack.vendorUrl, '/beers')).map((b) => b.id);
  t.equal(all.length, 130, 'the demo vendor has 130 beers');

  const out = await both(drivers, async (d) => {
    const s = await open(t, d, ['brewery:Beer'], 'conformance paging');
    const pages: Reply[] = [await s.read('{{brewery:Beer}}[id]')];
    const handles: string[] = [];
    for (let next = pages[0]!.blocks[0]?.next; next && pages.length < 20; next = pages.at(-1)!.blocks[0]?.next) {
      handles.push(next);
      pages.push(await s.page(next));
    }
    // A handle sent again answers the same page and the same next handle (the chain never forks).
    const again = handles.length ? await s.page(handles[0]!) : undefined;
    return { s, pages, handles, again };
  });

  const ids: Partial<Both<unknown[]>> = {};
  for (const [surface, { s, pages, handles, again }] of Object.entries(out) as Array<[Surface, (typeof out)['http']]>) {
    t.ok(
      pages.every((p) => p.ok),
      `${surface}: every page succeeds`,
      { found: pages.filter((p) => !p.ok).map(show) },
    );
    const got = pages.flatMap((p) => p.blocks[0]?.rows ?? []).map((r) => r.id);
    ids[surface] = got;
    t.equal(got.length, 130, `${surface}: 130 rows over ${pages.length} pages`);
    t.same(
      [...got].sort((a, b) => Number(a) - Number(b)),
      all,
      `${surface}: every beer once`,
    );
    const form = surface === 'http' ? /^pg\d+$/ : new RegExp(`^${s.address}_pg\\d+$`);
    t.ok(
      handles.length > 0 && handles.every((h) => form.test(h)),
      `${surface}: page handles have the documented form`,
      { found: handles },
    );
    t.same(
      again && { rows: again.blocks[0]?.rows, next: again.blocks[0]?.next },
      { rows: pages[1]?.blocks[0]?.rows, next: pages[1]?.blocks[0]?.next },
      `${surface}: a handle sent again answers the same page and the same next handle`,
    );
  }
  t.same(ids.http, ids.mcp, 'the same ids in the same order on both surfaces');
  t.same(
    out.http.pages.map((p) => p.blocks[0]?.count),
    out.mcp.pages.map((p) => p.blocks[0]?.count),
    'the same page sizes on both surfaces',
  );
  t.same(
    out.http.pages.map((p) => p.blocks[0]?.total ?? null),
    out.mcp.pages.map((p) => p.blocks[0]?.total ?? null),
    'the same totals on both surfaces',
  );
});

// ---------------------------------------------------------------- 4. reviewed write

const WRITE = '{{create brewery:Brewery}}(name="Conformance Brew", city="Oslo", country="NO")';
/** Breweries of this name at a vendor (default: the shared stack's). */
const named = async (name: string, base = stack.vendorUrl) =>
  (await vendor(base, `/breweries?name=${encodeURIComponent(name)}`)).length;

t.test('4. reviewed write with a token: same commit id and verdict, one vendor row each', async (t) => {
  const out = await both(drivers, async (d) => {
    const s = await open(t, d, ['brewery:Brewery'], 'conformance write');
    const before = await named('Conformance Brew');
    const dry = await s.dryRun(WRITE);
    const afterDry = await named('Conformance Brew');
    const run = dry.ref ? await s.run(dry.ref) : undefined;
    const afterRun = await named('Conformance Brew');
    return { dry, run, before, afterDry, afterRun };
  });

  for (const [surface, o] of Object.entries(out) as Array<[Surface, (typeof out)['http']]>) {
    ok(t, o.dry, 'the dry-run');
    t.match(o.dry.ref, /^pc\d+$/, `${surface}: the dry-run mints a pcN`);
    t.equal(o.dry.verdict, 'review', `${surface}: a write needs review`);
    t.equal(o.afterDry, o.before, `${surface}: the dry-run calls no vendor`);
    if (!o.run) continue;
    ok(t, o.run, 'the live run by token');
    t.equal(o.afterRun, o.before + 1, `${surface}: the run created one row in the vendor`);
    const row = o.run.blocks[0]?.rows[0];
    t.match(row, { name: 'Conformance Brew', city: 'Oslo', country: 'NO', kind: 'micro' }, `${surface}: the row`);
    const stored = row?.id ? await vendor<Row>(stack.vendorUrl, `/breweries/${String(row.id)}`) : undefined;
    t.same(stored, row, `${surface}: the vendor holds the row the run returned`);
    // A live run names the commit it ran, as the HTTP docs say for waited live runs and as a fused read does on MCP.
    t.same(
      { mode: o.run.meta.mode ?? null, commit_id: o.run.commit_id ?? null },
      { mode: 'live', commit_id: o.dry.commit_id },
      `${surface}: the live run reports mode live and the commit id of its dry-run`,
    );
  }
  t.equal(out.http.dry.commit_id, out.mcp.dry.commit_id, 'the same commit id for the same program on both surfaces');
  t.same(
    { verdict: out.http.dry.verdict, review: out.http.dry.review },
    { verdict: out.mcp.dry.verdict, review: out.mcp.dry.review },
    'the same verdict and review on both surfaces',
  );
  const runView = (r?: Reply) =>
    r && { ok: r.ok, code: r.code ?? null, blocks: r.blocks.map((b) => ({ ...b, rows: omit(b.rows, 'id') })) };
  t.same(runView(out.http.run), runView(out.mcp.run), 'the same live answer on both surfaces (vendor ids aside)');
});

// ---------------------------------------------------------------- 5. consumed and expired tokens

t.test('5. tokens: a used write token is consumed, an old one expired, on both surfaces', async (t) => {
  const name = 'Conformance Token Brew';
  const write = `{{create brewery:Brewery}}(name="${name}", city="Bergen", country="NO")`;
  const sessions = await both(drivers, (d) => open(t, d, ['brewery:Brewery', 'brewery:Beer'], 'conformance tokens'));
  const session = (d: Driver) => sessions[d.surface];

  // Consumed: run once, then the same token again.
  const used = await both(drivers, async (d) => {
    const dry = await session(d).dryRun(write);
    const first = await session(d).run(dry.ref!);
    const again = await session(d).run(dry.ref!);
    return { dry, first, again };
  });
  for (const { first, again } of Object.values(used)) {
    ok(t, first, 'the first run of the token');
    refused(t, again, 'plan_token_consumed', 409, 'the token used again');
  }
  t.same(failure(used.http.again), failure(used.mcp.again), 'the same refusal of a consumed token on both surfaces');
  t.equal(await named(name), 2, 'one vendor row per surface: the reused token created nothing');

  // A token of a read (flow warning unbounded_list) has no write: it is not consumed on either surface.
  const read = '{{brewery:Beer}}(limit=2000)[id]';
  const reads = await both(drivers, async (d) => {
    const dry = await session(d).dryRun(read);
    return { dry, first: await session(d).run(dry.ref!), again: await session(d).run(dry.ref!) };
  });
  for (const { dry, first, again } of Object.values(reads)) {
    t.same(
      { verdict: dry.verdict, flow: dry.review?.flow },
      { verdict: 'review', flow: ['unbounded_list'] },
      `${dry.surface}: limit=2000 needs review`,
    );
    ok(t, first, 'the first run of a read token');
    ok(t, again, 'the second run of a read token');
    t.equal(again.blocks[0]?.count, 130, `${again.surface}: the read token ran again in full`);
  }
  t.equal(reads.http.dry.commit_id, reads.mcp.dry.commit_id, 'the read: the same commit id on both surfaces');
  t.same(
    [failure(reads.http.first), failure(reads.http.again)],
    [failure(reads.mcp.first), failure(reads.mcp.again)],
    'a read token runs twice on both surfaces',
  );

  // Expired: minted now, run after the plan token lifetime (the app's clock moves, nothing sleeps).
  const minted = await both(drivers, (d) => session(d).dryRun(write));
  for (const dry of Object.values(minted)) t.match(dry.ref, /^pc\d+$/, `${dry.surface}: a fresh token`);
  skew += TEN_MINUTES + 60_000;
  const late = await both(drivers, (d) => session(d).run(minted[d.surface].ref!));
  for (const r of Object.values(late)) refused(t, r, 'plan_token_expired', 410, 'a token older than 10 minutes');
  t.same(failure(late.http), failure(late.mcp), 'the same refusal of an expired token on both surfaces');
  t.equal(await named(name), 2, 'the expired tokens created nothing');
});

// ---------------------------------------------------------------- 6. federation

t.test('6. federation: brewery then helpdesk seeds, programs over both catalogs', async (t) => {
  const program =
    '{{brewery:Brewery}}(country="DE")[id,name]\n{{helpdesk:Ticket}}(status="open", priority="high")[id,subject]';
  const breweries = pick(await vendor(stack.vendorUrl, '/breweries?country=DE'), ['id', 'name']);
  const tickets = pick(await vendor(stack.vendorUrl, '/tickets?status=open&priority=high'), ['id', 'subject']);

  const out = await both(drivers, async (d) => {
    const s = await open(t, d, ['brewery:Brewery'], 'conformance federation');
    const before = await s.read('{{brewery:Brewery}}(country="DE")[id,name]');
    const ctx = await s.context(['helpdesk:Ticket']);
    return { s, before, ctx, r: await s.read(program) };
  });
  for (const { s, before, ctx, r } of Object.values(out)) {
    ok(t, before, 'a brewery read before the federation');
    ok(t, ctx, 'adding the helpdesk seed');
    t.same(
      s.entries.map((e) => e.entry_id).sort(),
      ['brewery', 'helpdesk'],
      `${s.surface}: the session pins both catalogs`,
    );
    ok(t, r, 'a program over both catalogs');
    t.same(
      r.blocks.map((b) => [b.entity, b.rows]),
      [
        ['brewery:Brewery', breweries],
        ['helpdesk:Ticket', tickets],
      ],
      `${s.surface}: the rows of both catalogs`,
    );
  }
  t.same(
    out.mcp.ctx.meta.continuity,
    { stale_binding_recovered: false, new_symbol_space: false },
    'mcp: the same logical session was extended (no new symbol space)',
  );
  t.same(out.http.s.entries, out.mcp.s.entries, 'the same pinned catalogs and hashes on both surfaces');
  t.same(
    out.http.s.symbols.coverage(),
    out.mcp.s.symbols.coverage(),
    'the same teaching (entities, capabilities, rows) on both surfaces',
  );
  t.same(view(out.http.before), view(out.mcp.before), 'before: the same answer on both surfaces');
  t.same(view(out.http.r), view(out.mcp.r), 'federated: the same rows and commit id on both surfaces');
});

// ---------------------------------------------------------------- 7 and 8: inbound auth

const KEYS = [
  { key: 'key-acme-conformance-4f9c2a7e1b', tenant_id: 'acme', subject: 'ci-bot' },
  { key: 'key-globex-conformance-8d1e5c3a90', tenant_id: 'globex', subject: 'ops' },
];
const [ACME, GLOBEX] = KEYS.map((k) => k.key) as [string, string];

async function authStack(t: Test) {
  const dir = await mkdtemp(join(tmpdir(), 'svc-conformance-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'keys.json');
  await writeFile(file, JSON.stringify(KEYS));
  const auth = await inboundAuthFromEnv({ SVC_INCOMING_AUTH_MODE: 'required', SVC_AUTH_API_KEYS_FILE: file });
  return startStack(t, { auth });
}

t.test('7. auth required: refused before authentication, working after, on both surfaces', async (t) => {
  const s = await authStack(t);
  const list: Driver[] = [httpDriver(s.url), await mcpDriver(t, s.url)];
  const program = '{{brewery:Brewery}}(country="DE")[id,name]';

  const out = await both(list, async (d) => {
    const anonymous = await d.open(['brewery:Brewery'], 'conformance auth');
    const wrongKey = await d.authenticate('key-nobody-0000000000');
    const goodKey = await d.authenticate(ACME);
    const session = await open(t, d, ['brewery:Brewery'], 'conformance auth');
    return { anonymous, wrongKey, goodKey, read: await session.read(program) };
  });
  for (const o of Object.values(out)) {
    refused(t, o.anonymous.reply, 'auth_required', 401, 'opening a session without credentials');
    t.notOk(o.anonymous.session, `${o.anonymous.reply.surface}: no session without credentials`);
    refused(t, o.wrongKey, 'auth_unknown_key', 401, 'an unknown API key');
    ok(t, o.goodKey, 'authenticating with a known API key');
    ok(t, o.read, 'a read after authentication');
  }
  t.same(failure(out.http.anonymous.reply), failure(out.mcp.anonymous.reply), 'the same code without credentials');
  t.same(failure(out.http.wrongKey), failure(out.mcp.wrongKey), 'the same code for an unknown key');
  t.same(view(out.http.read), view(out.mcp.read), 'authenticated: the same rows and commit id on both surfaces');
});

t.test('8. tenant crossing: a session of tenant A is refused to tenant B on both surfaces', async (t) => {
  const s = await authStack(t);
  const owners: Driver[] = [httpDriver(s.url), await mcpDriver(t, s.url)];
  const others: Driver[] = [httpDriver(s.url), await mcpDriver(t, s.url)];
  for (const d of owners) ok(t, await d.authenticate(ACME), `${d.surface}: acme authenticates`);
  for (const d of others) ok(t, await d.authenticate(GLOBEX), `${d.surface}: globex authenticates`);
  const other = (surface: Surface) => others.find((d) => d.surface === surface)!;
  const name = 'Conformance Tenant Brew';
  const write = `{{create brewery:Brewery}}(name="${name}", city="Tromso", country="NO")`;
  const read = '{{brewery:Brewery}}[id,name]';

  const out = await both(owners, async (d) => {
    const mine = await open(t, d, ['brewery:Brewery'], 'conformance tenants');
    const own = await mine.read(read);
    const dry: DryRun = await mine.dryRun(write);
    const theirs = other(d.surface).adopt(mine);
    const crossRead = await theirs.read(read);
    const handle = own.blocks[0]?.next ?? 'pg1';
    const beforeCross = await named(name, s.vendorUrl);
    const crossRun = await theirs.run(dry.ref!);
    const crossPage = await theirs.page(handle);
    const afterCross = await named(name, s.vendorUrl);
    const ownRun = await mine.run(dry.ref!);
    const ownPage = await mine.page(handle);
    const afterOwn = await named(name, s.vendorUrl);
    return {
      address: mine.address,
      own,
      handle,
      crossRead,
      crossRun,
      crossPage,
      ownRun,
      ownPage,
      beforeCross,
      afterCross,
      afterOwn,
    };
  });
  for (const o of Object.values(out)) {
    ok(t, o.own, "the owner's read");
    t.ok(o.own.blocks[0]?.next, `${o.own.surface}: the owner's read has a page handle`);
    refused(t, o.crossRead, 'forbidden', 403, "another tenant's read on the session");
    refused(t, o.crossRun, 'forbidden', 403, "another tenant's run of the session's token");
    refused(t, o.crossPage, 'forbidden', 403, "another tenant's page handle of the session");
    t.equal(o.afterCross, o.beforeCross, `${o.own.surface}: the refused run created nothing`);
    ok(t, o.ownRun, 'the owner runs its token afterwards (the refusal did not spend it)');
    ok(t, o.ownPage, 'the owner continues its page handle afterwards');
    t.equal(o.afterOwn, o.beforeCross + 1, `${o.own.surface}: the owner's run created the row`);
  }
  t.same(failure(out.http.crossRead), failure(out.mcp.crossRead), 'read: the same refusal on both surfaces');
  t.same(failure(out.http.crossRun), failure(out.mcp.crossRun), 'run: the same refusal on both surfaces');
  t.same(failure(out.http.crossPage), failure(out.mcp.crossPage), 'page: the same refusal on both surfaces');
  // The HTTP owner's write ran before the MCP owner's read, so the vendor's total grew by one in between.
  const firstPage = (r: Reply) => ({ ...view(r), blocks: r.blocks.map((b) => [b.entity, b.count, b.rows]) });
  t.same(firstPage(out.http.own), firstPage(out.mcp.own), "the owner's read: the same first page on both surfaces");

  // A stored run of acme's HTTP session: acme reads it over HTTP and as an MCP resource; globex on neither.
  const runId = String(out.http.own.meta.run_id);
  const [ph, sid] = out.http.address.split('/').slice(2);
  const artifact = async (key: string) =>
    (await call(s.url, `${out.http.address}/artifacts/${runId}`, { headers: { 'x-api-key': key } })).status;
  const resource = (d: Driver) =>
    (d as Driver & { conn: McpConn }).conn.client.readResource({ uri: `svc://execute/${ph}/${sid}/run/${runId}` }).then(
      (r) =>
        (JSON.parse(String((r.contents[0] as { text?: string }).text)).plan_commit_id as string | undefined) ?? 'read',
      () => 'refused',
    );
  t.same(
    {
      http: { owner: await artifact(ACME), other: await artifact(GLOBEX) },
      mcp: { owner: await resource(owners[1]!), other: await resource(others[1]!) },
    },
    {
      http: { owner: 200, other: 403 },
      mcp: { owner: out.http.own.commit_id, other: 'refused' },
    },
    'a stored run is readable by its tenant on both surfaces, and by no other tenant',
  );
});

// ---------------------------------------------------------------- 9. vendor failure

t.test('9. vendor failure: the same error code on both surfaces', async (t) => {
  // 25 breweries in pages of 10 with Link headers (as json-server answers); page 2 fails while `failing`.
  const breweries = Array.from({ length: 25 }, (_, i) => ({
    id: `f-${i + 1}`,
    name: `Fault Brewery ${i + 1}`,
    city: 'Faultville',
    country: 'DE',
    kind: 'micro',
  }));
  let failing = false;
  const fault = await startFaultVendor({
    'GET /beers': { status: 500, json: { message: 'the vendor broke' } },
    'POST /breweries': { status: 500, json: { message: 'the vendor broke' } },
    'GET /breweries': (req) => {
      const page = Number(req.query.get('_page') ?? 1);
      const size = Number(req.query.get('_limit') ?? 10);
      if (failing && page > 1) return { status: 500, json: { message: 'the vendor broke' } };
      const headers: Record<string, string> = { 'x-total-count': String(breweries.length) };
      if (page * size < breweries.length)
        headers.link = `<http://${req.headers.host}/breweries?_page=${page + 1}&_limit=${size}>; rel="next"`;
      return { json: breweries.slice((page - 1) * size, page * size), headers };
    },
  });
  t.teardown(() => fault.close());
  const s = await startStack(t, { vendorUrl: fault.url });
  const list: Driver[] = [httpDriver(s.url), await mcpDriver(t, s.url)];

  const out = await both(list, async (d) => {
    const session = await open(t, d, ['brewery:Brewery', 'brewery:Beer'], 'conformance vendor failure');
    // A clean read the vendor answers with 500.
    const before = fault.hits('/beers').length;
    const read = await session.read('{{brewery:Beer}}(style="IPA")[id,name]');
    const calls = fault.hits('/beers').length - before;
    // A page continuation that fails, then the same handle again once the vendor is back.
    const first = await session.read('{{brewery:Brewery}}[id,name]');
    failing = true;
    const broken = first.blocks[0]?.next ? await session.page(first.blocks[0].next) : undefined;
    failing = false;
    const retried = first.blocks[0]?.next ? await session.page(first.blocks[0].next) : undefined;
    // A reviewed program whose read succeeds and whose write the vendor refuses: the rows read come
    // back with the error (the read's page handle works), and the token is spent all the same.
    const dry = await session.dryRun(
      '{{brewery:Brewery}}[id,name]\n{{create brewery:Brewery}}(name="Doomed Brew", city="Oslo", country="NO")',
    );
    const write = await session.run(dry.ref!);
    const again = await session.run(dry.ref!);
    const after = write.blocks[0]?.next ? await session.page(write.blocks[0].next) : undefined;
    return { read, calls, first, broken, retried, dry, write, again, after };
  });
  for (const [surface, o] of Object.entries(out) as Array<[Surface, (typeof out)['http']]>) {
    refused(t, o.read, 'vendor_error', 502, 'a read the vendor answers with 500');
    t.equal(o.calls, 1, `${surface}: one vendor call (a 500 is not retried)`);
    t.match(o.read.commit_id, /^[0-9a-f]{64}$/, `${surface}: the failed run names its commit id`);
    ok(t, o.first, 'the first page');
    t.ok(o.first.blocks[0]?.next, `${surface}: the first page has a page handle`);
    refused(t, o.broken!, 'vendor_error', 502, 'a page continuation the vendor answers with 500');
    ok(t, o.retried!, 'the same page handle once the vendor is back');
    t.same(o.retried?.blocks[0]?.rows, pick(breweries.slice(10, 20), ['id', 'name']), `${surface}: page 2`);
    ok(t, o.dry, 'the dry-run of the write');
    refused(t, o.write, 'vendor_error', 502, 'a write the vendor answers with 500');
    t.equal(o.write.commit_id, o.dry.commit_id, `${surface}: the failed write names the commit id of its dry-run`);
    t.same(
      o.write.blocks.map((b) => [b.entity, b.rows]),
      [
        ['brewery:Brewery', pick(breweries.slice(0, 10), ['id', 'name'])],
        ['brewery:Brewery', []],
      ],
      `${surface}: the rows read before the failed write come back with the error`,
    );
    refused(t, o.again, 'plan_token_consumed', 409, 'the token of a failed write used again');
    t.same(
      o.after?.blocks[0]?.rows,
      pick(breweries.slice(10, 20), ['id', 'name']),
      `${surface}: the page handle of the partly failed run continues`,
    );
  }
  t.equal(fault.hits('/breweries', 'POST').length, 2, 'one POST per surface: the spent tokens sent nothing');
  t.same(failure(out.http.read), failure(out.mcp.read), 'read: the same error codes on both surfaces');
  t.same(view(out.http.read), view(out.mcp.read), 'read: the same failed answer (rows, codes, commit id)');
  t.same(failure(out.http.broken!), failure(out.mcp.broken!), 'page: the same error codes on both surfaces');
  t.same(view(out.http.broken!), view(out.mcp.broken!), 'page: the same failed answer on both surfaces');
  t.same(view(out.http.retried!), view(out.mcp.retried!), 'page retried: the same rows on both surfaces');
  t.same(view(out.http.write), view(out.mcp.write), 'write: the same failed answer (rows, codes, commit id)');
  t.same(failure(out.http.again), failure(out.mcp.again), 'write token reused: the same refusal on both surfaces');
  t.same(view(out.http.after!), view(out.mcp.after!), 'the next page after the failed run: the same on both surfaces');
});
