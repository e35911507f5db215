/**
 * Resolved-plan execute over real sockets (SPEC "Resolved-plan execute"; docs/operations.md):
 * `POST /execute/{ph}/{s}/plan` with `application/vnd.svc.resolved-plan+json` and a plan the client
 * compiled itself with the compiler and the session's symbols. A good plan runs (waited or with
 * wait=false) and yields the vendor's rows under the same commit id as the program; a tampered plan
 * (a changed step, a relabelled write, a stale pcN) is refused with a code and sends nothing; a plan
 * for a catalog digest the server does not hold says to refresh the context; a plan failing the
 * JSON Schema is a 400; a write needing review is refused without plan_commit_ref or force.
 */
import t, { type Test } from 'tap';
import { compileProgram, SymbolTable, type Plan, type SymbolTableJson } from '../../compiler/index.js';
import { RESOLVED_PLAN_TYPE } from '../../server/execute/resolved-plan.js';
import { call, codeOf, openSession, runProgram, startStack, type Answer, type CallInit } from '../_helpers/server.js';

const stack = await startStack(t);
const BASE = stack.url;
const VENDOR = stack.vendorUrl;
const registry = stack.app.registry;

// ---------------------------------------------------------------- helpers

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

interface Client {
  path: string;
  /** Compile a program locally with the session's symbols (as the terminal does). */
  compile(program: string): { plan: Plan; commit_id: string };
}

/** Open a session on `entry` and fetch its symbols for local compiling. */
async function client(entry = 'brewery'): Promise<Client> {
  const { path } = await openSession(BASE, { entry_id: entry });
  const sym = await call(BASE, `${path}/symbols`);
  if (sym.status !== 200) throw new Error(`symbols: ${sym.status} ${sym.text}`);
  const symbols = SymbolTable.fromJSON(sym.body as unknown as SymbolTableJson);
  return {
    path,
    compile(program) {
      const c = compileProgram(program, { registry, symbols });
      if (c.kind !== 'plan') throw new Error(`${program} did not compile: ${JSON.stringify(c.diagnostics)}`);
      return { plan: c.plan, commit_id: c.commit_id };
    },
  };
}

/** POST a resolved-plan body. */
function sendPlan(path: string, body: unknown, query = '', init: CallInit = {}): Promise<Answer> {
  return call(BASE, `${path}/plan${query ? `?${query}` : ''}`, {
    method: 'POST',
    body: typeof body === 'string' ? body : JSON.stringify(body),
    type: RESOLVED_PLAN_TYPE,
    ...init,
  });
}

/** A deep copy to tamper with. */
const copy = <T>(v: T): T => structuredClone(v);

async function vendorJson(path: string): Promise<Array<Record<string, unknown>>> {
  const r = await fetch(VENDOR + path);
  if (!r.ok) throw new Error(`vendor ${path}: ${r.status}`);
  return (await r.json()) as Array<Record<string, unknown>>;
}

/** Runs recorded by a session (a refused plan adds none). */
async function runsOf(path: string): Promise<number> {
  return (await call(BASE, `${path}/status`)).body.runs as number;
}

/** Breweries the vendor holds with this name. */
const breweriesNamed = (name: string) => vendorJson(`/breweries?name=${encodeURIComponent(name)}`);

const IPA = 'e2(style="IPA", limit=100)[id,name,style]';
const WRITE = (name: string) => `m1(name="${name}", city="Ghent", country="BE")`;

// ---------------------------------------------------------------- good plans

