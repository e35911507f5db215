/**
 * The review gate and plan acceptance tokens over real sockets (SPEC "Plan acceptance token",
 * "Execute (HTTP)" query parameters, Errors): a write run live without a token is refused; a
 * `mode=plan` dry-run makes no vendor call and mints `pcN` with its review verdict; a live run
 * with that `pcN` writes; a consumed, unknown, foreign, mismatched or expired (10 minutes, on an
 * injected clock) token is refused and writes nothing; `force=true` needs no token.
 *
 * This file writes: it has its own json-server vendor, reached by svc through a counting
 * pass-through proxy so "no vendor call" is observed on the wire. Vendor data is read directly
 * from json-server, and each test asserts changes of rows it names itself.
 */
import t, { type Test } from 'tap';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startDemoVendor } from '../../cli/demo-vendor.js';
import { PLAN_TOKEN_TTL_MS } from '../../server/execute/service.js';
import { call, codeOf, openSession, runProgram, startStack, type Answer } from '../_helpers/server.js';

const demo = await startDemoVendor();
t.teardown(() => demo.close());
const VENDOR = demo.url;

/** Every request svc sends to the vendor passes here: `METHOD /path?query`. */
const wire: string[] = [];
const proxy: Server = createServer((req, res) => {
  wire.push(`${req.method} ${req.url}`);
  const u = new URL(VENDOR);
  // The Host header is kept, so json-server's Link headers point back at the proxy.
  const up = httpRequest(
    { host: u.hostname, port: u.port, method: req.method, path: req.url, headers: req.headers },
    (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    },
  );
  up.on('error', () => {
    res.writeHead(502);
    res.end();
  });
  req.pipe(up);
});
await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
t.teardown(
  () =>
    new Promise<void>((resolve) => {
      proxy.closeAllConnections();
      proxy.close(() => resolve());
    }),
);

/** The injected clock of the svc server (token TTL, session idle time). */
let clock = Date.parse('2030-01-01T00:00:00Z');
const stack = await startStack(t, {
  vendorUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
  now: () => clock,
});
const BASE = stack.url;

type Row = Record<string, unknown>;

/** Vendor data read straight from json-server (not through the proxy). */
async function vendor(path: string): Promise<any> {
  const res = await fetch(VENDOR + path);
  if (res.status !== 200) throw new Error(`vendor ${path} answered ${res.status}`);
  return res.json();
}
const breweriesNamed = async (name: string): Promise<Row[]> => vendor(`/breweries?name=${encodeURIComponent(name)}`);
const writesOnWire = () => wire.filter((l) => !l.startsWith('GET ')).length;

async function session(): Promise<string> {
  return (await openSession(BASE, { entry_id: 'brewery', seeds: ['Brewery', 'Beer'] })).path;
}

/** A dry-run answer's token, checked to be a pcN. */
function tokenOf(t: Test, a: Answer): string {
  t.equal(a.status, 200, 'the dry-run answers 200');
  const ref = a.body._meta?.svc?.plan_commit_ref as string;
  t.match(ref, /^pc\d+$/, 'a pcN in _meta.svc.plan_commit_ref');
  return ref;
}

const create = (name: string) => `m1(name="${name}", city="Oslo", country="NO")`;

t.test('the teaching names the writes that need review by their kind', async (t) => {
  const a = await openSession(BASE, { entry_id: 'brewery', seeds: ['Brewery', 'Beer'] });
  t.match(a.answer.body.rules, /create, update, delete, action change data: dry-run/);
  const rows = (a.answer.body.wave as string).split('\n').slice(1);
  const writes = rows
    .map((r) => r.split('\t')[1]!.split(':')[0]!)
    .filter((m) => /^(create|update|delete|action) /.test(m));
  t.same(
    writes,
    ['create e1', 'update e1', 'create e2', 'action e2', 'delete e2 (returns nothing)'],
    'createBrewery, updateBrewery, createBeer, retireBeer, deleteBeer',
  );
  t.ok(
    rows.some((r) => r.startsWith('m1(name=$, city=$, country=$') && r.includes('create e1')),
    'm1 is createBrewery',
  );
  t.ok(
    rows.some((r) => r.startsWith('e1("<id>").m2(') && r.includes('update e1')),
    'm2 updates a brewery row',
  );
});

