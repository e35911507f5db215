/**
 * The further keys of an `api_key` auth block (`also`, docs/authoring.md "Outbound auth"): packed
 * into the CGS in order, refused as `bad_auth` at their line when a key lacks `in`, `name` or
 * `env`, when two keys share a header (whatever its case) or query parameter, or when another
 * scheme carries `also`; a catalog without further keys packs as before, and so does `also: []`.
 */
import t from 'tap';
import { compileSource, verifyCgs, type SourceText } from '../../pack/index.js';

const catalog = (auth: string): SourceText => ({
  file: 'catalog.yaml',
  text: `catalog:
  entry_id: memo
  version: 1
  label: Memo
  description: Notes.
  backend: {url: "https://memo.example"}
  auth:
${auth}`,
});
const REST: SourceText[] = [
  {
    file: 'entities.yaml',
    text: 'entities:\n  Note:\n    description: A note.\n    fields: {id: integer, title: string}\n    id: id\n',
  },
  {
    file: 'capabilities.yaml',
    text: 'capabilities:\n  getNote: {kind: get, entity: Note, description: One note., params: [id]}\n',
  },
  { file: 'mappings.yaml', text: 'mappings:\n  getNote: {method: GET, path: "/notes/{id}"}\n' },
];
const KEY = '    scheme: api_key\n    in: header\n    name: X-App-Key\n    env: MEMO_KEY\n';
const compile = (auth: string) => compileSource([catalog(auth), ...REST]);

t.test('further keys are packed in order, with the first', async (t) => {
  const r = compile(
    KEY +
      '    also:\n      - {in: header, name: X-App-Token, env: MEMO_TOKEN}\n      - {in: query, name: app_id, env: MEMO_APP}\n',
  );
  t.same(r.diagnostics, []);
  t.same(r.cgs?.auth, {
    scheme: 'api_key',
    in: 'header',
    name: 'X-App-Key',
    env: 'MEMO_KEY',
    also: [
      { in: 'header', name: 'X-App-Token', env: 'MEMO_TOKEN' },
      { in: 'query', name: 'app_id', env: 'MEMO_APP' },
    ],
  });
});

t.test('without further keys, or with an empty list, the CGS and its hash are as before', async (t) => {
  const plain = compile(KEY);
  const empty = compile(KEY + '    also: []\n');
  t.ok(plain.cgs_hash);
  t.equal(empty.cgs_hash, plain.cgs_hash, 'also: [] is no also');
  t.same(Object.keys(plain.cgs!.auth).sort(), ['env', 'in', 'name', 'scheme'], 'no also key is written');
});

t.test('bad_auth: an incomplete key, a duplicate place, also on another scheme', async (t) => {
  const cases: Array<[string, string, RegExp, number]> = [
    [
      KEY + '    also:\n      - {in: header, name: X-App-Token}\n',
      'no env',
      /further key 1 of the auth block needs `env`/,
      13,
    ],
    [
      KEY + '    also:\n      - {in: query, name: app_id, env: MEMO_APP}\n      - {name: X, in: header}\n',
      'no env, second key',
      /further key 2 of the auth block needs `env`/,
      14,
    ],
    [
      KEY + '    also:\n      - {in: header, name: x-app-key, env: MEMO_TOKEN}\n',
      'the first key again, in another case',
      /further key 1 of the auth block is sent in the header as `x-app-key`, like an earlier key/,
      13,
    ],
    [
      KEY + '    also:\n      - {in: query, name: id, env: A}\n      - {in: query, name: id, env: B}\n',
      'one query parameter twice',
      /further key 2 .* sent in the query as `id`/,
      14,
    ],
    [
      '    scheme: bearer\n    env: MEMO_TOKEN\n    also:\n      - {in: header, name: X-App-Token, env: MEMO_APP}\n',
      'also on bearer',
      /auth scheme `bearer` takes no `also`/,
      11,
    ],
  ];
  for (const [auth, what, message, line] of cases) {
    const r = compile(auth);
    t.notOk(r.cgs, `${what}: nothing is packed`);
    t.match(r.diagnostics, [{ code: 'bad_auth', message, hint: /./, span: { file: 'catalog.yaml', line } }], what);
  }
  const shape = compile(KEY + '    also:\n      - {in: cookie, name: c, env: C}\n');
  t.match(shape.diagnostics, [{ code: 'schema_violation' }], 'a place svc cannot send is a schema violation');
});

t.test('a CGS whose further key is malformed is refused on load', async (t) => {
  const r = compile(KEY + '    also:\n      - {in: header, name: X-App-Token, env: MEMO_TOKEN}\n');
  const cgs = structuredClone(r.cgs!) as unknown as { auth: { also: Array<Record<string, unknown>> } };
  delete cgs.auth.also[0]!.env;
  const v = verifyCgs(JSON.stringify(cgs), 'memo.v1.cgs.json');
  t.match(
    v,
    { ok: false, problems: [{ code: 'cgs_invalid', path: '/auth/also/0' }] },
    'the CGS schema wants in, name and env',
  );
});
