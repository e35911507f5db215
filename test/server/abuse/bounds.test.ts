/**
 * Hostile programs over real sockets (the hardening review): small requests must not make large
 * answers, long compiles or many vendor calls. Growth is checked as ratios (answer bytes or
 * median time at size 4n vs n), never against wall-clock thresholds.
 *
 * - `'@ '` repeated: every format answers at most 20 errors and a `too_many_errors` count, each
 *   plain-text error with a window of its line, so the answer does not grow with the input;
 * - more than 1,000 statements: `program_too_large`, refused about as fast as the text is lexed;
 *   a 1,000-step plan on the resolved-plan route likewise;
 * - 1,000 statements compile in linear time;
 * - a plan that may make more vendor calls than the budget (200) needs review: `mode=plan` says
 *   `over_call_budget`, a live run without its pcN is 409 `review_required` and sends nothing.
 */
import t from 'tap';
import { decode } from '@toon-format/toon';
import { HTTP_STATUS } from '../../../server/http/status.js';
import {
  compileProgram,
  DEFAULT_MAX_VENDOR_CALLS,
  MAX_PROGRAM_STATEMENTS,
  SymbolTable,
  type Plan,
  type SymbolTableJson,
} from '../../../compiler/index.js';
import { RESOLVED_PLAN_TYPE } from '../../../server/execute/resolved-plan.js';
import { call, codeOf, openSession, runProgram, startStack } from '../../_helpers/server.js';
import { startFaultVendor } from '../../_helpers/fault-vendor.js';
import { growth } from '../../_helpers/growth.js';

// A vendor that records every request: the budget tests assert what reached it.
const vendor = await startFaultVendor({
  'GET /breweries': {
    json: [{ id: 'b-1', name: 'One', city: 'Berlin', country: 'DE' }],
    headers: { 'x-total-count': '1' },
  },
  'GET /beers': { json: [], headers: { 'x-total-count': '0' } },
});
t.teardown(() => vendor.close());
const stack = await startStack(t, { vendorUrl: vendor.url });
const BASE = stack.url;
const { path } = await openSession(BASE, { entry_id: 'brewery', seeds: ['Brewery', 'Beer'] });
const lines = (n: number, s: string) => Array.from({ length: n }, () => s).join('\n');
/** A fresh first line per call: the server caches compiled plans by program text, and a timing must not hit that cache. */
let runs = 0;
const fresh = (program: string) => `# run ${++runs}\n${program}`;

const ACCEPT = {
  plain: 'text/plain',
  json: 'application/json',
  toon: 'text/toon',
  ndjson: 'application/x-ndjson',
} as const;

