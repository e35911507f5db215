import t from 'tap';
import { table, outcomeObject, render } from '../../server/http/format.js';
import { negotiate } from '../../server/http/negotiate.js';
import {
  applyProgress,
  newCounts,
  opLine,
  progressNow,
  trimOperations,
  TERMINAL_OPS_KEPT,
  TERMINAL_OP_TTL_MS,
} from '../../server/execute/operations.js';
import type { OpDescriptor } from '../../server/execute/state.js';
import { canonicalPath, Router } from '../../server/http/router.js';
import { isProtected, SvcApp } from '../../server/app.js';
import { Registry } from '../../pack/index.js';
import { MemoryArtifactStore } from '../../runtime/artifacts/index.js';
import { promptHash } from '../../server/execute/state.js';

t.test('Accept negotiation', async (t) => {
  t.equal(negotiate(undefined), 'toon', 'no Accept: text/toon');
  t.equal(negotiate(''), 'toon');
  t.equal(negotiate('*/*'), 'toon');
  t.equal(negotiate('text/plain'), 'plain');
  t.equal(negotiate('application/json'), 'json');
  t.equal(negotiate('application/x-ndjson'), 'ndjson');
  t.equal(negotiate('text/html, application/json;q=0.9, */*;q=0.1'), 'json', 'highest q that we serve');
  t.equal(negotiate('text/plain;q=0.2, application/json;q=0.8'), 'json');
  t.equal(negotiate('application/json;q=0'), undefined, 'q=0 refuses');
  t.equal(negotiate('image/png'), undefined, 'nothing we serve: 406');
  // q=0 refuses a type even behind a wildcard.
  t.equal(negotiate('text/toon;q=0, */*;q=0.1'), 'json', 'TOON refused: the next offered type, not TOON');
  t.equal(negotiate('text/toon;q=0, text/*'), 'plain', 'text/* without TOON is plain text');
  t.equal(negotiate('*/*;q=0'), undefined, 'everything refused');
  // Wildcards.
  t.equal(negotiate('text/*'), 'toon');
  t.equal(negotiate('application/*'), 'json');
  t.equal(negotiate('image/*, application/*;q=0.5'), 'json');
  // Ties go to the client's order.
  t.equal(negotiate('text/plain, application/json'), 'plain');
  t.equal(negotiate('application/json, text/plain'), 'json');
  // Parameters and case.
  t.equal(negotiate('application/json; charset=utf-8'), 'json');
  t.equal(negotiate('Text/Plain; Q=0.9, application/json;q=0.8'), 'plain');
  t.equal(negotiate('application/ndjson'), 'ndjson', 'the alias of NDJSON');
  t.equal(negotiate('application/json;q=0.x, text/plain'), 'plain', 'a malformed q does not break the rest');
});

