/**
 * The execute surface over real sockets (SPEC "Execute (HTTP)", Errors): opening sessions and the
 * first teaching wave, delta waves and federation through `/context`, the terminal's `/symbols`,
 * `/status` and `/runs`, programs (plain-text and JSON bodies, query flags, compile errors,
 * relations, projections, bindings with fan-out, filters), the four response formats, and paging
 * through `page(pgN)`. Every row is compared with what the real json-server vendor answers
 * directly. This file only reads vendor data; the review gate and writes are in
 * execute-plan.test.ts.
 */
import t, { type Test } from 'tap';
import { request as httpRequest } from 'node:http';
import { decode } from '@toon-format/toon';
import { HTTP_STATUS } from '../../server/http/status.js';
import { promptHash } from '../../server/execute/state.js';
import { call, codeOf, openSession, runProgram, startStack, type Answer } from '../_helpers/server.js';

const stack = await startStack(t);
const BASE = stack.url;
const VENDOR = stack.vendorUrl;

type Row = Record<string, unknown>;

/** A vendor collection read directly (no svc in between), with its X-Total-Count. */
async function vendor(path: string): Promise<{ body: any; total: number | undefined }> {
  const res = await fetch(VENDOR + path);
  if (res.status !== 200) throw new Error(`vendor ${path} answered ${res.status}`);
  const total = res.headers.get('x-total-count');
  return { body: await res.json(), total: total === null ? undefined : Number(total) };
}

/** Rows cut to `fields` the way a projection does (absent fields stay absent). */
function pick(rows: Row[], fields: string[]): Row[] {
  return rows.map((r) => Object.fromEntries(fields.filter((f) => r[f] !== undefined).map((f) => [f, r[f]])));
}

function postJson(path: string, body: unknown, accept = 'application/json'): Promise<Answer> {
  return call(BASE, path, { body: JSON.stringify(body), type: 'application/json', accept });
}