t.test("a client-compiled plan runs and returns the vendor's rows", async (t) => {
  const c = await client();
  const { plan, commit_id } = c.compile(IPA);
  const a = await sendPlan(c.path, { plan, program: IPA });
  t.equal(a.status, 200, a.text.slice(0, 200));
  const direct = await vendorJson('/beers?style=IPA');
  t.ok(direct.length > 0, 'the vendor has IPAs');
  t.same(
    a.body.rows,
    direct.map((b) => ({ id: b.id, name: b.name, style: b.style })),
    "the rows are the vendor's IPAs, projected",
  );
  t.equal(a.body.entity, 'brewery:Beer');
  t.equal(a.body._meta.svc.commit_id, commit_id, "the server's commit id is the client's");
  t.equal(a.body._meta.svc.status, 'succeeded');
  const runId = a.body._meta.svc.run_id as string;
  t.match(runId, /^pr[0-9a-f]{64}$/);
  const art = await call(BASE, `${c.path}/artifacts/${runId}`);
  t.equal(art.status, 200);
  t.equal(art.body.program, IPA, 'the program text is stored with the run');
  t.equal(art.body.plan_commit_id, commit_id);

  // The same program through the program route: same commit id, same rows.
  const p = await runProgram(BASE, c.path, IPA);
  t.equal(p.status, 200);
  t.equal(p.body._meta.svc.commit_id, commit_id, 'program and plan routes agree on the commit id');
  t.same(p.body.rows, a.body.rows, 'and on the rows');

  // The plan name and summary are not hashed: a plan without them is the same plan.
  const bare = copy(plan) as unknown as Record<string, unknown>;
  delete bare.summary;
  delete bare.name;
  const b = await sendPlan(c.path, { plan: bare });
  t.equal(b.status, 200);
  t.equal(b.body._meta.svc.commit_id, commit_id, 'name and summary do not change the commit id');
});

t.test('a multi-step plan (relation fan-out) runs', async (t) => {
  const c = await client();
  const { plan } = c.compile('b = e1(country="DE")[id]\nb.r1[name]');
  t.equal(plan.steps.length, 2);
  const a = await sendPlan(c.path, { plan });
  t.equal(a.status, 200, a.text.slice(0, 200));
  const de = await vendorJson('/breweries?country=DE');
  const beers = (await Promise.all(de.map((b) => vendorJson(`/breweries/${b.id}/beers`)))).flat();
  t.ok(beers.length > 0);
  t.same(
    a.body.rows,
    beers.map((b) => ({ name: b.name })),
    'the beers of the German breweries',
  );
});

t.test('a resolved plan with wait=false starts an operation', async (t) => {
  const c = await client();
  const { plan, commit_id } = c.compile(IPA);
  for (const [how, query, body] of [
    ['query', 'wait=false', { plan }],
    ['body', '', { plan, wait: false }],
  ] as const) {
    const acc = await sendPlan(c.path, body, query);
    t.equal(acc.status, 202, `wait=false in the ${how}: 202`);
    const op = acc.body._meta.svc.op as { n: string; '~': string; s: string; l: string };
    t.equal(op['~'], '+', 'sign +');
    t.match(op.l, new RegExp(`^\\+ ${op.n} started: .*wait\\(${op.n}\\)`), 'the accept line carries wait(oN)');
    t.equal(acc.body._meta.svc.commit_id, commit_id);
    let end: Answer | undefined;
    for (let i = 0; i < 400 && !end; i++) {
      const w = await runProgram(BASE, c.path, `wait(${op.n})`);
      if (w.status !== 200) throw new Error(`wait: ${w.status} ${w.text}`);
      if (['!', 'x', '?'].includes(w.body._meta.svc.op['~'])) end = w;
      else await sleep(25);
    }
    if (!end) throw new Error(`${op.n} did not end`);
    t.equal(end.body._meta.svc.op['~'], '!', `${how}: succeeded`);
    const direct = await vendorJson('/beers?style=IPA');
    t.same(
      end.body.rows,
      direct.map((b) => ({ id: b.id, name: b.name, style: b.style })),
      `${how}: the vendor's rows`,
    );
  }
});

