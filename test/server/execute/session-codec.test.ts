/**
 * The session core codec (Redis): the core of a realistic session (pins, an exposed symbol table,
 * operations, logical refs) survives a trip through JSON text exactly: maps keep their order, the
 * symbol table answers lookups, undefined optional fields stay absent, and encoding a decoded core
 * again gives the same text; what is kept item by item (page handles, tokens, runs, counters) is
 * left out.
 */
import t from 'tap';
import { decodeCore, encodeCore } from '../../../server/execute/session-codec.js';
import { newSession, type SessionState } from '../../../server/execute/state.js';
import { SymbolTable } from '../../../compiler/symbols.js';
import { fixtureRegistry, GOLDEN_SEEDS } from '../../_helpers/registry.js';

async function realistic(): Promise<SessionState> {
  const s = newSession(
    { prompt_hash: '0123456789abcdef', session: 'fedcba9876543210' },
    { entry_id: 'brewery', cgs_hash: 'a'.repeat(64), intent: 'beer lists', tenant: 'acme', now: 1_000 },
  );
  s.last_used = 2_000;
  s.pins.set('helpdesk', 'b'.repeat(64));
  s.symbols.expose(await fixtureRegistry(), GOLDEN_SEEDS);
  s.teaching = 'rules\n\nwave 1 ✓ «quoted» \u2028';
  s.tokens.set('pc1', { commit_id: 'c1', verdict: 'review', mutations: 2, minted_at: 1_500, consumed_at: 1_600 });
  s.tokens.set('pc0', { commit_id: 'c0', verdict: 'proceed', mutations: 0, minted_at: 1_400, program: 'e1(){id}' });
  s.tokens.set('pc2', { commit_id: 'c2', verdict: 'proceed', mutations: 0, minted_at: 1_700 });
  s.pages.set('pg2', {
    entity: 'brewery:Beer',
    api: 'brewery',
    cgs_hash: 'a'.repeat(64),
    capability: 'list_beers',
    values: { style: 'IPA', abv: 6.5, tags: ['hoppy', null], nested: { ok: true } },
    projection: ['id', 'name'],
    sort: { field: 'name', order: 'asc' },
    cursor: { page: 3 },
    size: 25,
    fetched: 50,
    buffer: [{ id: 51, name: 'X' }],
    used: true,
  });
  s.pages.set('pg1', {
    entity: 'brewery:Brewery',
    api: 'brewery',
    cgs_hash: 'a'.repeat(64),
    capability: 'list_breweries',
    values: {},
    cursor: { cursor: 'opaque==' },
    size: 10,
    fetched: 10,
    total: 99,
    next: 'pg3',
  });
  s.runs.push({ run_id: 'r1', commit_id: 'c1', status: 'succeeded', at: '2024-01-01T00:00:00.000Z', rows: 3 });
  s.ops.set('o2', {
    handle: 'o2',
    state: 'running',
    started: 1_800,
    steps: 2,
    returns: ['n2'],
    progress: { n1: { phase: 'fetch', pages: 2, rows: 40, calls: 2 } },
    version: 3,
    seen: 1,
    owner: 'r0123456789ab',
    lease_until: 16_800,
    errors: [],
  });
  s.ops.set('o1', {
    handle: 'o1',
    state: 'failed',
    started: 1_100,
    ended: 1_200,
    steps: 1,
    returns: ['n1'],
    progress: {},
    version: 1,
    seen: 1,
    run_id: 'r1',
    commit_id: 'c1',
    awaited: true,
    blocks: [{ entity: 'brewery:Beer', total: 3, next: 'pg1', step: 'n1' }],
    errors: [{ code: 'vendor_error', message: 'the vendor said 500', hint: 'retry' }],
  });
  s.logical.push('l_abc', 'l_def');
  s.counters = { pc: 2, pg: 3, o: 2 };
  return s;
}

t.test('the core survives the trip exactly and leaves out what is kept item by item', async (t) => {
  const s = await realistic();
  const text = encodeCore(s);
  const back = decodeCore(text);
  for (const k of ['pages', 'tokens', 'runs', 'counters']) t.notOk(k in back, `no ${k}`);
  const { pages: _p, tokens: _t, runs: _r, counters: _c, ...core } = s;
  t.same(back, core, 'the rest deeply the same (maps compared entry by entry)');
  for (const k of ['pins', 'ops'] as const) {
    t.ok(back[k] instanceof Map, `${k} is a Map again`);
    t.same([...back[k].keys()], [...s[k].keys()], `${k} keep their insertion order`);
  }
  t.equal(
    encodeCore({ ...back, pages: new Map(), tokens: new Map(), runs: [], counters: s.counters }),
    text,
    'encoding the decoded core again gives the same text',
  );
});

t.test('the symbol table comes back as a working table', async (t) => {
  const s = await realistic();
  const back = decodeCore(encodeCore(s));
  t.ok(back.symbols instanceof SymbolTable);
  t.same(back.symbols.toJSON(), s.symbols.toJSON());
  t.ok(s.symbols.all().length > 3, 'the fixture exposes several symbols');
  t.equal(back.symbols.domainRevision, s.symbols.domainRevision);
  t.same(back.symbols.entitySymbol('brewery', 'Beer'), s.symbols.entitySymbol('brewery', 'Beer'));
  t.same(back.symbols.lookup('e1'), s.symbols.lookup('e1'), 'looked up by symbol');
  t.same(back.symbols.apis(), ['brewery', 'helpdesk']);
  const more = back.symbols.expose(await fixtureRegistry(), [{ api: 'brewery', entity: 'Beer' }]);
  t.same(more.repeated, [{ api: 'brewery', entity: 'Beer' }], 'it still knows what was exposed');
});

t.test('undefined optional fields stay absent', async (t) => {
  const s = await realistic();
  s.ops.set('o3', { ...s.ops.get('o1')!, handle: 'o3', run_id: undefined });
  const back = decodeCore(encodeCore(s));
  t.notOk('run_id' in back.ops.get('o3')!, 'an explicitly undefined field is not there');
  t.notOk('ended' in back.ops.get('o2')!);
  t.equal(back.ops.get('o1')?.run_id, 'r1', 'a set one is');
});

t.test('each decode is a fresh state; foreign text is refused', async (t) => {
  const text = encodeCore(await realistic());
  const [a, b] = [decodeCore(text), decodeCore(text)];
  a.pins.set('x', 'y');
  a.ops.get('o2')!.progress.n1!.rows = 0;
  a.logical.pop();
  t.equal(b.pins.size, 2, 'a change of one decoded state is not seen in another');
  t.equal(b.ops.get('o2')!.progress.n1!.rows, 40);
  t.equal(b.logical.length, 2);
  t.throws(() => decodeCore('{"v":1}'), /session core is not in format 2/, 'a whole session of format 1 is not a core');
  t.throws(() => decodeCore('[]'), /session core is not in format 2/);
  const older = JSON.parse(text) as Record<string, unknown>;
  delete older.entity_writes;
  t.same(decodeCore(JSON.stringify(older)).entity_writes, {}, 'a core stored before write counts: none counted');
  t.throws(() => decodeCore('not json'));
});