/** A POST with no Accept header at all (fetch would add `*\/*`). */
function postWithoutAccept(
  path: string,
  body: string,
  type: string,
): Promise<{ status: number; type: string; text: string }> {
  const u = new URL(BASE);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: u.hostname, port: u.port, method: 'POST', path, headers: { 'content-type': type } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Wave TSV -> rows of [form, meaning]; checks the header and that every row has one tab. */
function waveRows(t: Test, wave: string): Array<[string, string]> {
  const lines = wave.split('\n');
  t.equal(lines[0], 'form\tmeaning', 'the wave starts with its TSV header');
  return lines.slice(1).map((l) => {
    const cells = l.split('\t');
    t.equal(cells.length, 2, `one tab in: ${l.slice(0, 40)}`);
    return [cells[0]!, cells[1]!];
  });
}

/** The symbol a teaching row defines: a relation's r# (named in its meaning), else the form's last m#, else its entity e#. */
function definedSymbol([form, meaning]: [string, string]): string {
  const r = /^(r\d+) -> /.exec(meaning);
  if (r) return r[1]!;
  const m = form.match(/\bm\d+\b/g);
  return m ? m[m.length - 1]! : /^e\d+/.exec(form)![0];
}

interface SymbolsJson {
  entities: Array<{ sym: string; api: string; entity: string }>;
  capabilities: Array<{ sym: string; api: string; capability: string; entity: string }>;
  relations: Array<{ sym: string; api: string; entity: string; relation: string; target: string }>;
  domain_revision: number;
  teaching: string;
}

async function symbolsOf(path: string): Promise<SymbolsJson> {
  const a = await call(BASE, `${path}/symbols`);
  if (a.status !== 200) throw new Error(`symbols answered ${a.status}`);
  return a.body as SymbolsJson;
}

const allSyms = (s: SymbolsJson): string[] => [...s.entities, ...s.capabilities, ...s.relations].map((x) => x.sym);

/** The pgN of a `more` hint. */
function handleOf(more: unknown): string {
  const m = /^page\((pg\d+)\)\[\.\.\]$/.exec(String(more));
  if (!m) throw new Error(`not a more hint: ${String(more)}`);
  return m[1]!;
}

const brewery = stack.app.registry.get('brewery')!;
const helpdesk = stack.app.registry.get('helpdesk')!;

// ---------------------------------------------------------------- POST /execute

t.test(
  'a teaching answer in TOON: the session fields as TOON, a blank line, the rules and table as text',
  async (t) => {
    const seeds = ['brewery:Brewery', 'brewery:Beer'];
    const toon = await postJson('/execute', { entry_id: 'brewery', intent: 'toon teaching', seeds }, 'text/toon');
    const plain = await postJson('/execute', { entry_id: 'brewery', intent: 'toon teaching', seeds }, 'text/plain');
    const json = await postJson('/execute', { entry_id: 'brewery', intent: 'toon teaching', seeds });
    t.equal(toon.status, 201);
    const cut = toon.text.indexOf('\n\n');
    t.ok(cut > 0, 'a blank line ends the TOON part');
    const head = decode(toon.text.slice(0, cut)) as Record<string, unknown>;
    t.match(head, { prompt_hash: json.body.prompt_hash, domain_revision: 1, entries: json.body.entries });
    t.notOk('wave' in head || 'rules' in head, 'the rules and the table are not TOON strings');
    t.equal(
      toon.text.slice(cut + 2),
      `${json.body.rules}\n${json.body.wave}\n`,
      'the text is the rules and the TSV table',
    );
    t.notMatch(toon.text, /\\t|\\n/, 'no escaped tab or newline');
    t.ok(toon.text.length <= plain.text.length, `TOON ${toon.text.length} chars, plain ${plain.text.length}`);
    const ctx = await call(BASE, `/execute/${json.body.prompt_hash}/${json.body.session}/context`, {
      body: JSON.stringify({ seeds: ['brewery:Review'] }),
      type: 'application/json',
      accept: 'text/toon',
    });
    t.equal(ctx.status, 200);
    t.match(ctx.text, /^domain_revision: 2\n[\s\S]*\n\nform\tmeaning\ne3\(/, 'a context wave too');
  },
);

t.test('POST /execute opens a session: 201, its address and the first wave of the seeds', async (t) => {
  const a = await postJson('/execute', { entry_id: 'brewery', intent: 'beer lists', seeds: ['brewery:Brewery'] });
  t.equal(a.status, 201);
  t.match(a.headers.get('content-type'), /^application\/json/);
  t.match(a.body.prompt_hash, /^[0-9a-f]{16}$/);
  t.equal(a.body.prompt_hash, promptHash('brewery', 'beer lists'), 'prompt_hash is derived from entry and intent');
  t.match(a.body.session, /^[0-9a-f]{16}$/);
  t.equal(a.body.domain_revision, 1);
  t.same(a.body._meta, { svc: { domain_revision: 1 } });
  t.same(a.body.entries, [{ entry_id: 'brewery', cgs_hash: brewery.cgs_hash }]);
  t.match(a.body.rules, /^svc programs/);
  t.match(
    a.body.rules,
    /create, update, delete, action change data: dry-run for a pcN/,
    'the rules teach the review gate',
  );
  const rows = waveRows(t, a.body.wave);
  t.same(rows.map(definedSymbol), ['e1', 'r1', 'm1', 'm2'], 'Brewery, its relation and its two writes');
  t.match(rows[0]![1], /^brewery:Brewery: /);
  t.same(
    rows[1],
    [
      'e1("<id>").beers[..]',
      'r1 -> brewery:Beer rows (add the seed to learn its fields): Beers this brewery brews. | sort: any field',
    ],
    'a relation by its wire name, its r# in the meaning',
  );
  t.match(rows[2]![1], /^create e1: Register a new brewery\./);
  t.match(rows[3]![1], /^update e1: Change some fields of a brewery\./);
  t.notOk(a.body.wave.includes('e2'), 'no entity outside the seeds is taught');

  const again = await postJson('/execute', { entry_id: 'brewery', intent: 'beer lists', seeds: ['brewery:Brewery'] });
  t.equal(again.body.prompt_hash, a.body.prompt_hash, 'same entry and intent: same prompt_hash');
  t.not(again.body.session, a.body.session, 'a new session every time');
  const other = await postJson('/execute', { entry_id: 'brewery', intent: 'something else' });
  t.not(other.body.prompt_hash, a.body.prompt_hash, 'another intent: another prompt_hash');
});

t.test('POST /execute without seeds teaches every entity of the catalog; seeds may be bare or objects', async (t) => {
  for (const seeds of [undefined, []]) {
    const { path, answer } = await openSession(BASE, { entry_id: 'brewery', ...(seeds ? { seeds } : {}) });
    const syms = await symbolsOf(path);
    t.same(
      syms.entities.map((e) => e.entity),
      brewery.cgs.entities.map((e) => e.name),
      `seeds ${JSON.stringify(seeds)}: all entities in catalog order`,
    );
    t.same(
      syms.entities.map((e) => e.sym),
      ['e1', 'e2', 'e3'],
    );
    const entityRows = waveRows(t, answer.body.wave).filter(
      (row) => /^e\d+\(/.test(row[0]) && definedSymbol(row).startsWith('e'),
    );
    t.equal(entityRows.length, 3, 'one entity row each');
  }
  const { path } = await openSession(BASE, {
    entry_id: 'brewery',
    seeds: ['Beer', { api: 'brewery', entity: 'Review' }],
  });
  const syms = await symbolsOf(path);
  t.same(
    syms.entities,
    [
      { sym: 'e1', api: 'brewery', entity: 'Beer' },
      { sym: 'e2', api: 'brewery', entity: 'Review' },
    ],
    'order of the seeds is the order of the symbols',
  );
});

t.test('POST /execute answers TOON when Accept is omitted', async (t) => {
  const a = await postWithoutAccept(
    '/execute',
    JSON.stringify({ entry_id: 'helpdesk', seeds: ['Ticket'] }),
    'application/json',
  );
  t.equal(a.status, 201);
  t.match(a.type, /^text\/toon/);
  const cut = a.text.indexOf('\n\n');
  const o = decode(a.text.slice(0, cut)) as Record<string, any>;
  t.match(o.prompt_hash, /^[0-9a-f]{16}$/);
  t.match(o.session, /^[0-9a-f]{16}$/);
  t.same(o.entries, [{ entry_id: 'helpdesk', cgs_hash: helpdesk.cgs_hash }]);
  t.equal(o.domain_revision, 1);
  t.match(a.text.slice(cut + 2), /^svc programs: [\s\S]*\nform\tmeaning\ne1\(/, 'then the rules and the table');
  const status = await call(BASE, `/execute/${o.prompt_hash}/${o.session}/status`);
  t.equal(status.status, 200, 'the TOON address reaches the session');
});

t.test('POST /execute refuses bad requests and opens no session then', async (t) => {
  const sessions = async () => (await call(BASE, '/v1/health')).body.sessions as number;
  const before = await sessions();
  const cases: Array<[string, string, string | undefined, number, string]> = [
    ['unknown entry_id', JSON.stringify({ entry_id: 'nope' }), 'application/json', 404, 'unknown_entry'],
    ['missing entry_id', JSON.stringify({ seeds: ['brewery:Beer'] }), 'application/json', 400, 'bad_arguments'],
    ['entry_id not a string', JSON.stringify({ entry_id: 7 }), 'application/json', 400, 'bad_arguments'],
    ['malformed JSON', '{"entry_id": "brewery"', 'application/json', 400, 'bad_json'],
    ['a JSON array', '["brewery"]', 'application/json', 400, 'bad_json'],
    ['seeds not a list', JSON.stringify({ entry_id: 'brewery', seeds: 'Beer' }), 'application/json', 400, 'bad_seed'],
    [
      'a seed of another catalog',
      JSON.stringify({ entry_id: 'brewery', seeds: ['helpdesk:Ticket'] }),
      'application/json',
      400,
      'bad_seed',
    ],
    [
      'an unknown entity',
      JSON.stringify({ entry_id: 'brewery', seeds: ['brewery:Brewer'] }),
      'application/json',
      400,
      'bad_seed',
    ],
    ['a text body', 'entry_id=brewery', 'text/plain', 415, 'unsupported_media_type'],
  ];
  for (const [label, body, type, status, code] of cases) {
    const a = await call(BASE, '/execute', { method: 'POST', body, ...(type ? { type } : {}) });
    t.equal(a.status, status, `${label}: ${status}`);
    t.equal(codeOf(a), code, `${label}: ${code}`);
    t.equal(a.body._meta?.svc?.code, code, `${label}: _meta.svc.code`);
    t.type(a.body.errors?.[0]?.hint, 'string', `${label}: a hint`);
  }
  const unknown = await postJson('/execute', { entry_id: 'nope' });
  t.match(unknown.body.errors[0].hint, /brewery/, 'the hint lists the loaded catalogs');
  const near = await postJson('/execute', { entry_id: 'brewery', seeds: ['brewery:Brewer', 'brewery:Beerz'] });
  t.equal(near.body.errors.length, 2, 'one error per bad seed');
  t.match(near.body.errors[0].hint, /brewery:Brewery/, 'did you mean the close entity');
  t.equal(await sessions(), before, 'no session was opened by a refused request');
  // curl -d without a content type labels the JSON as a form: it is read as JSON.
  const form = await call(BASE, '/execute', {
    method: 'POST',
    body: JSON.stringify({ entry_id: 'brewery' }),
    type: 'application/x-www-form-urlencoded',
  });
  t.equal(form.status, 201, 'JSON labelled as a form opens a session');
  t.type(form.body.session, 'string');
  const formBad = await call(BASE, '/execute', {
    method: 'POST',
    body: 'entry_id=brewery',
    type: 'application/x-www-form-urlencoded',
  });
  t.equal(codeOf(formBad), 'bad_json', 'real form fields are not JSON: bad_json');
});

// ---------------------------------------------------------------- context waves

t.test('/context expands with a delta wave; symbols never move; federation adds a second catalog', async (t) => {
  const { path } = await openSession(BASE, { entry_id: 'brewery', seeds: ['brewery:Beer'] });
  const s1 = await symbolsOf(path);
  t.same(
    s1.entities.map((e) => e.sym + '=' + e.entity),
    ['e1=Beer'],
  );

  const a = await postJson(`${path}/context`, { seeds: ['brewery:Brewery', 'Review'] });
  t.equal(a.status, 200);
  t.equal(a.body.domain_revision, 2, 'new entities: the revision grows');
  t.equal(a.body._meta.svc.domain_revision, 2);
  t.notOk('notice' in a.body, 'nothing repeated, no notice');
  const s2 = await symbolsOf(path);
  const rows = waveRows(t, a.body.wave);
  const added = allSyms(s2).filter((x) => !allSyms(s1).includes(x));
  t.same(rows.map(definedSymbol).sort(), [...added].sort(), 'the wave teaches exactly the new symbols');
  t.ok(added.length > 2, 'and there are some');
  for (const k of ['entities', 'capabilities', 'relations'] as const) {
    t.same((s2[k] as unknown[]).slice(0, s1[k].length), s1[k], `${k}: earlier symbols keep their meaning`);
  }
  t.same(
    s2.entities.map((e) => e.sym + '=' + e.entity),
    ['e1=Beer', 'e2=Brewery', 'e3=Review'],
  );
  t.equal(
    s2.teaching,
    `${s1.teaching}\n${a.body.wave.split('\n').slice(1).join('\n')}`,
    'teaching is cumulative, one header',
  );

  // e1 still means Beer after the wave.
  const beer = await runProgram(BASE, path, 'e1(1)[id,name]');
  const v1 = await vendor('/beers/1');
  t.same(beer.body.rows, [{ id: 1, name: v1.body.name }], 'e1 is still brewery:Beer');

  // A repeated seed: a short notice and no table.
  const rep = await postJson(`${path}/context`, { seeds: ['Beer'] });
  t.equal(rep.status, 200);
  t.equal(rep.body.notice, 'already taught: e1 (brewery:Beer)');
  t.equal(rep.body.wave, '', 'no table');
  t.equal(rep.body.domain_revision, 2, 'nothing new: the revision stays');
  const repPlain = await postJson(`${path}/context`, { seeds: ['brewery:Beer'] }, 'text/plain');
  t.match(
    repPlain.text,
    /^already taught: e1 \(brewery:Beer\)\n# entries: \[\{"entry_id":"brewery","cgs_hash":"[0-9a-f]{64}"\}\]\n# domain_revision: 2\n$/,
    'plain text: the notice and the fields, no table',
  );
  t.same(await symbolsOf(path), s2, 'a repeated seed changes nothing');

  // Federation: helpdesk joins with its own wave, numbering continues.
  const f = await postJson(`${path}/context`, { seeds: ['brewery:Review', 'helpdesk:Ticket'] });
  t.equal(f.status, 200);
  t.equal(f.body.notice, 'already taught: e3 (brewery:Review)', 'a repeated seed next to a new one');
  t.equal(f.body.domain_revision, 3);
  t.same(f.body.entries, [
    { entry_id: 'brewery', cgs_hash: brewery.cgs_hash },
    { entry_id: 'helpdesk', cgs_hash: helpdesk.cgs_hash },
  ]);
  const s3 = await symbolsOf(path);
  const frows = waveRows(t, f.body.wave);
  const fadded = allSyms(s3).filter((x) => !allSyms(s2).includes(x));
  t.same(frows.map(definedSymbol).sort(), [...fadded].sort(), 'the federation wave teaches only helpdesk symbols');
  t.same(s3.entities.at(-1), { sym: 'e4', api: 'helpdesk', entity: 'Ticket' });
  t.ok(
    s3.capabilities.filter((c) => c.api === 'helpdesk').every((c) => Number(c.sym.slice(1)) > s2.capabilities.length),
    'm# numbering continues after brewery',
  );
  t.ok(
    frows.every(([, m]) => !/brewery:/.test(m)) && /^helpdesk:Ticket: /.test(frows[0]![1]),
    'every row is about helpdesk',
  );
  const status = await call(BASE, `${path}/status`);
  t.same(status.body.entries, f.body.entries, '/status shows both pins');

  // The federated entity runs against its own catalog.
  const tickets = await runProgram(BASE, path, 'e4(status="open")[id,status,priority]');
  const vt = await vendor('/tickets?status=open&_page=1&_limit=20');
  t.equal(tickets.status, 200);
  t.equal(tickets.body.entity, 'helpdesk:Ticket');
  t.same(tickets.body.rows, pick(vt.body, ['id', 'status', 'priority']));
  t.equal(tickets.body.total, vt.total);
});

t.test('/context errors: unknown session, missing seeds, all-or-nothing seeds', async (t) => {
  const u = await postJson('/execute/0123456789abcdef/0123456789abcdef/context', { seeds: ['brewery:Beer'] });
  t.equal(u.status, 404);
  t.equal(codeOf(u), 'unknown_session');
  t.match(u.body.errors[0].hint, /POST \/execute/);

  const { path } = await openSession(BASE, { entry_id: 'brewery', seeds: ['Brewery'] });
  for (const body of [{}, { seeds: [] }]) {
    const a = await postJson(`${path}/context`, body);
    t.equal(a.status, 400);
    t.equal(codeOf(a), 'bad_seed', `${JSON.stringify(body)}: bad_seed`);
  }
  const before = await call(BASE, `${path}/status`);
  const bad = await postJson(`${path}/context`, { seeds: ['helpdesk:Ticket', 'brewery:Nope'] });
  t.equal(bad.status, 400);
  t.equal(codeOf(bad), 'bad_seed');
  const after = await call(BASE, `${path}/status`);
  t.same(after.body.entries, before.body.entries, 'a refused wave pins nothing');
  t.equal(after.body.symbols, before.body.symbols, 'and teaches nothing');
  t.equal(after.body.domain_revision, 1);

  // A catalog the session has not loaded cannot be used, even by its qualified name.
  const q = await runProgram(BASE, path, 'helpdesk:Ticket[id]');
  t.equal(q.status, 400);
  t.equal(codeOf(q), 'catalog_not_in_session');
  t.match(q.body.errors[0].hint, /context/);
});

// ---------------------------------------------------------------- /symbols, /status, /runs

t.test('/status and /runs follow the runs, tokens and page handles of the session', async (t) => {
  const { path, answer } = await openSession(BASE, {
    entry_id: 'brewery',
    intent: 'status check',
    seeds: ['Brewery', 'Beer'],
  });
  const fresh = await call(BASE, `${path}/status`);
  t.equal(fresh.status, 200);
  t.equal(fresh.body.prompt_hash, answer.body.prompt_hash);
  t.equal(fresh.body.session, answer.body.session);
  t.equal(fresh.body.intent, 'status check');
  t.same(fresh.body.page_handles, []);
  t.same(fresh.body.plan_tokens, []);
  t.equal(fresh.body.runs, 0);
  const syms = await symbolsOf(path);
  t.equal(fresh.body.symbols, allSyms(syms).length, 'symbols counts every e#, m#, r#');
  t.equal(fresh.body.domain_revision, syms.domain_revision);
  t.ok(Date.parse(fresh.body.last_used) >= Date.parse(fresh.body.created_at));
  t.same((await call(BASE, `${path}/runs`)).body, { runs: [] });

  const r1 = await runProgram(BASE, path, 'e1[id]');
  const r2 = await runProgram(BASE, path, 'e1(city="Berlin")[name]');
  const failed = await runProgram(BASE, path, 'e1("b-nope")[name]');
  t.equal(failed.status, 502, 'a vendor 404 on a get is a failed run');
  t.equal(codeOf(failed), 'vendor_error');
  t.equal(failed.body._meta.svc.status, 'failed');
  const dry = await runProgram(BASE, path, 'e2(style="IPA")[name]', 'mode=plan');
  await runProgram(BASE, path, `page(${handleOf(r1.body.more)})[id]`);

  const runs = (await call(BASE, `${path}/runs`)).body.runs as Array<Record<string, unknown>>;
  t.same(
    runs.map((r) => r.run_id),
    [r1, r2, failed].map((a) => a.body._meta.svc.run_id),
    'live runs only, in order (no dry-run, no page)',
  );
  t.same(
    runs.map((r) => r.commit_id),
    [r1, r2, failed].map((a) => a.body._meta.svc.commit_id),
  );
  t.same(
    runs.map((r) => r.status),
    ['succeeded', 'succeeded', 'failed'],
  );
  t.same(
    runs.map((r) => r.rows),
    [r1.body.count, r2.body.count, 0],
  );
  for (const r of runs) t.match(r.run_id, /^pr[0-9a-f]{64}$/);

  const st = await call(BASE, `${path}/status`);
  t.equal(st.body.runs, 3);
  t.same(st.body.plan_tokens, [
    {
      ref: dry.body._meta.svc.plan_commit_ref,
      commit_id: dry.body._meta.svc.commit_id,
      verdict: 'proceed',
      consumed: false,
    },
  ]);
  t.equal(st.body.page_handles.length, 1, 'only the newest, unused page handle');
  t.not(st.body.page_handles[0], handleOf(r1.body.more), 'the continued handle is gone');

  for (const route of ['symbols', 'status', 'runs']) {
    const a = await call(BASE, `/execute/0123456789abcdef/fedcba9876543210/${route}`);
    t.equal(a.status, 404, `${route} of an unknown session: 404`);
    t.equal(codeOf(a), 'unknown_session');
  }
  const wrong = await call(BASE, `${path}/status`, { method: 'POST', body: '{}', type: 'application/json' });
  t.equal(wrong.status, 405);
  t.equal(codeOf(wrong), 'method_not_allowed');
});

// ---------------------------------------------------------------- programs

t.test('a program is a plain-text or JSON body; the query flags win over the body', async (t) => {
  const { path } = await openSession(BASE, { entry_id: 'brewery', seeds: ['Brewery'] });
  const program = 'e1(country="DE")[id,name]';
  const expected = pick((await vendor('/breweries?country=DE&_page=1&_limit=10')).body, ['id', 'name']);
  for (const type of ['text/plain', 'text/x-svc', 'application/x-www-form-urlencoded']) {
    const a = await runProgram(BASE, path, program, '', { type });
    t.equal(a.status, 200, `${type}: 200`);
    t.same(a.body.rows, expected, `${type}: the rows`);
  }
  const j = await call(BASE, path, {
    body: JSON.stringify({ program, wait: true, force: false }),
    type: 'application/json',
  });
  t.equal(j.status, 200);
  t.same(j.body.rows, expected, 'JSON body: the same rows');
  t.equal(j.body._meta.svc.mode, 'live');

  const dry = await call(BASE, path, { body: JSON.stringify({ program, mode: 'plan' }), type: 'application/json' });
  t.equal(dry.body._meta.svc.mode, 'plan', 'mode in the body');
  t.notOk(dry.body.rows, 'a dry-run has no rows');
  const live = await call(BASE, `${path}?mode=live`, {
    body: JSON.stringify({ program, mode: 'plan' }),
    type: 'application/json',
  });
  t.equal(live.body._meta.svc.mode, 'live', 'the query wins over the body');
  t.same(live.body.rows, expected);
  const run = await runProgram(BASE, path, program, 'mode=run');
  t.equal(run.body._meta.svc.mode, 'live', 'mode=run is live');
  t.equal(dry.body._meta.svc.commit_id, live.body._meta.svc.commit_id, 'one program, one commit id');

  const bad: Array<[string, () => Promise<Answer>, number, string]> = [
    ['mode=dry', () => runProgram(BASE, path, program, 'mode=dry'), 400, 'bad_arguments'],
    ['wait=maybe', () => runProgram(BASE, path, program, 'wait=maybe'), 400, 'bad_arguments'],
    ['force=1', () => runProgram(BASE, path, program, 'force=1'), 400, 'bad_arguments'],
    ['plan_commit_ref=abc', () => runProgram(BASE, path, program, 'plan_commit_ref=abc'), 400, 'bad_arguments'],
    [
      'JSON wait: 1',
      () => call(BASE, path, { body: JSON.stringify({ program, wait: 1 }), type: 'application/json' }),
      400,
      'bad_arguments',
    ],
    [
      'JSON plan_commit_ref: 3',
      () => call(BASE, path, { body: JSON.stringify({ program, plan_commit_ref: 3 }), type: 'application/json' }),
      400,
      'bad_arguments',
    ],
    [
      'JSON unknown key',
      () => call(BASE, path, { body: JSON.stringify({ program, execute: true }), type: 'application/json' }),
      400,
      'bad_arguments',
    ],
    [
      'JSON without program',
      () => call(BASE, path, { body: JSON.stringify({ wait: true }), type: 'application/json' }),
      400,
      'bad_arguments',
    ],
    ['malformed JSON', () => call(BASE, path, { body: '{"program": ', type: 'application/json' }), 400, 'bad_json'],
    ['blank program', () => runProgram(BASE, path, '  \n '), 400, 'bad_arguments'],
    ['XML body', () => runProgram(BASE, path, '<e1/>', '', { type: 'application/xml' }), 415, 'unsupported_media_type'],
    [
      'unknown session',
      () => runProgram(BASE, '/execute/0123456789abcdef/0123456789abcdef', program),
      404,
      'unknown_session',
    ],
  ];
  for (const [label, send, status, code] of bad) {
    const a = await send();
    t.equal(a.status, status, `${label}: ${status}`);
    t.equal(codeOf(a), code, `${label}: ${code}`);
  }
});

t.test('wait=false (query or JSON body) starts the run in the background; wait(oN) gives its rows', async (t) => {
  const { path } = await openSession(BASE, { entry_id: 'brewery', seeds: ['Brewery'] });
  const sync = await runProgram(BASE, path, 'e1(country="BE")[id,city]');
  for (const send of [
    () => runProgram(BASE, path, 'e1(country="BE")[id,city]', 'wait=false'),
    () =>
      call(BASE, path, {
        body: JSON.stringify({ program: 'e1(country="BE")[id,city]', wait: false }),
        type: 'application/json',
      }),
  ]) {
    const a = await send();
    t.equal(a.status, 202);
    const op = a.body._meta.svc.op;
    t.match(op.n, /^o\d+$/);
    t.equal(op['~'], '+');
    t.match(a.body.text, new RegExp(`wait\\(${op.n}\\)`), 'the accept line names wait(oN)');
    let done: Answer | undefined;
    for (let i = 0; i < 1000 && !done; i++) {
      const w = await runProgram(BASE, path, `wait(${op.n})`);
      t.equal(w.status, 200);
      if (w.body._meta.svc.op['~'] === '!') done = w;
      else await new Promise((r) => setTimeout(r, 25));
    }
    t.ok(done, 'the operation ends');
    t.same(done?.body.rows, sync.body.rows, 'the rows of the background run are those of a waited run');
    t.equal(done?.body._meta.svc.status, 'succeeded');
  }
  const u = await runProgram(BASE, path, 'wait(o99)');
  t.equal(u.status, 404);
  t.equal(codeOf(u), 'unknown_operation_handle');
});

t.test('compile errors come back with code, position and hint, status 400', async (t) => {
  const { path } = await openSession(BASE, { entry_id: 'brewery', seeds: ['Brewery', 'Beer'] });
  const cases: Array<[string, string, number, number, RegExp]> = [
    ['e9', 'unknown_symbol', 1, 1, /did you mean one of: `e1` \(brewery:Brewery\), `e2` \(brewery:Beer\)/],
    [
      'e1(city="Berlin" limit=10)',
      'syntax_error',
      1,
      18,
      /expected `,` or `\)` to close the argument list opened at 1:3/,
    ],
    ['e1(citty="Berlin")', 'unknown_argument', 1, 4, /did you mean `city`\?/],
    ['e1[name]\ne1(kind="nano")', 'enum_value_not_allowed', 2, 9, /allowed: micro, brewpub, regional, large/],
    ['e1(city="Berlin")[name,phone]', 'projection_unknown_field', 1, 24, /fields or relations: `id`, `name`/],
    ['e1("b-1").r9', 'unknown_relation', 1, 11, /did you mean `r1`/],
    ['e2(available="yes")', 'wrong_type', 1, 14, /available=true/],
    ["e1(city='Berlin')", 'unexpected_character', 1, 9, /double quotes/],
    ['e1(p3="Berlin")', 'legacy_symbol', 1, 4, /wire names/],
    ['page(s0)[name]', 'bad_handle', 1, 6, /pg<N>/],
    ['e1[name]\npage(pg1)', 'continuation_not_alone', 2, 1, /on its own/],
  ];
  for (const [program, code, line, col, hint] of cases) {
    const a = await runProgram(BASE, path, program);
    t.equal(a.status, 400, `${code}: 400`);
    t.equal(a.status, HTTP_STATUS[code as keyof typeof HTTP_STATUS], `${code}: the status of its code`);
    const e = a.body.errors?.[0];
    t.equal(e?.code, code, program);
    t.same([e?.line, e?.col], [line, col], `${code}: at ${line}:${col}`);
    t.match(e?.hint, hint, `${code}: hint`);
    t.equal(a.body._meta.svc.code, code);
  }
  const many = await runProgram(BASE, path, 'e1(citty="Berlin")\ne2(abv="strong")\ne1("b-1").r7');
  t.same(
    many.body.errors.map((e: { code: string; line: number }) => `${e.code}@${e.line}`),
    ['unknown_argument@1', 'unknown_argument@2', 'unknown_relation@3'],
    'every error at once',
  );
  t.equal((await call(BASE, `${path}/runs`)).body.runs.length, 0, 'no compile error ran anything');
});

t.test('relations, projections, bindings with fan-out and filters return the vendor rows', async (t) => {
  const { path } = await openSession(BASE, { entry_id: 'brewery', seeds: ['Brewery', 'Beer', 'Review'] });
  const syms = await symbolsOf(path);
  t.same(
    syms.relations.map((r) => `${r.sym}=${r.entity}.${r.relation}`),
    ['r1=Brewery.beers', 'r2=Beer.brewery', 'r3=Beer.reviews'],
  );

  // A relation from a row by id (folded into one vendor call), with a projection.
  const rel = await runProgram(BASE, path, 'e1("b-1").r1[name,abv]');
  t.equal(rel.status, 200);
  t.equal(rel.body.entity, 'brewery:Beer');
  const vb1 = (await vendor('/breweries/b-1/beers')).body as Row[];
  t.ok(vb1.length > 0);
  t.same(rel.body.rows, pick(vb1, ['name', 'abv']));
  t.same(
    await runProgram(BASE, path, 'e1("b-1").beers[name,abv]').then((a) => a.body.rows),
    rel.body.rows,
    'the wire name of the relation is the same',
  );

  // A to-one relation from a beer to its brewery.
  const beer = (await vendor('/beers/7')).body as Row;
  const one = await runProgram(BASE, path, 'e2(7).r2[id,name]');
  const vbrew = (await vendor(`/breweries/${String(beer.breweryId)}`)).body as Row;
  t.same(one.body.rows, [{ id: vbrew.id, name: vbrew.name }]);

  // A relation after a relation: the reviews of every beer of b-2 (force: the review flags the fan-out).
  const chain = await runProgram(BASE, path, 'e1("b-2").r1.r3[beerId,rating]', 'force=true');
  t.equal(chain.status, 200);
  t.equal(chain.body.entity, 'brewery:Review', 'the last relation is returned');
  const expected: Row[] = [];
  for (const b of (await vendor('/breweries/b-2/beers')).body as Row[])
    expected.push(
      ...pick((await vendor(`/reviews?beerId=${String(b.id)}&_page=1&_limit=25`)).body, ['beerId', 'rating']),
    );
  t.ok(expected.length > 0);
  t.same(chain.body.rows, expected);

  // The full row by id, no projection.
  const get = await runProgram(BASE, path, 'e1("b-7")');
  t.same(get.body.rows, [(await vendor('/breweries/b-7')).body]);

  // A projection keeps exactly the named fields.
  const proj = await runProgram(BASE, path, 'e1(city="Berlin")[name,city]');
  const vberlin = (await vendor('/breweries?city=Berlin&_page=1&_limit=10')).body as Row[];
  t.ok(vberlin.length > 0);
  t.same(proj.body.rows, pick(vberlin, ['name', 'city']));
  t.ok((proj.body.rows as Row[]).every((r) => Object.keys(r).join() === 'name,city'));

  // A binding over two lines: one listBeers call per bound brewery.
  const fan = await runProgram(BASE, path, 'b = e1(country="DE")[id,name]\ne2(breweryId=b.id)[name,breweryId]');
  t.equal(fan.status, 200);
  t.equal(fan.body.entity, 'brewery:Beer', 'the binding line is not returned');
  t.notOk(fan.body.results);
  const de = (await vendor('/breweries?country=DE&_page=1&_limit=10')).body as Row[];
  t.ok(de.length > 1, 'fans out over several breweries');
  const fanExpected: Row[] = [];
  for (const b of de)
    fanExpected.push(
      ...pick((await vendor(`/beers?breweryId=${String(b.id)}&_start=0&_limit=25`)).body, ['name', 'breweryId']),
    );
  t.same(fan.body.rows, fanExpected);
  const viaRel = await runProgram(BASE, path, 'b = e1(country="DE")\nb.r1[name,breweryId]');
  t.same(viaRel.body.rows, fanExpected, 'b.r1 follows the relation from every bound row');

  // Filters, with totals and a page hint when the vendor has more.
  const ipa = await runProgram(BASE, path, 'e2(style="IPA", available=true)[id,name,style,available]');
  const vipa = await vendor('/beers?style=IPA&available=true&_start=0&_limit=25');
  t.ok(vipa.body.length > 0);
  t.same(ipa.body.rows, pick(vipa.body, ['id', 'name', 'style', 'available']));
  t.equal(ipa.body.total, vipa.total);
  const be = await runProgram(BASE, path, 'e1(country="BE", kind="large")[id,kind,country]');
  const vbe = await vendor('/breweries?country=BE&kind=large&_page=1&_limit=10');
  t.same(be.body.rows, pick(vbe.body, ['id', 'kind', 'country']));
  t.equal(be.body.total, vbe.total);
  const search = await runProgram(BASE, path, 'e1(q="Kettle")[id,name]');
  const vsearch = await vendor('/breweries?q=Kettle&_page=1&_limit=10');
  t.ok(vsearch.body.length > 1);
  t.same(search.body.rows, pick(vsearch.body, ['id', 'name']), 'names outside the list filters use the search');

  // Two bare expressions: two result blocks in order.
  const two = await runProgram(BASE, path, 'e1("b-3")[name]\ne2(3)[name]');
  t.same(
    two.body.results.map((b: { entity: string; rows: Row[] }) => [b.entity, b.rows]),
    [
      ['brewery:Brewery', [{ name: ((await vendor('/breweries/b-3')).body as Row).name }]],
      ['brewery:Beer', [{ name: ((await vendor('/beers/3')).body as Row).name }]],
    ],
  );
});

// ---------------------------------------------------------------- formats

t.test('one program in every format: TOON (default), plain, JSON, NDJSON carry the same rows', async (t) => {
  const { path } = await openSession(BASE, { entry_id: 'brewery', seeds: ['Brewery'] });
  const program = 'e1(country="BE")[id,name,city,founded]';
  const json = await runProgram(BASE, path, program);
  const v = await vendor('/breweries?country=BE&_page=1&_limit=10');
  const rows = pick(v.body, ['id', 'name', 'city', 'founded']);
  t.same(json.body.rows, rows);
  t.equal(json.body.count, rows.length);
  t.equal(json.body.total, v.total);
  t.ok(v.total! > rows.length, 'the vendor has more than one page');
  t.match(json.body.more, /^page\(pg\d+\)\[\.\.\]$/);
  const commit = json.body._meta.svc.commit_id as string;
  t.match(commit, /^[0-9a-f]{64}$/);
  t.match(json.body._meta.svc, { mode: 'live', status: 'succeeded', run_id: /^pr[0-9a-f]{64}$/ });

  for (const accept of [undefined, 'text/toon', '*/*']) {
    const a =
      accept === undefined
        ? await postWithoutAccept(path, program, 'text/plain').then((x) => ({
            status: x.status,
            type: x.type,
            text: x.text,
          }))
        : await runProgram(BASE, path, program, '', { accept }).then((x) => ({
            status: x.status,
            type: String(x.headers.get('content-type')),
            text: x.text,
            commit: x.headers.get('svc-commit-id'),
          }));
    t.equal(a.status, 200);
    t.match(a.type, /^text\/toon/, `Accept ${accept ?? '(none)'}: TOON`);
    const o = decode(a.text) as Record<string, any>;
    t.same(o.rows, rows, 'TOON decodes to the JSON rows');
    t.same([o.entity, o.count, o.total], ['brewery:Brewery', rows.length, v.total]);
    t.match(o.more, /^page\(pg\d+\)\[\.\.\]$/);
    t.notOk('_meta' in o, 'a clean read in TOON leaves _meta out');
    if ('commit' in a) t.equal(a.commit, commit, 'the commit id travels in the svc-commit-id header');
  }

  const plain = await runProgram(BASE, path, program, '', { accept: 'text/plain' });
  t.match(plain.headers.get('content-type'), /^text\/plain/);
  const lines = plain.text.trimEnd().split('\n');
  t.equal(lines[0], `brewery:Brewery: ${rows.length} of ${v.total} rows`);
  t.same(lines[1]!.split(/ {2,}/), ['id', 'name', 'city', 'founded'], 'a header of the projected fields');
  t.same(
    lines.slice(2, 2 + rows.length).map((l) => l.split(/ {2,}/)),
    rows.map((r) => [r.id, r.name, r.city, String(r.founded)]),
    'one aligned line per row',
  );
  t.match(lines[2 + rows.length], /^more: page\(pg\d+\)\[\.\.\]$/);
  t.equal(lines.length, 3 + rows.length, 'a clean read in plain text has no meta lines');
  t.equal(plain.headers.get('svc-commit-id'), commit);
  t.match(plain.headers.get('svc-run-id'), /^pr[0-9a-f]{64}$/);

  const nd = await runProgram(BASE, path, program, '', { accept: 'application/x-ndjson' });
  t.match(nd.headers.get('content-type'), /^application\/x-ndjson/);
  const ndl = nd.text
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, any>);
  t.equal(ndl.length, rows.length + 1, 'one line per row, then the meta line');
  t.same(ndl.slice(0, -1), rows);
  const tail = ndl.at(-1)!;
  t.match(tail.results, [{ entity: 'brewery:Brewery', count: rows.length, total: v.total, more: /^page\(pg\d+\)/ }]);
  t.notOk('rows' in tail.results[0], 'the summary has no rows');
  t.equal(tail._meta.svc.commit_id, commit, 'meta last');

  const q = await runProgram(BASE, path, program, '', { accept: 'application/json;q=0.5, text/plain' });
  t.match(q.headers.get('content-type'), /^text\/plain/, 'the highest q wins');
  const no = await runProgram(BASE, path, program, '', { accept: 'image/png' });
  t.equal(no.status, 406);
  t.equal(codeOf(no), 'not_acceptable');
  t.match(
    no.body.errors[0].hint,
    /text\/toon .*application\/json, text\/plain, application\/x-ndjson/,
    'the 406 lists the types served',
  );
  const refused = await runProgram(BASE, path, program, '', { accept: 'text/toon;q=0, */*;q=0.1' });
  t.match(refused.headers.get('content-type'), /^application\/json/, 'q=0 refuses TOON even behind a wildcard');
  t.equal((await call(BASE, `${path}/runs`)).body.runs.length, 8, 'a 406 runs nothing');
});

t.test('errors carry their code in every format', async (t) => {
  const { path } = await openSession(BASE, { entry_id: 'brewery', seeds: ['Brewery'] });
  const cases: Array<[string, string, number, string]> = [
    [path, 'e9[name]', 400, 'unknown_symbol'],
    [path, 'page(pg99)', 404, 'unknown_page_handle'],
    ['/execute/0123456789abcdef/0123456789abcdef', 'e1', 404, 'unknown_session'],
  ];
  for (const [p, program, status, code] of cases) {
    const json = await runProgram(BASE, p, program);
    t.equal(json.status, status);
    t.equal(json.body.errors[0].code, code);
    const toon = await runProgram(BASE, p, program, '', { accept: 'text/toon' });
    t.equal(toon.status, status);
    const o = decode(toon.text) as Record<string, any>;
    t.equal(o.errors[0].code, code, `TOON: ${code}`);
    t.equal(o.errors[0].hint, json.body.errors[0].hint, 'TOON: the same hint');
    t.equal(o._meta.svc.code, code);
    const nd = await runProgram(BASE, p, program, '', { accept: 'application/x-ndjson' });
    t.equal(nd.status, status);
    const ndl = nd.text.trimEnd().split('\n');
    t.equal(ndl.length, 1, 'NDJSON: one line');
    t.same(JSON.parse(ndl[0]!).errors, json.body.errors, `NDJSON: ${code}`);
    const plain = await runProgram(BASE, p, program, '', { accept: 'text/plain' });
    t.equal(plain.status, status);
    t.match(plain.text, new RegExp(`(^|\\n)(error )?${code}[ :]`), `plain: ${code}`);
    t.match(plain.text, `hint: ${json.body.errors[0].hint}`, 'plain: the hint');
    t.match(plain.text, `# code: ${code}`);
  }
  const caret = await runProgram(BASE, path, 'e1(citty="Berlin")', '', { accept: 'text/plain' });
  t.equal(
    caret.text.split('\n').slice(0, 3).join('\n'),
    'unknown_argument at 1:4: `listBreweries` (brewery:Brewery) takes no argument `citty`\n  1 | e1(citty="Berlin")\n    |    ^^^^^',
    'plain compile errors point at the source',
  );
});

// ---------------------------------------------------------------- paging

/** Runs `first`, then follows every `more` hint; returns the rows and the handles used. */
async function follow(
  t: Test,
  path: string,
  first: string,
): Promise<{ rows: Row[]; handles: string[]; totals: number[] }> {
  let a = await runProgram(BASE, path, first);
  const rows: Row[] = [];
  const handles: string[] = [];
  const totals: number[] = [];
  for (let i = 0; i < 50; i++) {
    t.equal(a.status, 200, `page ${i + 1}: 200`);
    if (a.status !== 200) break;
    rows.push(...(a.body.rows as Row[]));
    totals.push(a.body.total as number);
    if (!a.body.more) break;
    const h = handleOf(a.body.more);
    t.notOk(handles.includes(h), `${h} is new`);
    handles.push(h);
    t.same((await call(BASE, `${path}/status`)).body.page_handles, [h], 'the newest handle is open');
    a = await runProgram(BASE, path, `page(${h})`);
    // Sent again (the answer was lost in transit): the same page, and the same next handle.
    const again = await runProgram(BASE, path, `page(${h})`);
    t.equal(again.status, 200, `${h} sent again: 200`);
    t.same(again.body.rows, a.body.rows, `${h} sent again: the same rows`);
    t.equal(again.body.more, a.body.more, `${h} sent again: the same next handle`);
  }
  return { rows, handles, totals };
}

t.test('page(pgN) walks a whole collection: every vendor row exactly once', async (t) => {
  const { path } = await openSession(BASE, { entry_id: 'brewery', seeds: ['Brewery', 'Beer'] });
  const all = (await vendor('/breweries')).body as Row[];
  const walk = await follow(t, path, 'e1');
  t.same(walk.rows, all, 'all breweries, in vendor order, none twice');
  t.equal(walk.handles.length, Math.ceil(all.length / 10) - 1, '10 per page');
  t.ok(
    walk.totals.every((n) => n === all.length),
    'every page reports the total',
  );
  t.same((await call(BASE, `${path}/status`)).body.page_handles, [], 'no open handle after the last page');

  // limit=N buffers what the vendor sent beyond N; offset paging on beers.
  const beers = (await vendor('/beers')).body as Row[];
  const limited = await follow(t, path, 'e2(limit=30)[id,name]');
  t.same(limited.rows, pick(beers, ['id', 'name']), 'all beers through limit and pages');

  // A filtered list keeps its filter on every page.
  const be = (await vendor('/breweries?country=BE')).body as Row[];
  const filtered = await follow(t, path, 'e1(country="BE")[id,country]');
  t.same(filtered.rows, pick(be, ['id', 'country']));
  t.ok(filtered.handles.length >= 1, 'more than one page');
});

t.test('page(pgN) projections, unknown handles and handles of another session', async (t) => {
  const a = await openSession(BASE, { entry_id: 'brewery', seeds: ['Brewery'] });
  const b = await openSession(BASE, { entry_id: 'brewery', seeds: ['Brewery'] });
  const first = await runProgram(BASE, a.path, 'e1[id,name]');
  const h = handleOf(first.body.more);
  const second = (await vendor('/breweries?_page=2&_limit=10')).body as Row[];

  const bad = await runProgram(BASE, a.path, `page(${h})[id,phone]`);
  t.equal(bad.status, 400);
  t.equal(codeOf(bad), 'projection_unknown_field');
  t.match(bad.body.errors[0].hint, /fields: id, name, city/);

  const other = await runProgram(BASE, b.path, `page(${h})`);
  t.equal(other.status, 404, 'a handle of another session is unknown here');
  t.equal(codeOf(other), 'unknown_page_handle');
  t.match(other.body.errors[0].message, `\`${h}\` is not a page handle of this session`);

  const unknown = await runProgram(BASE, a.path, 'page(pg999)');
  t.equal(unknown.status, 404);
  t.equal(codeOf(unknown), 'unknown_page_handle');

  const p = await runProgram(BASE, a.path, `page(${h})[city,country]`);
  t.equal(p.status, 200, 'the handle survived the refused attempts');
  t.same(p.body.rows, pick(second, ['city', 'country']), 'page(pgN)[..] picks other fields of the entity');
  t.equal(p.body._meta.svc.mode, 'live');
  t.notOk(p.body._meta.svc.run_id, 'a continuation is not a stored run');
  const next = await runProgram(BASE, a.path, `page(${handleOf(p.body.more)})[id]`);
  t.same(
    next.body.rows,
    pick((await vendor('/breweries?_page=3&_limit=10')).body, ['id']),
    'the handle under a continued page continues',
  );
});