t.test('mode=plan on a resolved plan dry-runs and mints a pcN', async (t) => {
  const c = await client();
  const { plan, commit_id } = c.compile(IPA);
  const before = await runsOf(c.path);
  const a = await sendPlan(c.path, { plan }, 'mode=plan');
  t.equal(a.status, 200);
  t.match(a.body._meta.svc.plan_commit_ref, /^pc\d+$/, 'a pcN');
  t.equal(a.body._meta.svc.commit_id, commit_id);
  t.equal(a.body._meta.svc.dry_verdict, 'proceed');
  t.notOk(a.body.rows, 'no rows: nothing ran');
  t.equal(await runsOf(c.path), before, 'no run was recorded');
  const body = await sendPlan(c.path, { plan, mode: 'plan' });
  t.match(body.body._meta.svc.plan_commit_ref, /^pc\d+$/, 'mode in the body works too');
});

// ---------------------------------------------------------------- writes and the review gate

t.test('a write plan needing review is refused without plan_commit_ref or force', async (t) => {
  const c = await client();
  const name = 'Resolved Plan Brewing';
  const { plan, commit_id } = c.compile(WRITE(name));
  const total = (await vendorJson('/breweries')).length;

  for (const [label, query] of [
    ['waited', ''],
    ['wait=false', 'wait=false'],
  ] as const) {
    const a = await sendPlan(c.path, { plan }, query);
    t.equal(a.status, 409, `${label}: 409`);
    t.equal(codeOf(a), 'review_required', `${label}: review_required`);
    t.match(a.body.errors[0].hint, /plan_commit_ref|force/, `${label}: the hint says how to accept it`);
    t.notOk(a.body._meta?.svc?.op, `${label}: no operation was started`);
  }
  // A client cannot vouch for its own plan: the summary is recomputed by the server.
  const lying = { ...copy(plan), summary: { verdict: 'proceed', flow: 'clean', mutations: 0, text: '' } };
  const l = await sendPlan(c.path, { plan: lying });
  t.equal(codeOf(l), 'review_required', 'a plan claiming `proceed` in its summary still needs review');
  t.equal((await vendorJson('/breweries')).length, total, 'the vendor was not written');

  // Dry-run, then accept with the pcN.
  const dry = await sendPlan(c.path, { plan }, 'mode=plan');
  t.equal(dry.body._meta.svc.dry_verdict, 'review');
  t.equal(dry.body._meta.svc.dry_review.mutations, 1);
  const ref = dry.body._meta.svc.plan_commit_ref as string;
  const ok = await sendPlan(c.path, { plan, plan_commit_ref: ref });
  t.equal(ok.status, 200, ok.text.slice(0, 200));
  t.equal(ok.body._meta.svc.commit_id, commit_id);
  t.equal((await breweriesNamed(name)).length, 1, 'the brewery was created');
  const again = await sendPlan(c.path, { plan }, `plan_commit_ref=${ref}`);
  t.equal(again.status, 409);
  t.equal(codeOf(again), 'plan_token_consumed', 'the pcN of a write runs once');
  t.equal((await breweriesNamed(name)).length, 1, 'no second brewery');

  // force=true bypasses the gate.
  const forced = c.compile(WRITE(`${name} Forced`));
  const f = await sendPlan(c.path, { plan: forced.plan }, 'force=true');
  t.equal(f.status, 200);
  t.equal((await breweriesNamed(`${name} Forced`)).length, 1, 'force=true ran the write');

  // A pcN minted by the program route accepts the same plan sent resolved (same commit id).
  const viaProgram = c.compile(WRITE(`${name} Cross`));
  const pd = await runProgram(BASE, c.path, WRITE(`${name} Cross`), 'mode=plan');
  t.equal(pd.body._meta.svc.commit_id, viaProgram.commit_id);
  const cross = await sendPlan(c.path, { plan: viaProgram.plan, plan_commit_ref: pd.body._meta.svc.plan_commit_ref });
  t.equal(cross.status, 200, 'a pcN of the program route accepts the resolved plan');
  t.equal((await breweriesNamed(`${name} Cross`)).length, 1);
});

// ---------------------------------------------------------------- tampered plans