t.test("'@ ' repeated: answers of bounded size in every format", async (t) => {
  for (const [format, accept] of Object.entries(ACCEPT)) {
    const small = await runProgram(BASE, path, '@ '.repeat(1000), '', { accept });
    const big = await runProgram(BASE, path, '@ '.repeat(4000), '', { accept });
    t.equal(big.status, 400, `${format}: 400`);
    const [a, b] = [Buffer.byteLength(small.text), Buffer.byteLength(big.text)];
    t.ok(b / a < 2, `${format}: ${a} -> ${b} bytes for 4x the input (x${(b / a).toFixed(2)})`);
    t.ok(b < 16_384, `${format}: ${b} bytes`);
    t.match(big.text, /3980 more errors not shown/, `${format}: says how many more`);
  }
  const json = await runProgram(BASE, path, '@ '.repeat(4000));
  t.equal(json.body.errors.length, 21, '20 errors and the summary');
  t.match(json.body.errors[20], {
    code: 'too_many_errors',
    message: '3980 more errors not shown',
    hint: 'fix the errors above and compile again',
  });
  t.equal(json.body._meta.svc.code, 'unexpected_character');
  const toon = decode((await runProgram(BASE, path, '@ '.repeat(4000), '', { accept: ACCEPT.toon })).text) as {
    errors: unknown[];
  };
  t.equal(toon.errors.length, 21);
  const nd = (await runProgram(BASE, path, '@ '.repeat(4000), '', { accept: ACCEPT.ndjson })).text.trim().split('\n');
  t.equal((JSON.parse(nd[nd.length - 1]!) as { errors: unknown[] }).errors.length, 21);
  // A long line is shown as a window around the column.
  const plain = await runProgram(BASE, path, 'e1(city="' + 'x'.repeat(100_000) + '") @', '', { accept: ACCEPT.plain });
  t.equal(plain.status, 400);
  t.ok(plain.text.length < 2000, `one error on a 100 KB line: ${plain.text.length} characters`);
  t.match(plain.text, /\| …x+"\) @\n +\| +\^/);
  t.equal(HTTP_STATUS.too_many_errors, 400);
});

t.test('a quoted 100 KB name is cut in the message', async (t) => {
  const a = await runProgram(BASE, path, 'q' + 'a'.repeat(100_000));
  t.equal(codeOf(a), 'unknown_symbol');
  t.ok(a.text.length < 2000, `${a.text.length} bytes`);
  t.match(a.body.errors[0].message, /^`qa{39}…` is not a symbol of this session$/);
});

t.test('more than 1,000 statements: program_too_large, refused in about the time to lex it', async (t) => {
  const over = await runProgram(BASE, path, lines(100_000, 'e1'), 'mode=plan');
  t.equal(over.status, 400);
  t.equal(HTTP_STATUS.program_too_large, 400);
  t.match(over.body.errors, [
    {
      code: 'program_too_large',
      message: `the program has 100000 statements; the limit is ${MAX_PROGRAM_STATEMENTS}`,
      hint: /send at most 1000 statements per program; split it into several programs, or use bindings and fan-out/,
    },
  ]);
  t.equal(over.body.errors.length, 1);
  const small = lines(25_000, 'e1');
  const big = lines(100_000, 'e1');
  const g = await growth(
    () => runProgram(BASE, path, fresh(small), 'mode=plan'),
    () => runProgram(BASE, path, fresh(big), 'mode=plan'),
    { runs: 3 },
  );
  t.ok(
    g.ratio < 9,
    `25,000 -> 100,000 statements: ${g.small.toFixed(1)} -> ${g.big.toFixed(1)} ms (x${g.ratio.toFixed(1)})`,
  );
  const plain = await runProgram(BASE, path, big, 'mode=plan', { accept: ACCEPT.plain });
  t.match(plain.text, /program_too_large at 1001:1: the program has 100000 statements/);
});

t.test('1,000 statements compile in linear time', async (t) => {
  const program = (n: number) =>
    Array.from({ length: n }, (_, i) =>
      i % 2 ? `b${i} = e1(city="c${i}")[id,name]` : `e2(style="s${i}", limit=20)[name]`,
    ).join('\n');
  const ok = await runProgram(BASE, path, program(1000), 'mode=plan');
  t.equal(ok.status, 200, '1,000 statements are allowed');
  t.equal(ok.body._meta.svc.dry_review.summary.split('\n').length, 1001, 'one line per step, after the budget line');
  const small = program(250);
  const big = program(1000);
  const g = await growth(
    () => runProgram(BASE, path, fresh(small), 'mode=plan'),
    () => runProgram(BASE, path, fresh(big), 'mode=plan'),
    { runs: 3 },
  );
  t.ok(
    g.ratio < 9,
    `250 -> 1,000 statements: ${g.small.toFixed(1)} -> ${g.big.toFixed(1)} ms (x${g.ratio.toFixed(1)})`,
  );
});

t.test('the resolved-plan route refuses more than 1,000 steps with program_too_large', async (t) => {
  const sym = await call(BASE, `${path}/symbols`);
  const symbols = SymbolTable.fromJSON(sym.body as unknown as SymbolTableJson);
  const c = compileProgram('e1', { registry: stack.app.registry, symbols });
  if (c.kind !== 'plan') throw new Error('e1 does not compile');
  const step = c.plan.steps[0]!;
  const plan = (n: number): Plan => ({
    version: c.plan.version,
    steps: Array.from({ length: n }, (_, i) => ({ ...step, id: `n${i + 1}` })),
    bind: {},
    return: ['n1'],
  });
  const send = (p: Plan, query = 'mode=plan') =>
    call(BASE, `${path}/plan?${query}`, {
      method: 'POST',
      body: JSON.stringify({ plan: p }),
      type: RESOLVED_PLAN_TYPE,
    });
  const over = await send(plan(MAX_PROGRAM_STATEMENTS + 1));
  t.equal(over.status, 400);
  t.equal(codeOf(over), 'program_too_large');
  t.match(JSON.stringify(over.body), /the plan has 1001 steps; the limit is 1000/);
  const at = await send(plan(MAX_PROGRAM_STATEMENTS));
  t.equal(at.status, 200, '1,000 steps are allowed');
  t.match(
    at.body._meta.svc.dry_review,
    { verdict: 'review', flow: ['over_call_budget'] },
    'and reviewed against the call budget',
  );
  // Many bad steps: the answer lists 20 problems and a count.
  const bad = plan(300);
  for (const s of bad.steps) s.args = { nope: { lit: 1 } };
  const many = await send(bad);
  t.equal(many.status, 400);
  t.ok(many.text.length < 20_000, `300 bad steps answer ${many.text.length} bytes`);
  t.match(many.text, /280 more errors not shown/);
});

t.test('over the call budget: review on mode=plan, 409 without pcN and nothing sent', async (t) => {
  const n = DEFAULT_MAX_VENDOR_CALLS + 1;
  const program = lines(n, 'e1');
  const dry = await runProgram(BASE, path, program, 'mode=plan');
  t.equal(dry.status, 200);
  t.equal(dry.body._meta.svc.dry_verdict, 'review');
  t.match(dry.body._meta.svc.dry_review, { verdict: 'review', flow: ['over_call_budget'], mutations: 0 });
  t.match(
    dry.body._meta.svc.dry_review.summary,
    `up to ${n} vendor calls (budget ${DEFAULT_MAX_VENDOR_CALLS}): dry-run and accept it with its pcN, or narrow it (filters, a smaller limit=, fewer statements)`,
  );
  const plain = await runProgram(BASE, path, program, 'mode=plan', { accept: ACCEPT.plain });
  t.match(
    plain.text,
    /^# dry_review: verdict=review flow=over_call_budget mutations=0( max_calls=201)?$/m,
    'plain text shows the review on one line',
  );

  const before = vendor.requests.length;
  const live = await runProgram(BASE, path, program);
  t.equal(live.status, 409);
  t.equal(codeOf(live), 'review_required');
  t.match(JSON.stringify(live.body), /over_call_budget/);
  t.equal(vendor.requests.length, before, 'nothing was sent to the vendor');

  const ok = await runProgram(BASE, path, lines(DEFAULT_MAX_VENDOR_CALLS, 'e1'));
  t.equal(ok.status, 200, 'a plan within the budget runs at once');
  t.equal(vendor.requests.length, before + DEFAULT_MAX_VENDOR_CALLS);

  const ref = dry.body._meta.svc.plan_commit_ref as string;
  const accepted = await runProgram(BASE, path, program, `plan_commit_ref=${ref}`);
  t.equal(accepted.status, 200, 'with its pcN the reviewed plan runs');
  t.equal(vendor.requests.length, before + DEFAULT_MAX_VENDOR_CALLS + n, 'every reviewed call is made');
});
