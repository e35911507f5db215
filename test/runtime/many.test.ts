/**
 * `many` parameters and constraints at run time, against the real demo vendor (json-server 0.17,
 * which reads `?style=a&style=b` as "either"): a list literal becomes repeated query keys (or one
 * comma-joined key, or a JSON array in a body); a list taken from a bound row does too; a bound
 * value that breaks a constraint, or an update left with no field, fails its step before any call.
 */
import t from 'tap';
import { compileProgram, SymbolTable } from '../../compiler/index.js';
import { buildRequest, executePlan, PooledHttpClient, type RunResult } from '../../runtime/index.js';
import { startDemoVendor, type DemoVendor } from '../../cli/demo-vendor.js';
import { compileSource, Registry, registryEntry, type Cgs } from '../../pack/index.js';
import { fixtureRegistry, sessionSymbols } from '../_helpers/registry.js';
import { recording } from '../_helpers/recording.js';

type Row = Record<string, unknown>;

const v: DemoVendor = await startDemoVendor();
const http = recording(new PooledHttpClient());
t.teardown(async () => {
  await http.close();
  await v.close();
});
const fixtures = await fixtureRegistry();
const reg = new Registry(fixtures.list().map((e) => ({ ...e, base_url: v.url })));
const symbols = sessionSymbols(fixtures); // e1 Brewery, e2 Beer, e3 Review, e4 helpdesk:Ticket

async function run(text: string, registry = reg, syms = symbols): Promise<RunResult> {
  const c = compileProgram(text, { registry, symbols: syms });
  if (c.kind !== 'plan') throw new Error(`${text} does not compile: ${JSON.stringify(c.diagnostics)}`);
  return executePlan(c.plan, registry, { http, requestTimeoutMs: 5000, accepted: true });
}
const sentSince = (from: number) => http.sent.slice(from);

t.test('a list literal is sent as repeated query keys; the vendor answers rows of each value', async (t) => {
  const from = http.sent.length;
  const r = await run('e2(style=["IPA", "Stout"], limit=100)[id, style]');
  t.equal(r.status, 'succeeded', JSON.stringify(r.errors));
  const q = new URL(sentSince(from)[0]!.url).searchParams;
  t.same(q.getAll('style'), ['IPA', 'Stout'], '?style=IPA&style=Stout');
  const want = (v.db().beers as Row[]).filter((b) => b.style === 'IPA' || b.style === 'Stout').map((b) => b.id);
  t.same(
    r.returns[0]!.rows.map((x) => x.id),
    want,
  );
  t.same(new Set(r.returns[0]!.rows.map((x) => x.style)), new Set(['IPA', 'Stout']), 'rows of both values');
  const one = await run('e2(style="IPA")[id]');
  t.same(new URL(http.sent[http.sent.length - 1]!.url).searchParams.getAll('style'), ['IPA'], 'one value: one key');
  t.ok(one.returns[0]!.rows.length > 0);
});

t.test('a list from a bound row goes out as repeated keys too', async (t) => {
  const data = {
    playlists: [
      { id: 1, name: 'Evening', genres: ['rock', 'jazz'] },
      { id: 2, genres: ['pop'] },
    ],
    songs: [
      { id: 1, genre: 'rock', title: 'A' },
      { id: 2, genre: 'jazz', title: 'B' },
      { id: 3, genre: 'pop', title: 'C' },
    ],
  };
  const own = await startDemoVendor({ data });
  t.teardown(() => own.close());
  const { registry, syms } = musicCatalog(own.url);
  const from = http.sent.length;
  const r = await run('p = e1(1)\ne2(genre=p.genres)[id]', registry, syms);
  t.equal(r.status, 'succeeded', JSON.stringify(r.errors));
  t.same(new URL(sentSince(from)[1]!.url).searchParams.getAll('genre'), ['rock', 'jazz']);
  t.same(
    r.returns[0]!.rows.map((x) => x.id),
    [1, 2],
  );

  // A relation bound to the list field: the nest's call repeats the key as well.
  const at = http.sent.length;
  const nested = await run('e1(1)[id, songs[title]]', registry, syms);
  t.equal(nested.status, 'succeeded', JSON.stringify(nested.errors));
  t.same(nested.returns[0]!.rows, [{ id: 1, songs: [{ title: 'A' }, { title: 'B' }] }]);
  t.same(new URL(sentSince(at)[1]!.url).searchParams.getAll('genre'), ['rock', 'jazz']);

  // An update whose only field comes from a row that lacks it is refused before the PATCH.
  const update = syms.capabilitySymbol('music', 'updatePlaylist')!.sym;
  const before = http.sent.length;
  const empty = await run(`p = e1(2)\ne1(1).${update}(name=p.name)`, registry, syms);
  t.equal(empty.status, 'failed');
  t.match(empty.steps.n2!.error, {
    code: 'missing_argument',
    message: /step n2: `updatePlaylist` needs at least one of name, genres; the bound row left them empty/,
  });
  t.same(
    sentSince(before).map((s) => s.method),
    ['GET'],
    'only the read was sent',
  );
  t.equal(own.db().playlists![0] && (own.db().playlists![0] as Row).name, 'Evening', 'the playlist is unchanged');
});