t.test('a tampered plan is refused with a code and sends nothing', async (t) => {
  const c = await client();
  const name = 'Tampered Brewing';
  const write = c.compile(WRITE(name)).plan;
  const read = c.compile(IPA).plan;
  const total = (await vendorJson('/breweries')).length;
  const runs = await runsOf(c.path);

  const cases: Array<{ label: string; plan: Plan; code: string; message: RegExp }> = [];
  const tamper = (
    label: string,
    base: Plan,
    code: string,
    message: RegExp,
    change: (p: Plan & Record<string, any>) => void,
  ) => {
    const p = copy(base) as Plan & Record<string, any>;
    change(p);
    cases.push({ label, plan: p, code, message });
  };
  tamper(
    'a write relabelled as a read',
    write,
    'bad_arguments',
    /cannot relabel a write|is a write, the plan says read/,
    (p) => {
      p.steps[0]!.effect = 'read';
    },
  );
  tamper('a create relabelled as a query', write, 'bad_arguments', /is a create, not a query/, (p) => {
    p.steps[0]!.op = 'query';
    p.steps[0]!.effect = 'read';
  });
  tamper('a capability of another entity', read, 'bad_arguments', /is about Brewery, not Beer/, (p) => {
    p.steps[0]!.capability = 'listBreweries';
    p.steps[0]!.args = {};
  });
  tamper('an unknown capability', read, 'bad_arguments', /has no capability `dropBeers`/, (p) => {
    p.steps[0]!.capability = 'dropBeers';
  });
  tamper('an argument the capability does not take', read, 'bad_arguments', /takes no argument `owner`/, (p) => {
    p.steps[0]!.args.owner = { lit: 'x' };
  });
  tamper('an argument of the wrong type', read, 'bad_arguments', /`available` does not fit its type boolean/, (p) => {
    p.steps[0]!.args.available = { lit: 'yes' };
  });
  tamper('a required argument removed', write, 'bad_arguments', /needs `city`/, (p) => {
    delete p.steps[0]!.args.city;
  });
  tamper('an unknown projected field', read, 'bad_arguments', /projects unknown fields colour/, (p) => {
    p.steps[0]!.projection = ['id', 'colour'];
  });
  tamper('a sort by a field the list does not sort by', read, 'bad_arguments', /does not sort by `colour`/, (p) => {
    p.steps[0]!.sort = { field: 'colour', order: 'desc' };
  });
  tamper('a sort on a write', write, 'bad_arguments', /`createBrewery` does not sort/, (p) => {
    p.steps[0]!.sort = { field: 'name', order: 'asc' };
  });
  tamper('steps renumbered', read, 'bad_arguments', /numbered n1, n2/, (p) => {
    p.steps[0]!.id = 'n2';
    p.return = ['n2'];
  });
  tamper('a dependency on a later step', read, 'bad_arguments', /not an earlier step/, (p) => {
    p.steps[0]!.depends_on = ['n1'];
  });
  tamper('a return naming no step', read, 'bad_arguments', /unknown step n9/, (p) => {
    p.return = ['n9'];
  });
  tamper('a limit raised past the review bound', read, 'review_required', /needs review \(unbounded_list\)/, (p) => {
    p.steps[0]!.limit = 5000;
  });
  tamper(
    'a limit past what any program may ask',
    read,
    'bad_arguments',
    /asks for 20000 rows; the limit is 10000/,
    (p) => {
      p.steps[0]!.limit = 20000;
    },
  );
  const fan = c.compile('b = e1(country="DE")[id]\nb.beers[name]').plan;
  tamper(
    'a fan-out raised past its limit',
    fan,
    'bad_arguments',
    /fans out over at most 100000 rows; the limit is 50/,
    (p) => {
      p.steps.find((x: { fanout?: unknown }) => x.fanout)!.fanout!.max = 100000;
    },
  );

  for (const k of cases) {
    const a = await sendPlan(c.path, { plan: k.plan });
    t.equal(codeOf(a), k.code, `${k.label}: ${k.code}`);
    t.equal(a.status, k.code === 'review_required' ? 409 : 400, `${k.label}: status`);
    t.match(
      a.body.errors?.map((e: { message: string }) => e.message).join('\n'),
      k.message,
      `${k.label}: the message says what is wrong`,
    );
    t.notOk(a.body.rows, `${k.label}: no rows`);
  }
  t.equal(await runsOf(c.path), runs, 'no tampered plan ran');
  t.equal((await breweriesNamed(name)).length, 0, 'the relabelled write reached nothing');
  t.equal((await vendorJson('/breweries')).length, total, 'the vendor was not written');
});

