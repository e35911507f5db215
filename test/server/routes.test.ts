/**
 * The HTTP server's non-execute routes over real sockets (SPEC "Health and registry", "Tool model",
 * Errors): health (GET and HEAD), the registry list and single entry (with and without the CGS,
 * whose canonical hash is the entry's cgs_hash), the one 404 of an unknown entry shared by every
 * registry and discovery route, the tool-model route (focus/entity rules, 400 problem documents,
 * the `execute` notes), discovery (intent words, rows with api and entity, Markdown by format= or
 * by Accept negotiation against JSON), and the generic statuses every route shares: 404, 405 with
 * Allow, 413, 400 malformed JSON, 415, 406.
 * Every answer of this file is recorded; the last test asserts none of them carries a stack
 * trace or a server file path.
 */
import t from 'tap';
import { readdir, readFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { canonicalHash } from '../../common/canonical.js';
import { MAX_BODY_BYTES } from '../../server/http/body.js';
import {
  call,
  codeOf,
  openSession,
  PACKED,
  raw,
  ROOT,
  startStack,
  type Answer,
  type CallInit,
} from '../_helpers/server.js';

const stack = await startStack(t);
const BASE = stack.url;

/** Every answer this file saw, as `label` + headers + body, for the final stack-trace check. */
const seen: Array<{ label: string; text: string }> = [];

/** `call` that records the answer. */
async function get(path: string, init: CallInit = {}): Promise<Answer> {
  const a = await call(BASE, path, init);
  seen.push({
    label: `${init.method ?? (init.body !== undefined ? 'POST' : 'GET')} ${path}`,
    text: JSON.stringify([...a.headers]) + a.text,
  });
  return a;
}

/** `raw` that records the answer. */
async function rawCall(method: string, target: string, headers: Record<string, string> = {}, body?: string | Buffer) {
  const a = await raw(BASE, method, target, headers, body);
  seen.push({ label: `${method} ${target} (raw)`, text: JSON.stringify(a.headers) + a.text });
  return a;
}

/** The cgs_hash of each packed fixture, read from its manifest (the source of truth on disk). */
const manifests = new Map<string, { cgs_hash: string; version: number }>();
for (const name of (await readdir(PACKED)).filter((n) => n.endsWith('.manifest.json'))) {
  const m = JSON.parse(await readFile(join(PACKED, name), 'utf8')) as {
    entry_id: string;
    cgs_hash: string;
    version: number;
  };
  manifests.set(m.entry_id, m);
}

const PROBLEM_TYPE = 'https://svc.invalid/problems/svc-tool-model-bad-request';

// ---------------------------------------------------------------- health

t.test('GET /v1/health is public JSON: status ok, version, loaded entries', async (t) => {
  const a = await get('/v1/health');
  t.equal(a.status, 200);
  t.match(a.headers.get('content-type'), /^application\/json/);
  t.equal(a.body.status, 'ok');
  t.type(a.body.version, 'string');
  t.equal(a.body.entries, 2, 'brewery and helpdesk are loaded');
  t.type(a.body.uptime_s, 'number');
  t.type(a.body.sessions, 'number');
});

t.test('HEAD /v1/health answers the GET headers without a body', async (t) => {
  const h = await get('/v1/health', { method: 'HEAD' });
  const g = await get('/v1/health');
  t.equal(h.status, 200);
  t.equal(h.text, '', 'no body on HEAD');
  t.match(h.headers.get('content-type'), /^application\/json/);
  t.equal(Number(h.headers.get('content-length')), Buffer.byteLength(g.text), 'content-length is that of the GET body');
});

t.test('health counts execute sessions', async (t) => {
  const before = (await get('/v1/health')).body.sessions as number;
  await openSession(BASE, { entry_id: 'helpdesk' });
  t.equal((await get('/v1/health')).body.sessions, before + 1);
});

// ---------------------------------------------------------------- registry

t.test('GET /v1/registry lists brewery and helpdesk with version and cgs_hash, no CGS', async (t) => {
  const a = await get('/v1/registry');
  t.equal(a.status, 200);
  const entries = a.body.entries as Array<Record<string, unknown>>;
  t.same(
    entries.map((e) => e.entry_id),
    ['brewery', 'helpdesk'],
    'sorted by entry_id',
  );
  for (const e of entries) {
    const m = manifests.get(e.entry_id as string)!;
    t.equal(e.cgs_hash, m.cgs_hash, `${e.entry_id}: cgs_hash is the manifest's`);
    t.match(e.cgs_hash, /^[0-9a-f]{64}$/);
    t.equal(e.version, m.version);
    t.type(e.label, 'string');
    t.ok(Array.isArray(e.tags) && (e.tags as unknown[]).length > 0, `${e.entry_id}: tags`);
    t.notOk('cgs' in e, `${e.entry_id}: the list never carries the CGS`);
  }
  const brewery = entries[0]!;
  t.equal(brewery.label, 'Breweries and beers');
  t.same(brewery.tags, ['beer', 'food', 'demo']);
  t.same(brewery.entities, ['Brewery', 'Beer', 'Review']);
  t.equal(brewery.auth, 'none');
});

t.test('GET /v1/registry/:id: one entry, the CGS only with include_cgs=true, and its hash is cgs_hash', async (t) => {
  const plain = await get('/v1/registry/brewery');
  t.equal(plain.status, 200);
  t.equal(plain.body.entry_id, 'brewery');
  t.equal(plain.body.cgs_hash, manifests.get('brewery')!.cgs_hash);
  t.notOk('cgs' in plain.body, 'no CGS by default');
  for (const v of ['false', '1', 'TRUE', '']) {
    const a = await get(`/v1/registry/brewery?include_cgs=${v}`);
    t.equal(a.status, 200);
    t.notOk('cgs' in a.body, `include_cgs=${v} adds no CGS`);
  }
  const full = await get('/v1/registry/brewery?include_cgs=true');
  t.equal(full.status, 200);
  const cgs = full.body.cgs as Record<string, unknown>;
  t.ok(cgs && typeof cgs === 'object', 'the CGS is there');
  t.equal(cgs.entry_id, 'brewery');
  t.equal(canonicalHash(cgs), full.body.cgs_hash, 'sha256 of the canonical CGS is the cgs_hash');
  const { cgs: _cgs, ...rest } = full.body;
  t.same(rest, plain.body, 'otherwise the same fields as without the CGS');
  const help = await get('/v1/registry/helpdesk?include_cgs=true');
  t.equal(canonicalHash(help.body.cgs), manifests.get('helpdesk')!.cgs_hash);
});

t.test('an unknown entry is the same 404 problem on the registry, tool-model and discovery routes', async (t) => {
  const one = await get('/v1/registry/nope');
  const model = await get('/v1/registry/nope/tool-model');
  const disc = await get('/v1/discover?q=beer&entry=nope');
  for (const [name, a] of [
    ['registry', one],
    ['tool-model', model],
    ['discover', disc],
  ] as const) {
    t.equal(a.status, 404, `${name}: 404`);
    t.match(a.headers.get('content-type'), /^application\/problem\+json/, `${name}: problem+json`);
    t.equal(codeOf(a), 'unknown_entry', `${name}: code`);
  }
  t.same(model.body, one.body, 'tool-model: the same body as the registry route');
  t.same(disc.body, one.body, 'discovery: the same body as the registry route');
  t.equal(one.body.type, 'https://svc.invalid/problems/svc-unknown-entry');
  t.equal(one.body.status, 404);
  t.match(one.body.detail, /nope/);
  t.match(one.body.hint, /brewery, helpdesk/, 'the hint lists the loaded catalogs');
  const odd = await get('/v1/registry/%3Cscript%3E');
  t.equal(odd.status, 404);
  t.equal(codeOf(odd), 'unknown_entry');
  t.match(odd.body.detail, /<script>/, 'the decoded id, inside a JSON string');
});

// ---------------------------------------------------------------- tool model

t.test('tool-model focus=all (default): every entity, overview counts match the CGS', async (t) => {
  const cgs = (await get('/v1/registry/brewery?include_cgs=true')).body.cgs as {
    entities: Array<{ name: string; relations: unknown[] }>;
    capabilities: unknown[];
  };
  const names = cgs.entities.map((e) => e.name);
  for (const q of ['', '?focus=all']) {
    const a = await get(`/v1/registry/brewery/tool-model${q}`);
    t.equal(a.status, 200, `tool-model${q}`);
    t.match(a.headers.get('content-type'), /^application\/json/);
    t.same(a.body.entry, { entry_id: 'brewery', label: 'Breweries and beers', tags: ['beer', 'food', 'demo'] });
    t.same(a.body.focus, { mode: 'all', resolved_entities: names });
    t.same(Object.keys(a.body.entities), names);
    t.same(a.body.overview, {
      entity_count: names.length,
      relation_edge_count: cgs.entities.reduce((n, e) => n + e.relations.length, 0),
      verb_count: cgs.capabilities.length,
    });
  }
});

t.test('tool-model entity blocks: verbs, relations, reverse traversals, ref links, domain lines', async (t) => {
  const a = await get('/v1/registry/brewery/tool-model');
  const beer = a.body.entities.Beer as Record<string, any>;
  const brewery = a.body.entities.Brewery as Record<string, any>;
  const verbNames = (beer.verbs as Array<{ name: string }>).map((v) => v.name);
  t.ok(
    verbNames.includes('listBeers') && verbNames.includes('getBeer') && verbNames.includes('deleteBeer'),
    'Beer verbs',
  );
  const del = (beer.verbs as Array<Record<string, unknown>>).find((v) => v.name === 'deleteBeer')!;
  t.equal(del.effect, 'write');
  const list = (beer.verbs as Array<Record<string, unknown>>).find((v) => v.name === 'listBeers')!;
  t.equal(list.effect, 'read');
  t.same((beer.relations as Array<{ name: string }>).map((r) => r.name).sort(), ['brewery', 'reviews']);
  t.same(beer.entity_ref_links, [{ field: 'breweryId', entity: 'Brewery' }]);
  t.ok(
    (brewery.reverse_traversals as Array<Record<string, unknown>>).some(
      (r) => r.from === 'Beer' && r.relation === 'brewery',
    ),
    'Beer.brewery reaches Brewery',
  );
  t.ok(
    (beer.domain_lines as string[]).some((l) => l.startsWith('brewery:Beer: ')),
    'domain lines name api:Entity',
  );
  t.ok(
    (beer.domain_lines as string[]).some((l) => /deleteBeer\(.*\) \[write: needs review\]/.test(l)),
    'writes are marked for review',
  );
  t.same(a.body.auth.scheme, 'none');
  t.type(a.body.auth.connect_profile, 'object');
  t.type(a.body.domain.model.kinds, 'object');
  t.ok((a.body.domain.model.cross_entity_hints as string[]).includes('Beer.breweryId holds a Brewery id'));
});

t.test(
  'tool-model execute notes: four text notes on host-minted continuations, paging, long operations, review',
  async (t) => {
    const a = await get('/v1/registry/helpdesk/tool-model');
    const ex = a.body.execute as Record<string, unknown>;
    t.same(Object.keys(ex).sort(), ['long_operations', 'pagination', 'review_gate', 'summary']);
    for (const [k, v] of Object.entries(ex)) t.ok(typeof v === 'string' && v.length > 40, `${k} is a text note`);
    t.match(ex.summary, /minted by the host/);
    t.match(ex.summary, /never vendor cursors or job ids/);
    t.match(ex.pagination, /page\(pgN\)/);
    t.match(ex.pagination, /vendor cursor stays on the server/);
    t.match(ex.long_operations, /wait=false/);
    t.match(ex.long_operations, /wait\(oN\)/);
    t.match(ex.long_operations, /cancel\(oN\)/);
    t.match(ex.long_operations, /3 to 5 seconds/);
    t.match(ex.review_gate, /mode=plan/);
    t.match(ex.review_gate, /plan_commit_ref=pcN/);
    t.match(ex.review_gate, /10 minutes/);
    t.match(ex.review_gate, /force=true/);
    const other = await get('/v1/registry/brewery/tool-model?focus=single&entity=Review');
    t.same(other.body.execute, ex, 'the notes are static: the same for every entry and focus');
  },
);

t.test('tool-model: the pagination note is appended to the about of paginated verbs only', async (t) => {
  const a = await get('/v1/registry/brewery/tool-model');
  const note = a.body.execute.pagination as string;
  const verbs = a.body.entities.Brewery.verbs as Array<Record<string, any>>;
  const list = verbs.find((v) => v.name === 'listBreweries')!;
  const one = verbs.find((v) => v.name === 'getBrewery')!;
  t.ok(list.pagination, 'listBreweries declares pagination');
  t.equal(list.pagination.style, 'link');
  t.ok((list.about as string).endsWith(note), 'paginated query: note appended');
  t.ok((list.about as string).startsWith('List breweries'), 'after the capability description');
  t.notOk(one.pagination, 'getBrewery is not paginated');
  t.notOk((one.about as string).includes(note), 'and carries no pagination note');
});

t.test('tool-model focus=single takes exactly one entity, bare or api-qualified', async (t) => {
  for (const e of ['Beer', 'brewery:Beer']) {
    const a = await get(`/v1/registry/brewery/tool-model?focus=single&entity=${encodeURIComponent(e)}`);
    t.equal(a.status, 200, e);
    t.same(a.body.focus, { mode: 'single', resolved_entities: ['Beer'] });
    t.same(Object.keys(a.body.entities), ['Beer'], 'only that entity is described');
    t.equal(a.body.overview.entity_count, 3, 'the overview still counts the whole catalog');
  }
});

t.test('tool-model focus=seeds takes one or more entities, duplicates once, in request order', async (t) => {
  const a = await get(
    '/v1/registry/helpdesk/tool-model?focus=seeds&entity=Ticket&entity=Customer&entity=helpdesk:Ticket',
  );
  t.equal(a.status, 200);
  t.same(a.body.focus, { mode: 'seeds', resolved_entities: ['Ticket', 'Customer'] });
  t.same(Object.keys(a.body.entities), ['Ticket', 'Customer']);
  const one = await get('/v1/registry/helpdesk/tool-model?focus=seeds&entity=Comment');
  t.equal(one.status, 200);
  t.same(one.body.focus.resolved_entities, ['Comment']);
});

t.test('tool-model: invalid focus/entity combinations are 400 svc-tool-model-bad-request problems', async (t) => {
  const cases: Array<[string, RegExp]> = [
    ['focus=bogus', /focus `bogus` is not one of all, single, seeds/],
    ['focus=', /focus `` is not one of/],
    ['focus=ALL', /focus `ALL`/],
    ['focus=all&entity=Beer', /focus=all takes no entity/],
    ['entity=Beer', /focus=all takes no entity/],
    ['focus=single', /exactly one entity \(got 0\)/],
    ['focus=single&entity=Beer&entity=Review', /exactly one entity \(got 2\)/],
    ['focus=seeds', /one or more entity/],
    ['focus=single&entity=Bear', /brewery has no entity `Bear`/],
    ['focus=seeds&entity=Beer&entity=Ticket', /brewery has no entity `Ticket`/],
    ['focus=single&entity=helpdesk:Ticket', /no entity `helpdesk:Ticket`/],
  ];
  for (const [q, message] of cases) {
    const a = await get(`/v1/registry/brewery/tool-model?${q}`);
    t.equal(a.status, 400, `${q}: 400`);
    t.match(a.headers.get('content-type'), /^application\/problem\+json/, `${q}: problem+json`);
    t.equal(a.body.type, PROBLEM_TYPE, `${q}: problem type`);
    t.equal(a.body.status, 400, `${q}: status member`);
    t.type(a.body.title, 'string');
    t.match(a.body.detail, message, `${q}: detail`);
    t.equal(a.body.code, 'bad_arguments', `${q}: code`);
    t.ok(typeof a.body.hint === 'string' && a.body.hint.length > 0, `${q}: a hint`);
  }
  const near = await get('/v1/registry/brewery/tool-model?focus=single&entity=Bear');
  t.match(near.body.hint, /did you mean `Beer`/, 'a near miss suggests the entity');
});

// ---------------------------------------------------------------- discovery

interface Row {
  api: string;
  entity: string;
  seed: string;
  score: number;
  label: string;
  capabilities: string[];
  matched: string[];
}
const rowsOf = (a: Answer) => a.body.rows as Row[];

t.test('discover ranks (api, entity) rows by the words of an intent; rows carry api, entity and seed', async (t) => {
  const a = await get('/v1/discover?q=' + encodeURIComponent('open support tickets'));
  t.equal(a.status, 200);
  t.equal(a.body.intent, 'open support tickets');
  const rows = rowsOf(a);
  t.ok(rows.length > 0);
  t.equal(rows[0]!.seed, 'helpdesk:Ticket', 'tickets first');
  for (const r of rows) {
    t.equal(r.seed, `${r.api}:${r.entity}`, `${r.seed}: seed is api:entity`);
    t.ok(r.score > 0, `${r.seed}: scored`);
    t.ok(r.matched.length > 0, `${r.seed}: says which words matched`);
  }
  t.ok(rows[0]!.matched.includes('ticket'), 'plural intent words match singular names');
  t.ok(
    rows.every((r, i) => i === 0 || rows[i - 1]!.score >= r.score),
    'best first',
  );
  t.notOk(
    rows.some((r) => r.api === 'brewery'),
    'no brewery entity talks about support tickets',
  );
});

t.test('discover looks at capability names and descriptions, reads first', async (t) => {
  const a = await get('/v1/discover?q=retire');
  t.equal(a.status, 200);
  t.same(
    rowsOf(a).map((r) => r.seed),
    ['brewery:Beer'],
    'only Beer has a capability retireBeer',
  );
  const caps = rowsOf(a)[0]!.capabilities;
  t.ok(caps.indexOf('listBeers') < caps.indexOf('retireBeer'), 'reads before writes');
  t.ok(caps.indexOf('getBeer') < caps.indexOf('createBeer'));
});

t.test('discover searches across every entry; catalog words reach all its entities', async (t) => {
  const a = await get('/v1/discover?q=demo');
  t.same(
    rowsOf(a)
      .map((r) => r.seed)
      .sort(),
    ['brewery:Beer', 'brewery:Brewery', 'brewery:Review', 'helpdesk:Comment', 'helpdesk:Customer', 'helpdesk:Ticket'],
    'the tag demo is on both catalogs',
  );
  const both = await get('/v1/discover?q=' + encodeURIComponent('beer customer'));
  const apis = new Set(rowsOf(both).map((r) => r.api));
  t.same([...apis].sort(), ['brewery', 'helpdesk'], 'one intent, rows of two catalogs');
});

t.test('discover: intent alias, empty intent, limit, entry filter', async (t) => {
  const alias = await get('/v1/discover?intent=tickets');
  t.same(rowsOf(alias), rowsOf(await get('/v1/discover?q=tickets')), 'intent= is q=');
  const all = await get('/v1/discover');
  t.equal(all.status, 200);
  t.equal(rowsOf(all).length, 6, 'an empty intent lists every entity');
  t.equal(rowsOf(await get('/v1/discover?limit=2')).length, 2);
  const only = await get('/v1/discover?entry=helpdesk');
  t.same(
    rowsOf(only)
      .map((r) => r.seed)
      .sort(),
    ['helpdesk:Comment', 'helpdesk:Customer', 'helpdesk:Ticket'],
  );
  // The entry filter applies before the limit: brewery rows sort first and must not eat it.
  const limited = await get('/v1/discover?entry=helpdesk&limit=2');
  t.equal(rowsOf(limited).length, 2, 'limit counts rows of the filtered entry');
  t.ok(rowsOf(limited).every((r) => r.api === 'helpdesk'));
  const none = await get('/v1/discover?q=zeppelin');
  t.equal(none.status, 200);
  t.same(rowsOf(none), [], 'no match is an empty list, not an error');
});

t.test('discover: a bad limit is a 400 problem', async (t) => {
  for (const l of ['0', '201', 'abc', '-1', '2.5', '']) {
    const a = await get(`/v1/discover?q=beer&limit=${l}`);
    t.equal(a.status, 400, `limit=${l}`);
    t.match(a.headers.get('content-type'), /^application\/problem\+json/);
    t.equal(a.body.type, 'https://svc.invalid/problems/svc-discover-bad-request');
    t.equal(codeOf(a), 'bad_arguments');
  }
  t.equal((await get('/v1/discover?q=beer&limit=200')).status, 200, '200 is allowed');
});

t.test('discover renders Markdown with format=markdown or Accept: text/markdown', async (t) => {
  const json = await get('/v1/discover?q=beer');
  const viaParam = await get('/v1/discover?q=beer&format=markdown');
  const viaAccept = await get('/v1/discover?q=beer', { accept: 'text/markdown' });
  for (const a of [viaParam, viaAccept]) {
    t.equal(a.status, 200);
    t.match(a.headers.get('content-type'), /^text\/markdown/);
    t.equal(a.text, viaParam.text, 'both ways give the same text');
  }
  const lines = viaParam.text.trimEnd().split('\n');
  t.match(lines[0], /^Entities for "beer"/);
  t.ok(lines.includes('| seed | catalog | about | capabilities |'), 'a table header');
  const tableRows = lines.filter((l) => l.startsWith('| `'));
  t.same(
    tableRows.map((l) => /^\| `([^`]+)`/.exec(l)![1]),
    rowsOf(json).map((r) => r.seed),
    'one table row per JSON row, same order',
  );
  t.ok(tableRows[0]!.includes(rowsOf(json)[0]!.capabilities.join(', ')), 'capabilities listed');
  const piped = await get('/v1/discover?format=markdown&q=' + encodeURIComponent('beer|ale'));
  t.match(piped.text.split('\n')[0], /"beer\\\|ale"/, 'a pipe in the intent is escaped');
  const empty = await get('/v1/discover?format=markdown&q=zeppelin');
  t.match(empty.text, /^No entity matches "zeppelin"/);
});

/** GET without any Accept header (fetch and `raw` always send one). */
function getWithoutAccept(path: string): Promise<{ status: number; type: string; text: string }> {
  const u = new URL(BASE);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: u.hostname, port: u.port, method: 'GET', path }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        text += c;
      });
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? ''), text }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

t.test('discover negotiates Markdown against JSON by Accept: q values, wildcards, order', async (t) => {
  const cases: Array<[string, 'markdown' | 'json']> = [
    ['text/markdown;q=0, application/json', 'json'],
    ['text/markdown; q=0', 'json'],
    ['text/markdown', 'markdown'],
    ['application/json;q=0.5, text/markdown', 'markdown'],
    ['application/json, text/markdown', 'json'],
    ['text/markdown, application/json', 'markdown'],
    ['*/*', 'json'],
    ['text/*, application/json;q=0.9', 'markdown'],
    ['text/html', 'json'],
  ];
  for (const [accept, want] of cases) {
    const a = await get('/v1/discover?q=beer', { accept });
    t.equal(a.status, 200, accept);
    t.match(
      a.headers.get('content-type'),
      want === 'markdown' ? /^text\/markdown/ : /^application\/json/,
      `Accept: ${accept} -> ${want}`,
    );
  }
  const none = await getWithoutAccept('/v1/discover?q=beer');
  t.equal(none.status, 200);
  t.match(none.type, /^application\/json/, 'no Accept -> JSON');
  t.match(JSON.parse(none.text), { intent: 'beer' });
  const forced = await get('/v1/discover?q=beer&format=markdown', { accept: 'text/markdown;q=0, application/json' });
  t.match(forced.headers.get('content-type'), /^text\/markdown/, 'format=markdown wins over Accept');
});

// ---------------------------------------------------------------- generic statuses

t.test('unknown routes are 404 not_found in JSON', async (t) => {
  for (const p of [
    '/nope',
    '/v1',
    '/v2/registry',
    '/v1/registry/brewery/tool-model/extra',
    '/v1/registry/brewery/other',
  ]) {
    const a = await get(p);
    t.equal(a.status, 404, p);
    t.equal(codeOf(a), 'not_found', p);
    t.type(a.body.hint, 'string');
  }
  for (const target of ['/v1/registry/%zz', '*', '/v1/health/%E0%A4%A']) {
    const a = await rawCall('GET', target);
    t.equal(a.status, 404, `raw ${target}`);
    t.equal(JSON.parse(a.text).code, 'not_found');
  }
});

t.test('a known route with another method is 405 with an Allow header', async (t) => {
  const cases: Array<[string, string, string]> = [
    ['POST', '/v1/health', 'GET'],
    ['DELETE', '/v1/registry', 'GET'],
    ['PUT', '/v1/registry/brewery', 'GET'],
    ['POST', '/v1/discover', 'GET'],
    ['GET', '/execute', 'POST'],
    ['GET', '/internal/catalog-registry/v1/reload', 'POST'],
  ];
  for (const [method, path, allow] of cases) {
    const a = await get(path, {
      method,
      ...(method === 'GET' || method === 'DELETE' ? {} : { body: '{}', type: 'application/json' }),
    });
    t.equal(a.status, 405, `${method} ${path}`);
    t.equal(a.headers.get('allow'), allow, `${method} ${path}: Allow`);
    t.equal(codeOf(a), 'method_not_allowed');
    // JSON routes answer {code, message, hint}; execute routes {errors: [...], _meta}.
    t.match(path.startsWith('/execute') ? a.body.errors?.[0]?.hint : a.body.hint, new RegExp(`use ${allow}`));
  }
  const plain = await get('/execute', { method: 'GET', accept: 'text/plain' });
  t.equal(plain.status, 405);
  t.match(plain.headers.get('content-type'), /^text\/plain/, 'under /execute the 405 comes in the negotiated format');
  t.match(plain.text, /error method_not_allowed: GET is not allowed on \/execute\n {2}hint: use POST/);
  const opt = await rawCall('OPTIONS', '/v1/health');
  t.equal(opt.status, 405);
  t.equal(opt.headers.allow, 'GET');
});

t.test('a body over 1 MiB is 413, with or without a declared length; exactly 1 MiB is read', async (t) => {
  const over = 'x'.repeat(MAX_BODY_BYTES + 1);
  const declared = await get('/execute', { body: over, type: 'application/json' });
  t.equal(declared.status, 413, 'declared content-length over the limit');
  t.equal(codeOf(declared), 'body_too_large');
  const chunked = await rawCall(
    'POST',
    '/execute',
    { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
    Buffer.from('y'.repeat(MAX_BODY_BYTES * 2)),
  );
  t.equal(chunked.status, 413, 'chunked body counted while read');
  t.equal(JSON.parse(chunked.text).errors[0].code, 'body_too_large');
  const exact = await get('/execute', { body: ' '.repeat(MAX_BODY_BYTES), type: 'application/json' });
  t.equal(exact.status, 400, 'exactly the limit is read (and is then an empty request)');
  t.equal(codeOf(exact), 'bad_arguments');
  const { path } = await openSession(BASE, { entry_id: 'brewery' });
  const program = await get(path, { body: 'e1[name]\n' + '#'.repeat(MAX_BODY_BYTES), type: 'text/plain' });
  t.equal(program.status, 413, 'the program route has the same limit');
  t.equal(codeOf(program), 'body_too_large');
  t.equal((await get('/v1/health')).status, 200, 'the server still answers');
});

t.test('malformed JSON is 400 bad_json', async (t) => {
  const bodies = ['{bad', '{"entry_id": "brewery"', '[1,2]', '"text"', 'null'];
  for (const b of bodies) {
    const a = await get('/execute', { body: b, type: 'application/json' });
    t.equal(a.status, 400, b);
    t.equal(codeOf(a), 'bad_json', b);
    t.type(a.body.errors[0].hint, 'string');
  }
  const { path } = await openSession(BASE, { entry_id: 'brewery' });
  const a = await get(path, { body: '{"program": ', type: 'application/json' });
  t.equal(a.status, 400);
  t.equal(codeOf(a), 'bad_json', 'the program route too');
});

t.test('a body of the wrong content type is 415', async (t) => {
  const open = await get('/execute', { body: '<entry>brewery</entry>', type: 'application/xml' });
  t.equal(open.status, 415);
  t.equal(codeOf(open), 'unsupported_media_type');
  const { path } = await openSession(BASE, { entry_id: 'brewery' });
  const program = await get(path, { body: 'e1[name]', type: 'image/png' });
  t.equal(program.status, 415);
  t.equal(codeOf(program), 'unsupported_media_type');
  const plan = await get(`${path}/plan`, { body: '{}', type: 'text/plain' });
  t.equal(plan.status, 415, 'the plan route takes only the resolved-plan type');
  t.equal(codeOf(plan), 'unsupported_media_type');
});

t.test('an Accept no format matches is 406 (the error itself in JSON)', async (t) => {
  const open = await get('/execute', {
    body: JSON.stringify({ entry_id: 'brewery' }),
    type: 'application/json',
    accept: 'image/png',
  });
  t.equal(open.status, 406);
  t.match(open.headers.get('content-type'), /^application\/json/);
  t.equal(codeOf(open), 'not_acceptable');
  t.match(open.body.errors[0].hint, /text\/toon/);
  const { path } = await openSession(BASE, { entry_id: 'brewery' });
  const program = await get(path, { body: 'e1[name]', type: 'text/plain', accept: 'application/xml, text/html;q=0.9' });
  t.equal(program.status, 406);
  t.equal(codeOf(program), 'not_acceptable');
  const zero = await get(path, { body: 'e1[name]', type: 'text/plain', accept: 'application/json;q=0' });
  t.equal(zero.status, 406, 'q=0 refuses a type');
});

// ---------------------------------------------------------------- no internals in any answer

t.test('no answer of this file carries a stack trace or a server path', async (t) => {
  t.ok(seen.length > 80, `many answers were recorded (${seen.length})`);
  const patterns = [
    /\n\s+at /,
    /\bat [\w.<>]+ \(/,
    /node:internal/,
    /\/work\//,
    new RegExp(ROOT.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')),
    /\.ts:\d+/,
    /\.js:\d+:\d+/,
  ];
  const leaks = seen.flatMap(({ label, text }) =>
    patterns.filter((re) => re.test(text)).map((re) => `${label}: ${re}`),
  );
  t.same(leaks, [], 'nothing leaks');
});