t.test('a write run live without a token is refused, with a hint naming mode=plan', async (t) => {
  const path = await session();
  const before = writesOnWire();
  const b3 = await vendor('/breweries/b-3');
  for (const [label, send] of [
    ['text body', () => runProgram(BASE, path, create('Refused Brewing'))],
    [
      'JSON body',
      () =>
        call(BASE, path, {
          body: JSON.stringify({ program: create('Refused Brewing'), wait: true }),
          type: 'application/json',
        }),
    ],
    ['wait=false', () => runProgram(BASE, path, create('Refused Brewing'), 'wait=false')],
    ['an update', () => runProgram(BASE, path, 'e1("b-3").m2(city="Bamberg")')],
    ['force=false', () => runProgram(BASE, path, create('Refused Brewing'), 'force=false')],
  ] as Array<[string, () => Promise<Answer>]>) {
    const a = await send();
    t.equal(a.status, 409, `${label}: 409`);
    t.equal(codeOf(a), 'review_required', `${label}: review_required`);
    t.match(a.body.errors[0].message, /needs review \(1 write\)/);
    t.match(a.body.errors[0].hint, /mode=plan/, `${label}: the hint names mode=plan`);
    t.match(a.body.errors[0].hint, /plan_commit_ref/);
  }
  const plain = await runProgram(BASE, path, create('Refused Brewing'), '', { accept: 'text/plain' });
  t.equal(plain.status, 409);
  t.match(plain.text, /^error review_required: .*\n {2}hint: dry-run it with mode=plan/);
  t.equal(writesOnWire(), before, 'nothing was sent to the vendor');
  t.same(await breweriesNamed('Refused Brewing'), [], 'no brewery was created');
  t.same(await vendor('/breweries/b-3'), b3, 'b-3 is unchanged');
  t.same((await call(BASE, `${path}/runs`)).body.runs, [], 'a refused run is not a run');
});

