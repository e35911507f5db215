/**
 * `mode=check` (docs/http.md): a program is compiled and reviewed, and nothing else happens: no
 * pcN, no run, no page handle, no vendor request. What the playground's editor sends while the
 * user types. Reads, writes, diagnostics, continuations, JSON bodies and the plan route.
 */
import t from 'tap';
import { PooledHttpClient } from '../../runtime/index.js';
import { compileProgram, SymbolTable, type SymbolTableJson } from '../../compiler/index.js';
import { RESOLVED_PLAN_TYPE } from '../../server/execute/resolved-plan.js';
import { recording } from '../_helpers/recording.js';
import { call, codeOf, openSession, runProgram, startStack, type Answer } from '../_helpers/server.js';

const http = recording(new PooledHttpClient());
t.teardown(() => http.close());
const stack = await startStack(t, { runtime: { http } });
const base = stack.url;

/** What a session holds that a run, a dry-run or a page would change. */
async function held(path: string): Promise<unknown> {
  const s = await call(base, `${path}/status`);
  const runs = await call(base, `${path}/runs`);
  return { tokens: s.body.plan_tokens, pages: s.body.page_handles, runs: runs.body.runs };
}

function meta(a: Answer): Record<string, unknown> {
  return (a.body._meta as { svc: Record<string, unknown> }).svc;
}

t.test('a read: its review and commit id, nothing run, nothing minted, no vendor request', async (t) => {
  const { path } = await openSession(base, { entry_id: 'brewery', seeds: ['brewery:Beer'] });
  const before = await held(path);
  const sent = http.sent.length;
  const a = await runProgram(base, path, 'e1(style="IPA")[id,name]', 'mode=check');
  t.equal(a.status, 200, a.text);
  t.equal(meta(a).mode, 'check');
  t.equal(meta(a).dry_verdict, 'proceed');
  t.match(meta(a).dry_review, { verdict: 'proceed', mutations: 0 });
  t.equal(meta(a).plan_commit_ref, undefined, 'no pcN');
  t.same(a.body.results ?? [], [], 'no rows');
  t.match(a.text, /check: proceed; it runs as a live program/);
  const dry = await runProgram(base, path, 'e1(style="IPA")[id,name]', 'mode=plan');
  t.equal(meta(a).commit_id, meta(dry).commit_id, 'the commit id a dry-run reports');
  t.equal(http.sent.length, sent, 'the vendor saw nothing');
  const after = (await held(path)) as { tokens: unknown[] };
  t.same({ ...after, tokens: [] }, { ...(before as object), tokens: [] }, 'no run, no page handle');
  t.equal(after.tokens.length, 1, 'only the dry-run minted a token');
});

t.test('a write: the review a dry-run gives, without its pcN', async (t) => {
  const { path } = await openSession(base, { entry_id: 'brewery', seeds: ['brewery:Beer'] });
  const sym = (await call(base, `${path}/symbols`)).body as {
    capabilities: Array<{ sym: string; capability: string }>;
  };
  const create = sym.capabilities.find((c) => c.capability === 'createBeer')!.sym;
  const before = await held(path);
  const a = await call(base, path, {
    method: 'POST',
    type: 'application/json',
    body: JSON.stringify({ program: `${create}(name="Check", style="IPA", abv=5, breweryId="b1")`, mode: 'check' }),
  });
  t.equal(a.status, 200, a.text);
  t.equal(meta(a).mode, 'check');
  t.not(meta(a).dry_verdict, 'proceed');
  t.match(meta(a).dry_review, { mutations: 1 });
  t.equal(meta(a).plan_commit_ref, undefined);
  t.match(a.text, /dry-run it \(mode=plan\) for a pcN/);
  t.same(await held(path), before, 'the session is unchanged');
  t.equal(http.sent.filter((r) => r.method !== 'GET').length, 0, 'no write reached the vendor');
});

t.test('a program with a mistake: its diagnostics at line:col, as a run would give them', async (t) => {
  const { path } = await openSession(base, { entry_id: 'brewery', seeds: ['brewery:Beer'] });
  const a = await runProgram(base, path, 'e1(style="IPA")[id,nme]', 'mode=check');
  const live = await runProgram(base, path, 'e1(style="IPA")[id,nme]');
  t.equal(a.status, 400);
  t.same(a.body.errors, live.body.errors, 'the same diagnostics');
  t.match(a.body.errors, [{ line: 1, col: Number, hint: /name/ }]);
});

t.test('a continuation compiles and does not run; a bad mode names check', async (t) => {
  const { path } = await openSession(base, { entry_id: 'brewery', seeds: ['brewery:Beer'] });
  const first = await runProgram(base, path, 'e1[id]');
  const next = /^page\((pg\d+)\)/.exec(String(first.body.more))?.[1] ?? '';
  t.match(next, /^pg\d+$/, `a next page: ${first.text.slice(0, 200)}`);
  const before = await held(path);
  const sent = http.sent.length;
  const a = await runProgram(base, path, `page(${next})`, 'mode=check');
  t.equal(a.status, 200, a.text);
  t.equal(meta(a).mode, 'check');
  t.match(a.text, /is a continuation: it compiles, and nothing ran/);
  t.same(await held(path), before, 'the page handle is still unused');
  t.equal(http.sent.length, sent);
  const bad = await runProgram(base, path, 'e1[id]', 'mode=lint');
  t.equal(bad.status, 400);
  t.equal(codeOf(bad), 'bad_arguments');
  t.match(bad.text, /not plan, check or live/);
});

t.test('the plan route checks a client-compiled plan the same way', async (t) => {
  const { path } = await openSession(base, { entry_id: 'brewery', seeds: ['brewery:Beer'] });
  const symbols = SymbolTable.fromJSON((await call(base, `${path}/symbols`)).body as unknown as SymbolTableJson);
  const c = compileProgram('e1(style="IPA")[id,name]', { registry: stack.app.registry, symbols });
  if (c.kind !== 'plan') throw new Error(JSON.stringify(c.diagnostics));
  const before = await held(path);
  const sent = http.sent.length;
  const a = await call(base, `${path}/plan?mode=check`, {
    method: 'POST',
    body: JSON.stringify({ plan: c.plan }),
    type: RESOLVED_PLAN_TYPE,
  });
  t.equal(a.status, 200, a.text);
  t.equal(meta(a).mode, 'check');
  t.equal(meta(a).commit_id, c.commit_id, 'the commit id the client computed');
  t.same(await held(path), before);
  t.equal(http.sent.length, sent);
});
