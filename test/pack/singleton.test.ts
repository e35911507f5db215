/**
 * `singleton: true` in the authoring format: a get of the one row its path answers (`GET /user`,
 * `GET /repos/{owner}/{repo}/readme`). What the CGS keeps (no id parameter, even beside a
 * parameter named like the id field), the refusals with their positions, and an entity read only
 * as a singleton, which needs no id field.
 */
import t from 'tap';
import { compileSource, type Capability, type SourceText } from '../../pack/index.js';

/** A forge with users, a readme and a rate limit; `extra` is appended under `capabilities:`. */
function forge(extra = '', readmeId = ''): SourceText[] {
  return [
    {
      file: 'catalog.yaml',
      text: 'catalog: {entry_id: forge, version: 1, label: Forge, description: A forge., backend: {url: "https://api.example.com"}}\n',
    },
    {
      file: 'domain.yaml',
      text: `entities:
  User:
    id: login
    fields: {login: string, name: string}
  Readme:${readmeId}
    fields: {path: string, content: string}
capabilities:
  getUser:
    kind: get
    entity: User
    params: [login]
  getMe:
    kind: get
    singleton: true
    entity: User
    params: {login: {type: string, description: Ignored by the vendor}}
  getReadme:
    kind: get
    singleton: true
    entity: Readme
    params: {owner: {type: string, required: true}, repo: {type: string, required: true}}
${extra}
mappings:
  getUser: GET /users/{login}
  getMe: GET /user
  getReadme: {method: GET, path: "/repos/{owner}/{repo}/readme", response: {path: data}}
`,
    },
  ];
}

const cap = (caps: Capability[], name: string) => caps.find((c) => c.name === name)!;
const codes = (r: ReturnType<typeof compileSource>) =>
  r.diagnostics.map((d) => `${d.code}@${d.span?.line ?? '?'}:${d.span?.col ?? '?'}`);

t.test('a singleton get packs with no id parameter; the get by id is unchanged', async (t) => {
  const r = compileSource(forge());
  t.same(r.diagnostics, []);
  const caps = r.cgs!.capabilities;
  t.match(cap(caps, 'getMe'), { kind: 'get', singleton: true, returns: 'row' });
  t.notOk('id_param' in cap(caps, 'getMe'), 'a parameter named like the id field is not its id');
  t.match(cap(caps, 'getReadme'), { singleton: true, returns: 'row', http: { path: '/repos/{owner}/{repo}/readme' } });
  t.same(
    cap(caps, 'getReadme').params.map((p) => [p.name, p.required]),
    [
      ['owner', true],
      ['repo', true],
    ],
  );
  t.equal(cap(caps, 'getUser').id_param, 'login');
  t.notOk('singleton' in cap(caps, 'getUser'), 'absent, never written as false');
});

t.test('singleton: false is the default and keeps the hash', async (t) => {
  const plain = compileSource(forge('  listUsers: {kind: query, entity: User}\n').map(withListMapping));
  const written = compileSource(
    forge('  listUsers: {kind: query, entity: User, singleton: false}\n').map(withListMapping),
  );
  t.same(written.diagnostics, []);
  t.equal(written.cgs_hash, plain.cgs_hash);
});

function withListMapping(s: SourceText): SourceText {
  return { ...s, text: s.text.replace('mappings:\n', 'mappings:\n  listUsers: GET /users\n') };
}

t.test('singleton on another kind is bad_capability at the key', async (t) => {
  const r = compileSource(forge('  listUsers: {kind: query, entity: User, singleton: true}\n').map(withListMapping));
  t.same(codes(r), ['bad_capability@22:53']);
  t.match(r.diagnostics[0], {
    message: /query capability `listUsers` is marked singleton, which only a get can be/,
    hint: /remove `singleton: true`/,
  });
});

t.test('a singleton with an id_param is bad_capability at the id_param', async (t) => {
  const r = compileSource(
    forge().map((s) => ({
      ...s,
      text: s.text.replace(
        '    singleton: true\n    entity: User\n',
        '    singleton: true\n    entity: User\n    id_param: login\n',
      ),
    })),
  );
  t.same(codes(r), ['bad_capability@16:15']);
  t.match(r.diagnostics[0], {
    message: /singleton get `getMe` has an id parameter `login`/,
    hint: /remove `id_param`/,
  });
});

t.test('a get without an id and without singleton is still bad_capability', async (t) => {
  const r = compileSource(
    forge().map((s) => ({
      ...s,
      text: s.text.replace('    singleton: true\n    entity: Readme', '    entity: Readme'),
    })),
  );
  t.match(r.diagnostics, [
    { code: 'missing_id_field', message: /entity `Readme` has no id field/ },
    { code: 'bad_capability', message: /get capability `getReadme` has no id parameter/ },
  ]);
});

t.test('an entity read only as a singleton needs no id field; one read otherwise does', async (t) => {
  t.same(compileSource(forge()).diagnostics, [], 'Readme has no field `id`');
  const named = compileSource(forge('', '\n    id: path'));
  t.same(named.diagnostics, []);
  t.equal(named.cgs!.entities.find((e) => e.name === 'Readme')!.id_field, 'path');
  const listed = compileSource(
    forge('  listReadmes: {kind: query, entity: Readme}\n').map((s) => ({
      ...s,
      text: s.text.replace('mappings:\n', 'mappings:\n  listReadmes: GET /readmes\n'),
    })),
  );
  t.match(listed.diagnostics, [{ code: 'missing_id_field', message: /entity `Readme` has no id field `id`/ }]);
  const acted = compileSource(
    forge('  archiveReadme: {kind: action, entity: Readme, params: {id: string}}\n').map((s) => ({
      ...s,
      text: s.text.replace('mappings:\n', 'mappings:\n  archiveReadme: POST /readmes/{id}/archive\n'),
    })),
  );
  t.match(acted.diagnostics, [{ code: 'missing_id_field' }], 'an action on one of its rows needs its id');
});