t.test('a pcN does not accept a changed plan (commit id mismatch)', async (t) => {
  const c = await client();
  const name = 'Mismatch Brewing';
  const { plan } = c.compile(WRITE(name));
  const dry = await sendPlan(c.path, { plan }, 'mode=plan');
  const ref = dry.body._meta.svc.plan_commit_ref as string;
  t.match(ref, /^pc\d+$/);

  const changed = copy(plan);
  changed.steps[0]!.args.name = { lit: `${name} Evil` };
  const a = await sendPlan(c.path, { plan: changed, plan_commit_ref: ref });
  t.equal(a.status, 409);
  t.equal(codeOf(a), 'plan_token_mismatch', 'the pcN was minted for another commit id');
  t.equal((await breweriesNamed(`${name} Evil`)).length, 0, 'the changed write did not run');

  // A read plan changed after its dry-run: same refusal.
  const big = c.compile('e2(style="IPA", limit=2000)[id]');
  const dry2 = await sendPlan(c.path, { plan: big.plan }, 'mode=plan');
  t.equal(dry2.body._meta.svc.dry_verdict, 'review', 'an unbounded read needs review');
  const other = copy(big.plan);
  other.steps[0]!.args.style = { lit: 'Stout' };
  const b = await sendPlan(c.path, { plan: other }, `plan_commit_ref=${dry2.body._meta.svc.plan_commit_ref}`);
  t.equal(codeOf(b), 'plan_token_mismatch');

  // The untouched plan is still accepted by its pcN.
  const good = await sendPlan(c.path, { plan, plan_commit_ref: ref });
  t.equal(good.status, 200);
  t.equal((await breweriesNamed(name)).length, 1);
  const unknownRef = await sendPlan(c.path, { plan, plan_commit_ref: 'pc999' });
  t.equal(codeOf(unknownRef), 'plan_token_unknown');
});

// ---------------------------------------------------------------- catalog digests

t.test('a plan for a catalog digest the server does not hold: catalog_mismatch, refresh the context', async (t) => {
  const c = await client();
  const { plan } = c.compile(IPA);
  const stale = copy(plan);
  stale.steps[0]!.cgs_hash = 'f'.repeat(64);
  const a = await sendPlan(c.path, { plan: stale });
  t.equal(a.status, 409);
  t.equal(codeOf(a), 'catalog_mismatch');
  t.match(a.body.errors[0].hint, /refresh the context/, 'the hint says to refresh the context');
  t.match(a.body.errors[0].message, /ffffffffffff/, 'the message names the digest the plan was compiled against');

  const unknownApi = copy(plan);
  unknownApi.steps[0]!.api = 'nosuch';
  const b = await sendPlan(c.path, { plan: unknownApi });
  t.equal(codeOf(b), 'catalog_mismatch', 'an unknown catalog too');
  t.match(b.body.errors[0].message, /no such catalog/);

  // A catalog the server holds but this session has not loaded.
  const help = await client('helpdesk');
  const hp = help.compile('e1[id]').plan;
  t.equal(hp.steps[0]!.api, 'helpdesk');
  const d = await sendPlan(c.path, { plan: hp });
  t.equal(codeOf(d), 'catalog_not_in_session', 'a helpdesk plan on a brewery session');
  t.match(d.body.errors[0].hint, /context/);
});