t.test('a bound value breaking a constraint fails the step before any vendor call', async (t) => {
  const reviews = (v.db().reviews as Row[]).length;
  const from = http.sent.length;
  const r = await run('x = e2(1)\nbrewery:createReview(beerId=x.id, rating=x.ibu, author="ann")');
  t.equal(r.status, 'failed');
  t.match(r.steps.n2, {
    status: 'failed',
    calls: 0,
    error: {
      code: 'constraint_violation',
      message: /^step n2: `rating` must be at most 5; got \d+ from n1\.ibu$/,
      hint: /narrow them first/,
    },
  });
  t.same(
    sentSince(from).map((s) => s.method),
    ['GET'],
    'no POST was sent',
  );
  t.equal((v.db().reviews as Row[]).length, reviews, 'no review was written');
});

t.test('a list in a JSON body is an array; with array_style comma, one joined query key', async (t) => {
  const { registry } = musicCatalog('http://vendor.invalid');
  const create = registry.capability('music', 'createPlaylist')!;
  const req = buildRequest('http://vendor.invalid', create, { name: 'Mix', genres: ['rock', 'jazz'] });
  t.same(JSON.parse(req.body as string), { name: 'Mix', genres: ['rock', 'jazz'] });
  const list = registry.capability('music', 'listSongs')!;
  const comma = { ...list, http: { ...list.http, array_style: 'comma' as const } };
  t.equal(
    new URL(buildRequest('http://v.invalid', comma, { genre: ['rock', 'jazz'] }).url).search,
    '?genre=rock%2Cjazz',
  );
  t.equal(
    new URL(buildRequest('http://v.invalid', list, { genre: ['rock', 'jazz'] }).url).search,
    '?genre=rock&genre=jazz',
  );
});

/** A small catalog over playlists (with a list of genres) and songs (filtered by one or several genres). */
function musicCatalog(url: string): { registry: Registry; syms: SymbolTable; cgs: Cgs } {
  const c = compileSource([
    {
      file: 'catalog.yaml',
      text: `catalog:\n  entry_id: music\n  version: 1\n  label: Music\n  description: Songs.\n  backend: {url: "${url}"}\n`,
    },
    {
      file: 'domain.yaml',
      text: `entities:
  Playlist:
    description: A playlist.
    fields:
      id: {type: integer, description: The id}
      name: {type: string, description: Its name}
      genres: {type: array, items: string, description: Genres it plays}
    relations:
      songs: {target: Song, cardinality: many, capability: listSongs, bind: {genre: genres}}
  Song:
    description: A song.
    fields:
      id: {type: integer, description: The id}
      genre: {type: string, description: Its genre}
      title: {type: string, description: Its title}
capabilities:
  getPlaylist: {kind: get, entity: Playlist, params: [id]}
  createPlaylist:
    kind: create
    entity: Playlist
    params:
      name: {required: true}
      genres:
        type: string
        many: true
  updatePlaylist:
    kind: update
    entity: Playlist
    params:
      id: null
      name: null
      genres:
        type: string
        many: true
  listSongs:
    kind: query
    entity: Song
    params:
      genre:
        many: true
  getSong: {kind: get, entity: Song, params: [id]}
mappings:
  getPlaylist: GET /playlists/{id}
  createPlaylist: POST /playlists
  updatePlaylist: PATCH /playlists/{id}
  listSongs: GET /songs
  getSong: GET /songs/{id}
`,
    },
  ]);
  if (!c.cgs || !c.cgs_hash) throw new Error(JSON.stringify(c.diagnostics));
  const registry = new Registry([{ ...registryEntry(c.cgs, c.cgs_hash, 'music.cgs.json'), base_url: url }]);
  const syms = new SymbolTable();
  syms.expose(registry, [
    { api: 'music', entity: 'Playlist' },
    { api: 'music', entity: 'Song' },
  ]);
  return { registry, syms, cgs: c.cgs };
}