t.test('formats carry rows, the page handle, meta and errors', async (t) => {
  const o = {
    kind: 'result' as const,
    results: [{ entity: 'brewery:Brewery', rows: [{ id: 'b-1', name: 'A\tB' }], total: 42, next: 'pg1' }],
    errors: [],
    meta: { mode: 'live' as const, run_id: 'pr1' },
  };
  t.match(outcomeObject(o), {
    entity: 'brewery:Brewery',
    count: 1,
    total: 42,
    more: 'page(pg1)[..]',
    rows: [{ id: 'b-1' }],
    _meta: { svc: { run_id: 'pr1' } },
  });
  const plain = render(o, 'plain');
  t.match(plain, /brewery:Brewery: 1 of 42 rows/);
  t.match(plain, /more: page\(pg1\)\[\.\.\]/);
  t.notMatch(plain, /\t/, 'no tab inside cells');
  const nd = render(o, 'ndjson')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  t.same(nd[0], { id: 'b-1', name: 'A\tB' });
  t.match(nd[1], { results: [{ more: 'page(pg1)[..]', total: 42 }], _meta: { svc: { mode: 'live' } } });
  t.match(render(o, 'toon'), /rows\[1\]\{id,name\}:/);
  t.equal(table([]), '(no rows)');
  const opened = {
    kind: 'created' as const,
    results: [],
    errors: [],
    text: 'RULES\nWAVE',
    meta: { domain_revision: 1 },
    extra: {
      prompt_hash: 'ab12',
      session: 'cd34',
      domain_revision: 1,
      entries: [{ entry_id: 'brewery', cgs_hash: 'ff' }],
      rules: 'RULES',
      wave: 'WAVE',
    },
  };
  const openedPlain = render(opened, 'plain');
  t.match(openedPlain, /^# prompt_hash: ab12$/m, 'plain text names the session address');
  t.match(openedPlain, /^# session: cd34$/m);
  t.match(openedPlain, /^# entries: \[\{"entry_id":"brewery"/m);
  t.equal(openedPlain.match(/domain_revision/g)?.length, 1, 'a key in both extra and meta is printed once');
  t.equal(openedPlain.match(/WAVE/g)?.length, 1, 'the wave is the text, not repeated as a key');
});

function op(): OpDescriptor {
  return {
    handle: 'o1',
    state: 'running',
    started: 0,
    steps: 2,
    returns: ['n1'],
    progress: {},
    version: 0,
    seen: 0,
    errors: [],
  };
}

t.test('operation lines and progress folding', async (t) => {
  const o = op();
  t.match(opLine(o, '+', 0), /^\+ o1 started: 2 steps/);
  t.ok(applyProgress(o, { kind: 'step', step: 'n1', phase: 'running', pages: 1, rows: 10, calls: 1, elapsed_ms: 5 }));
  t.notOk(
    applyProgress(o, { kind: 'step', step: 'n1', phase: 'running', pages: 1, rows: 10, calls: 1, elapsed_ms: 9 }),
    'the same counts change nothing',
  );
  t.notOk(applyProgress(o, { kind: 'start', phase: 'started', pages: 0, rows: 0, calls: 0, elapsed_ms: 0 }));
  t.match(opLine(o, '~', 2500), /^~ o1 running: 0\/2 steps, 1 page, 10 rows, 2\.5 s/);
  t.match(opLine(o, '=', 2500), /^= o1 running, unchanged since the last poll: 0\/2 steps/);
  o.state = 'failed';
  o.errors = [{ code: 'vendor_error', message: 'brewery answered 500' }];
  t.match(opLine(o, '?', 3000), /^\? o1 failed: vendor_error: brewery answered 500/);
});

t.test('progress events: rows of returned steps only, and no event that changes nothing', async (t) => {
  const o = { ...op(), returns: ['n2'] };
  const notified = {};
  // As op-writer.ts does: fold the event, then push the line when its counts changed.
  const step = (id: string, phase: string, rows: number, pages = 1) =>
    applyProgress(o, { kind: 'step', step: id, phase: phase as 'running', pages, rows, calls: pages, elapsed_ms: 1 })
      ? newCounts(progressNow(o, 1000), notified)
      : undefined;
  const first = step('n1', 'running', 25);
  t.match(first?.line, /0\/2 steps, 1 page, 0 rows/, 'rows of n1 (it feeds n2, it is not returned) are not counted');
  t.equal(step('n1', 'running', 25), undefined, 'the same counts again: no event');
  t.equal(step('n2', 'running', 0, 0), undefined, 'a step that starts with nothing done changes no count: no event');
  t.match(step('n2', 'running', 3, 1)?.line, /0\/2 steps, 2 pages, 3 rows/, 'rows of the returned step are counted');
  t.match(step('n1', 'done', 25)?.line, /1\/2 steps, 2 pages, 3 rows/);
});

t.test('terminal operations are bounded in count and age', async (t) => {
  const ops = new Map<string, OpDescriptor>();
  for (let i = 1; i <= 40; i++) ops.set(`o${i}`, { ...op(), handle: `o${i}`, state: 'succeeded', ended: 1000 + i });
  ops.set('o41', { ...op(), handle: 'o41' });
  trimOperations(ops, 2000);
  t.equal([...ops.values()].filter((o) => o.state !== 'running').length, TERMINAL_OPS_KEPT);
  t.ok(ops.has('o41'), 'running ones stay');
  t.notOk(ops.has('o1'), 'the oldest went first');
  trimOperations(ops, 2000 + TERMINAL_OP_TTL_MS);
  t.same([...ops.keys()], ['o41'], 'expired terminal ones go');
});

t.test('router: params, 405 with allowed methods, 404', async (t) => {
  const r = new Router().add('GET', '/v1/registry/:id', () => {}).add('POST', '/execute/:ph/:sid', () => {});
  t.match(r.match('GET', '/v1/registry/brew%20ery'), { kind: 'found', params: { id: 'brew ery' } });
  t.same(r.match('DELETE', '/v1/registry/x'), { kind: 'method', allow: ['GET'] });
  t.same(r.match('GET', '/nope'), { kind: 'none' });
  t.same(r.match('GET', '/v1/registry/%E0%A4%A'), { kind: 'none' }, 'a malformed escape matches nothing');
});

t.test('prompt_hash is 16 hex, stable per entry and intent', async (t) => {
  t.match(promptHash('brewery', 'x'), /^[0-9a-f]{16}$/);
  t.equal(promptHash('brewery', 'x'), promptHash('brewery', 'x'));
  t.not(promptHash('brewery', 'x'), promptHash('brewery', 'y'));
});

t.test('every route is either public by name or protected (no route slips past inbound auth)', async (t) => {
  const artifacts = new MemoryArtifactStore({ retentionSecs: 60, gcIntervalSecs: 60 });
  t.teardown(() => artifacts.close());
  const app = new SvcApp({ registry: new Registry([]), artifacts });
  const PUBLIC = new Set(['GET /v1/health', 'POST /internal/catalog-registry/v1/reload']);
  const routes = app.router.list();
  t.ok(routes.length >= 15, `${routes.length} routes`);
  for (const r of routes) {
    const key = `${r.method} ${r.pattern}`;
    t.equal(isProtected(r.pattern), !PUBLIC.has(key), key);
  }
});

t.test('canonicalPath: the spelling the router matches on', async (t) => {
  t.equal(canonicalPath('/v1//registry/'), '/v1/registry');
  t.equal(canonicalPath('/v1/%72egistry'), '/v1/registry');
  t.equal(canonicalPath('/%65xecute/a/b'), '/execute/a/b');
  t.equal(canonicalPath('/'), '/');
  t.equal(canonicalPath('/v1/%E0%A4%A'), undefined, 'a segment that does not decode');
});

t.test(
  'compiled plans are cached per session and program, for one registry and domain revision, within a byte budget',
  async (t) => {
    const { loadCatalogDir } = await import('../../pack/load.js');
    const { MemorySessionRepository } = await import('../../server/execute/memory-repository.js');
    const { ExecuteService } = await import('../../server/execute/service.js');
    const { PlanCache } = await import('../../server/execute/plan-cache.js');
    const { join } = await import('node:path');
    const { registry } = await loadCatalogDir(join(import.meta.dirname, '..', '..', 'fixtures', 'packed'));
    const sessions = new MemorySessionRepository();
    const artifacts = new MemoryArtifactStore({ retentionSecs: 60, gcIntervalSecs: 60 });
    t.teardown(() => artifacts.close());
    const plans = new PlanCache(128 * 1024);
    const service = new ExecuteService({
      registry: () => registry,
      sessions,
      artifacts,
      runtime: {},
      planCache: plans,
    });
    const opened = await service.open({ entry_id: 'brewery', seeds: ['brewery:Brewery'] }, '');
    const key = { prompt_hash: opened.extra.prompt_hash, session: opened.extra.session };
    // The store hands out snapshots: a change (a new wave) is seen by reading the session again.
    let s = (await sessions.get(key))!;
    const dry = (program: string) => service.program(s, { program, mode: 'plan', wait: true, force: false });

    const first = await dry('e1(limit=25)');
    const cached = plans.get(s, 'e1(limit=25)', registry);
    t.ok(cached, 'a compiled program is cached');
    const again = await dry('e1(limit=25)');
    t.equal(again.meta.commit_id, first.meta.commit_id, 'the cached plan has the same commit id');
    t.equal(plans.get(s, 'e1(limit=25)', registry), cached, 'the same entry serves the second run');
    t.notOk(plans.get(s, 'e1(limit=25) ', registry), 'the key is the exact program text');

    const bad = await dry('e9');
    t.equal(bad.errors[0]?.code, 'unknown_symbol', 'a compile error');
    t.notOk(plans.get(s, 'e9', registry), 'a program that does not compile is not cached');

    t.notOk(plans.get(s, 'e1(limit=25)', new Registry(registry.list())), 'another registry (a reload) misses');
    await service.context(s, ['brewery:Beer']);
    t.ok(plans.get(s, 'e1(limit=25)', registry), 'the snapshot taken before the wave still hits');
    s = (await sessions.get(key))!;
    t.notOk(plans.get(s, 'e1(limit=25)', registry), 'a new wave (domain revision) misses');
    t.equal((await dry('e1(limit=25)')).meta.commit_id, first.meta.commit_id, 'recompiled after the wave: same plan');

    // Long programs are keyed by a digest: two programs differing only at the end are two entries.
    const pad = (c: string) => `e1(city=<<EOT\n${'x'.repeat(2000)}${c}\nEOT)[id]`;
    await dry(pad('a'));
    await dry(pad('b'));
    t.ok(plans.get(s, pad('a'), registry) && plans.get(s, pad('b'), registry), 'long programs are told apart');
    t.not(plans.get(s, pad('a'), registry)!.commit_id, plans.get(s, pad('b'), registry)!.commit_id);

    // Many programs: the cache stays within its byte budget, the least recently used go first.
    for (let i = 0; i < 200; i++) await dry(`e1(limit=${100 + i})`);
    const st = plans.stats();
    t.ok(st.bytes <= st.max_bytes, `the cache holds ${st.bytes} of at most ${st.max_bytes} bytes`);
    t.ok(st.entries < 200, `older entries were dropped (${st.entries} held)`);
    t.notOk(plans.get(s, 'e1(limit=100)', registry), 'the oldest entries went first');
    t.ok(plans.get(s, 'e1(limit=299)', registry), 'the newest entry stays');
    const huge = `e1(city=<<EOT\n${'x'.repeat(64 * 1024)}\nEOT)[id]`;
    await dry(huge);
    t.notOk(plans.get(s, huge, registry), 'a plan larger than an eighth of the budget is not cached');
  },
);

t.test('a page handle with a logical-session prefix resolves when that logical session is bound', async (t) => {
  const { pageHandleName } = await import('../../server/execute/pages.js');
  const { newSession } = await import('../../server/execute/state.js');
  const s = newSession(
    { prompt_hash: 'a'.repeat(16), session: 'b'.repeat(16) },
    { entry_id: 'brewery', cgs_hash: 'h', intent: '', tenant: '', now: 0 },
  );
  t.equal(pageHandleName(s, 'pg3'), 'pg3', 'a plain handle is its own name');
  t.throws(
    () => pageHandleName(s, 'l_k9Q2_pg3'),
    /names the logical session l_k9Q2, which is not bound to this session/,
  );
  s.logical.push('l_k9Q2');
  t.equal(pageHandleName(s, 'l_k9Q2_pg3'), 'pg3', "bound: the session's pgN");
  t.throws(() => pageHandleName(s, 'l_other_pg3'), /not bound/);
});

t.test('the HTTP status table covers every code (and only the HTTP layer holds statuses)', async (t) => {
  const { CODES } = await import('../../common/errors.js');
  const { HTTP_STATUS } = await import('../../server/http/status.js');
  t.same(Object.keys(HTTP_STATUS).sort(), Object.keys(CODES).sort(), 'one status per code');
  for (const [code, status] of Object.entries(HTTP_STATUS)) t.ok(status >= 200 && status < 600, `${code}: ${status}`);
  t.ok(
    Object.values(CODES).every((c) => !('status' in c)),
    'the code table itself knows no status',
  );
});