// ---------------------------------------------------------------- shape

t.test('a plan failing the JSON Schema: 400 bad_arguments with the path', async (t) => {
  const c = await client();
  const { plan } = c.compile(IPA);
  const bad: Array<[string, unknown, string, RegExp]> = [
    [
      'no version',
      (() => {
        const p = copy(plan) as unknown as Record<string, unknown>;
        delete p.version;
        return p;
      })(),
      '/',
      /missing required key `version`/,
    ],
    ['another plan version', { ...copy(plan), version: 2 }, '/version', /constant/],
    ['an unknown top-level key', { ...copy(plan), extra: true }, '/extra', /unknown key `extra`/],
    ['no steps', { ...copy(plan), steps: [] }, '/steps', /fewer than 1/],
    [
      'a malformed step id',
      (() => {
        const p = copy(plan);
        p.steps[0]!.id = 'x1';
        return p;
      })(),
      '/steps/0/id',
      /pattern/,
    ],
    [
      'a malformed digest',
      (() => {
        const p = copy(plan);
        p.steps[0]!.cgs_hash = 'abc';
        return p;
      })(),
      '/steps/0/cgs_hash',
      /pattern/,
    ],
    [
      'an argument that is neither lit nor ref',
      (() => {
        const p = copy(plan);
        (p.steps[0]!.args as Record<string, unknown>).style = 'IPA';
        return p;
      })(),
      '/steps/0/args/style',
      /expected object/,
    ],
    [
      'a limit of 0',
      (() => {
        const p = copy(plan);
        p.steps[0]!.limit = 0;
        return p;
      })(),
      '/steps/0/limit',
      />= 1|minimum|at least/,
    ],
    [
      'a sort order other than asc or desc',
      (() => {
        const p = copy(plan);
        p.steps[0]!.sort = { field: 'name', order: 'sideways' as 'asc' };
        return p;
      })(),
      '/steps/0/sort/order',
      /asc|allowed/,
    ],
    ['a plan that is a string', 'e2[name]', '/', /expected object/],
  ];
  const runs = await runsOf(c.path);
  for (const [label, p, path, message] of bad) {
    const a = await sendPlan(c.path, { plan: p });
    t.equal(a.status, 400, `${label}: 400`);
    t.equal(codeOf(a), 'bad_arguments', `${label}: bad_arguments`);
    t.equal(a.body.errors?.[0]?.path, path, `${label}: the error points at ${path}`);
    t.match(a.body.errors?.[0]?.message, message, `${label}: the message says what is wrong`);
  }
  const none = await sendPlan(c.path, {});
  t.equal(none.status, 400, 'no plan at all: 400');
  t.equal(codeOf(none), 'bad_arguments');
  const notJson = await sendPlan(c.path, '{"plan": ');
  t.equal(notJson.status, 400, 'a body that is not JSON: 400');
  t.equal(codeOf(notJson), 'bad_json');
  const extraKey = await sendPlan(c.path, { plan, symbols: {} });
  t.equal(extraKey.status, 400, 'an unknown body key: 400');
  t.match(extraKey.body.errors?.[0]?.message, /unknown body key `symbols`/);
  const asJson = await call(BASE, `${c.path}/plan`, {
    method: 'POST',
    body: JSON.stringify({ plan }),
    type: 'application/json',
  });
  t.equal(asJson.status, 415, 'another content type: 415');
  t.equal(codeOf(asJson), 'unsupported_media_type');
  t.equal(await runsOf(c.path), runs, 'nothing ran');
});

t.test('resolved plans are scoped to their session', async (t: Test) => {
  const c = await client();
  const { plan } = c.compile(IPA);
  const [, , ph] = c.path.split('/');
  const a = await sendPlan(`/execute/${ph}/0000000000000000`, { plan });
  t.equal(a.status, 404, 'an unknown session: 404');
  t.equal(codeOf(a), 'unknown_session');
});