t.test('mode=plan makes no vendor call and mints pcN; the live run with it writes once', async (t) => {
  const path = await session();
  const name = 'Reviewed Brewing';
  const wireBefore = wire.length;
  const dry = await runProgram(BASE, path, create(name), 'mode=plan');
  const ref = tokenOf(t, dry);
  t.equal(wire.length, wireBefore, 'the dry-run sent no request at all to the vendor');
  t.same(await breweriesNamed(name), [], 'the vendor data is unchanged');
  const meta = dry.body._meta.svc;
  t.equal(meta.mode, 'plan');
  t.match(meta.commit_id, /^[0-9a-f]{64}$/);
  t.equal(meta.dry_verdict, 'review');
  t.match(meta.dry_review, { verdict: 'review', flow: 'clean', mutations: 1 });
  t.match(
    meta.dry_review.summary,
    `n1 WRITE brewery:Brewery createBrewery(name="${name}", city="Oslo", country="NO", kind="micro")`,
    'the review shows the catalog default',
  );
  t.match(
    dry.body.text,
    new RegExp(`^dry-run ${ref}: review, 1 write; run it with its token ${ref} within 10 minutes`),
  );
  t.notOk(dry.body.rows, 'a dry-run returns no rows');
  t.same((await call(BASE, `${path}/runs`)).body.runs, [], 'a dry-run is not a run');

  const plain = await runProgram(BASE, path, create(name), 'mode=plan', { accept: 'text/plain' });
  t.match(plain.text, /\n# plan_commit_ref: pc\d+\n/);
  t.match(plain.text, '# dry_verdict: review');
  t.match(
    plain.text,
    /^# dry_review: verdict=review flow=clean mutations=1( max_calls=1)?$/m,
    'plain text shows the review on one line (its summary is the text)',
  );
  t.notOk(plain.text.includes('"summary"'), 'not the dry_review object');

  const writes = writesOnWire();
  const live = await runProgram(BASE, path, create(name), `plan_commit_ref=${ref}`);
  t.equal(live.status, 200, 'the token lets the write run');
  t.equal(live.body._meta.svc.commit_id, meta.commit_id, 'the same plan ran');
  t.equal(live.body._meta.svc.status, 'succeeded');
  const created = await breweriesNamed(name);
  t.equal(created.length, 1, 'the vendor has the brewery');
  t.same(live.body.rows, created, 'the answer is the created row');
  t.match(created[0], { name, city: 'Oslo', country: 'NO', kind: 'micro' });
  t.same(wire.slice(-1), ['POST /breweries'], 'one POST reached the vendor');
  t.equal(writesOnWire(), writes + 1);
  const st = await call(BASE, `${path}/status`);
  t.match(
    st.body.plan_tokens.find((x: { ref: string }) => x.ref === ref),
    { commit_id: meta.commit_id, verdict: 'review', consumed: true },
  );

  const again = await runProgram(BASE, path, create(name), `plan_commit_ref=${ref}`);
  t.equal(again.status, 409);
  t.equal(codeOf(again), 'plan_token_consumed');
  t.match(again.body.errors[0].hint, /dry-run again/);
  t.equal((await breweriesNamed(name)).length, 1, 'a consumed token writes nothing');
  t.equal(writesOnWire(), writes + 1);

  // A new dry-run of the same program mints a new token that runs once more.
  const ref2 = tokenOf(t, await runProgram(BASE, path, create(name), 'mode=plan'));
  t.not(ref2, ref);
  const viaJson = await call(BASE, path, {
    body: JSON.stringify({ program: create(name), plan_commit_ref: ref2 }),
    type: 'application/json',
  });
  t.equal(viaJson.status, 200, 'plan_commit_ref in the JSON body');
  t.equal((await breweriesNamed(name)).length, 2);
});

t.test('the token belongs to the plan, not to the spelling of the program', async (t) => {
  const path = await session();
  const name = 'Spelling Brewing';
  const dry = await runProgram(BASE, path, create(name), 'mode=plan');
  const ref = tokenOf(t, dry);
  const respelled = `# the same plan\nm1( country = "NO", city="Oslo",\n  name=<<EOT\n${name}\nEOT, kind="micro")`;
  const dry2 = await runProgram(BASE, path, respelled, 'mode=plan');
  t.equal(
    dry2.body._meta.svc.commit_id,
    dry.body._meta.svc.commit_id,
    'order, spacing, heredoc and the default spelled out: one commit id',
  );
  const live = await runProgram(BASE, path, respelled, `plan_commit_ref=${ref}`);
  t.equal(live.status, 200);
  t.equal((await breweriesNamed(name)).length, 1);
});

t.test('unknown tokens, tokens of another session and of another program are refused and write nothing', async (t) => {
  const a = await session();
  const b = await session();
  const writes = writesOnWire();

  const unknown = await runProgram(BASE, a, create('Nobody Brewing'), 'plan_commit_ref=pc999');
  t.equal(unknown.status, 404);
  t.equal(codeOf(unknown), 'plan_token_unknown');
  t.match(unknown.body.errors[0].hint, /mode=plan/);

  const refB = tokenOf(t, await runProgram(BASE, b, create('Foreign Brewing'), 'mode=plan'));
  const foreign = await runProgram(BASE, a, create('Foreign Brewing'), `plan_commit_ref=${refB}`);
  t.equal(foreign.status, 404, 'tokens are per session');
  t.equal(codeOf(foreign), 'plan_token_unknown');

  const dryA = await runProgram(BASE, a, create('Planned Brewing'), 'mode=plan');
  const refA = tokenOf(t, dryA);
  const dryOther = await runProgram(BASE, a, create('Other Brewing'), 'mode=plan');
  const mismatch = await runProgram(BASE, a, create('Other Brewing'), `plan_commit_ref=${refA}`);
  t.equal(mismatch.status, 409);
  t.equal(codeOf(mismatch), 'plan_token_mismatch');
  t.match(
    mismatch.body.errors[0].message,
    (dryA.body._meta.svc.commit_id as string).slice(0, 12),
    'names the commit id of the token',
  );
  t.match(
    mismatch.body.errors[0].message,
    (dryOther.body._meta.svc.commit_id as string).slice(0, 12),
    'and that of this program',
  );
  const update = await runProgram(BASE, a, 'e1("b-6").m2(city="Elsewhere")', `plan_commit_ref=${refA}`);
  t.equal(codeOf(update), 'plan_token_mismatch', 'another capability altogether');

  t.equal(writesOnWire(), writes, 'none of them reached the vendor');
  for (const n of ['Nobody Brewing', 'Foreign Brewing', 'Other Brewing'])
    t.same(await breweriesNamed(n), [], `${n} was not created`);
  t.not((await vendor('/breweries/b-6')).city, 'Elsewhere');

  const ok = await runProgram(BASE, a, create('Planned Brewing'), `plan_commit_ref=${refA}`);
  t.equal(ok.status, 200, 'a refused mismatch does not consume the token');
  t.equal((await breweriesNamed('Planned Brewing')).length, 1);
});

t.test('a token expires 10 minutes after its dry-run (injected clock)', async (t) => {
  t.equal(PLAN_TOKEN_TTL_MS, 10 * 60 * 1000);
  const path = await session();
  const late = tokenOf(t, await runProgram(BASE, path, create('Late Brewing'), 'mode=plan'));
  const edge = tokenOf(t, await runProgram(BASE, path, create('Edge Brewing'), 'mode=plan'));
  const writes = writesOnWire();

  clock += PLAN_TOKEN_TTL_MS;
  const atEdge = await runProgram(BASE, path, create('Edge Brewing'), `plan_commit_ref=${edge}`);
  t.equal(atEdge.status, 200, 'exactly 10 minutes later the token still runs');
  t.equal((await breweriesNamed('Edge Brewing')).length, 1);

  clock += 1;
  const expired = await runProgram(BASE, path, create('Late Brewing'), `plan_commit_ref=${late}`);
  t.equal(expired.status, 410);
  t.equal(codeOf(expired), 'plan_token_expired');
  t.match(expired.body.errors[0].message, /10 minutes/);
  t.match(expired.body.errors[0].hint, /mode=plan/);
  const expiredOther = await runProgram(BASE, path, create('Not Late Brewing'), `plan_commit_ref=${late}`);
  t.equal(codeOf(expiredOther), 'plan_token_expired', 'expiry is checked before the commit id');
  t.same(await breweriesNamed('Late Brewing'), [], 'an expired token writes nothing');
  t.equal(writesOnWire(), writes + 1, 'only the write within the TTL reached the vendor');

  const fresh = tokenOf(t, await runProgram(BASE, path, create('Late Brewing'), 'mode=plan'));
  const redo = await runProgram(BASE, path, create('Late Brewing'), `plan_commit_ref=${fresh}`);
  t.equal(redo.status, 200, 'a new dry-run gives a new 10 minutes');
  t.equal((await breweriesNamed('Late Brewing')).length, 1);
});

t.test('force=true passes the gate without a token; the query wins over the JSON body', async (t) => {
  const path = await session();
  const before = await vendor('/breweries/b-5');
  const forced = await runProgram(BASE, path, 'e1("b-5").m2(city="Forceville")', 'force=true');
  t.equal(forced.status, 200);
  const after = await vendor('/breweries/b-5');
  t.equal(after.city, 'Forceville', 'the update reached the vendor');
  t.same({ ...after, city: before.city }, before, 'and changed only the city');
  t.same(forced.body.rows, [after], 'the answer is the updated row');

  const body = await call(BASE, path, {
    body: JSON.stringify({ program: create('Forced Brewing'), force: true }),
    type: 'application/json',
  });
  t.equal(body.status, 200, 'force in the JSON body');
  t.equal((await breweriesNamed('Forced Brewing')).length, 1);

  const overruled = await call(BASE, `${path}?force=false`, {
    body: JSON.stringify({ program: create('Overruled Brewing'), force: true }),
    type: 'application/json',
  });
  t.equal(overruled.status, 409, 'force=false in the query wins');
  t.equal(codeOf(overruled), 'review_required');
  t.same(await breweriesNamed('Overruled Brewing'), []);
  const winning = await call(BASE, `${path}?force=true`, {
    body: JSON.stringify({ program: create('Query Forced Brewing'), force: false }),
    type: 'application/json',
  });
  t.equal(winning.status, 200, 'force=true in the query wins');
  t.equal((await breweriesNamed('Query Forced Brewing')).length, 1);

  const bogus = await runProgram(BASE, path, create('Bogus Ref Brewing'), 'force=true&plan_commit_ref=pc999');
  t.equal(bogus.status, 404, 'with force, a plan_commit_ref that names no token is still reported');
  t.equal(codeOf(bogus), 'plan_token_unknown');
  t.same(await breweriesNamed('Bogus Ref Brewing'), [], 'and nothing is written');
  t.same((await call(BASE, `${path}/status`)).body.plan_tokens, [], 'force mints and consumes no token');
});

t.test('reads: proceed plans run at once; flow warnings need review; read tokens are not consumed', async (t) => {
  const path = await session();
  const wireBefore = wire.length;
  const dry = await runProgram(BASE, path, 'e1(city="Berlin")[name]', 'mode=plan');
  const ref = tokenOf(t, dry);
  t.equal(wire.length, wireBefore, 'a read dry-run sends nothing to the vendor either');
  t.equal(dry.body._meta.svc.dry_verdict, 'proceed');
  t.match(dry.body._meta.svc.dry_review, { verdict: 'proceed', flow: 'clean', mutations: 0 });
  t.match(dry.body.text, /it runs as is: send it again as a live program/);
  const berlin = (await vendor('/breweries?city=Berlin')).map((r: Row) => ({ name: r.name }));
  for (let i = 0; i < 2; i++) {
    const a = await runProgram(BASE, path, 'e1(city="Berlin")[name]', `plan_commit_ref=${ref}`);
    t.equal(a.status, 200, `read token, use ${i + 1}`);
    t.same(a.body.rows, berlin);
  }
  t.same((await runProgram(BASE, path, 'e1(city="Berlin")[name]')).body.rows, berlin, 'a proceed plan needs no token');

  const wide = 'e1(limit=2000)[id]';
  const refused = await runProgram(BASE, path, wide);
  t.equal(refused.status, 409);
  t.equal(codeOf(refused), 'review_required');
  t.match(refused.body.errors[0].message, /unbounded_list/);
  const wdry = await runProgram(BASE, path, wide, 'mode=plan');
  const wref = tokenOf(t, wdry);
  t.match(wdry.body._meta.svc.dry_review, { verdict: 'review', flow: ['unbounded_list'], mutations: 0 });
  const all = (await vendor('/breweries')).map((r: Row) => ({ id: r.id }));
  for (let i = 0; i < 2; i++) {
    const a = await runProgram(BASE, path, wide, `plan_commit_ref=${wref}`);
    t.equal(a.status, 200, `reviewed read, use ${i + 1}`);
    t.same(a.body.rows, all, 'every brewery');
  }
  const fan = 'b = e1(limit=30)\ne2(breweryId=b.id)[id]';
  const fdry = await runProgram(BASE, path, fan, 'mode=plan');
  t.match(fdry.body._meta.svc.dry_review, { verdict: 'review', flow: ['large_fanout'], mutations: 0 });
  t.equal(codeOf(await runProgram(BASE, path, fan)), 'review_required');
  t.match((await call(BASE, `${path}/status`)).body.plan_tokens, [
    { ref, verdict: 'proceed', consumed: false },
    { ref: wref, verdict: 'review', consumed: false },
    { verdict: 'review', consumed: false },
  ]);
});

t.test('a reviewed write in the background: wait=false with plan_commit_ref', async (t) => {
  const path = await session();
  const beer = await vendor('/beers/1');
  t.equal(beer.available, true, 'beer 1 is on sale before');
  const ref = tokenOf(t, await runProgram(BASE, path, 'e2(1).m4', 'mode=plan'));
  t.equal((await vendor('/beers/1')).available, true, 'the dry-run did not retire it');
  const started = await runProgram(BASE, path, 'e2(1).m4', `wait=false&plan_commit_ref=${ref}`);
  t.equal(started.status, 202);
  const h = started.body._meta.svc.op.n as string;
  let done: Answer | undefined;
  for (let i = 0; i < 1000 && !done; i++) {
    const w = await runProgram(BASE, path, `wait(${h})`);
    if (w.body._meta?.svc?.op?.['~'] === '!') done = w;
    else await new Promise((r) => setTimeout(r, 25));
  }
  t.ok(done, 'the operation succeeds');
  const after = await vendor('/beers/1');
  t.equal(after.available, false, 'the action reached the vendor');
  t.same(done?.body.rows, [after]);
  const again = await runProgram(BASE, path, 'e2(1).m4', `wait=false&plan_commit_ref=${ref}`);
  t.equal(codeOf(again), 'plan_token_consumed', 'the token was used by the background run');
});
