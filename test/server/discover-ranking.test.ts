/**
 * How discovery ranks (server/catalog/discover.ts): intent and catalog words reduced alike
 * (`releases` meets `Release`, `branches` meets `Branch`), a word many entities have worth less
 * than a rare one (so `repository`, on every repository-ish entity, does not bury `Release`), and
 * an entity whose whole name the intent says ahead of longer names holding it (`Commit` before
 * `GitCommit` and `CommitComment`).
 */
import t from 'tap';
import { discover } from '../../server/catalog/discover.js';
import { keyOf, singularOf, wordsOf } from '../../server/catalog/discover-words.js';
import { sourceRegistry } from '../_helpers/registry.js';

const REPO_PARAMS = '{owner: {type: string, required: true}, repo: {type: string, required: true}}';
const entity = (name: string, description: string) =>
  `  ${name}:\n    description: ${description}\n    id: id\n    fields: {id: integer, name: string}`;
const list = (cap: string, e: string, description: string) =>
  `  ${cap}:\n    kind: query\n    entity: ${e}\n    description: ${description}\n    params: ${REPO_PARAMS}`;
const ENTITIES: Array<[string, string, string, string]> = [
  ['Repository', 'A repository.', 'listRepos', 'List repositories of a user'],
  ['MinimalRepository', 'Minimal repository.', 'listForks', 'List forks of a repository'],
  ['TeamRepository', "A team's access to a repository.", 'listTeamRepos', 'List team repositories'],
  ['FullRepository', 'Full repository with releases and branches counted.', 'listStarred', 'Repositories starred'],
  ['Release', 'A release.', 'reposListReleases', 'List releases'],
  ['ReleaseAsset', 'Data related to a release.', 'listReleaseAssets', 'List release assets of a repository'],
  ['Commit', 'Commit.', 'reposListCommits', 'List commits'],
  ['GitCommit', 'Low-level Git commit operations within a repository.', 'gitListCommits', 'List git commits'],
  ['CommitComment', 'Commit comment.', 'listCommitComments', 'List commit comments for a repository'],
  ['ShortBranch', 'Short branch.', 'reposListBranches', 'List branches'],
];
const source = [
  'catalog: {entry_id: forge, version: 1, label: Forge, description: A code forge, backend: {url: "http://127.0.0.1:1"}}',
  'entities:',
  ...ENTITIES.map(([e, d]) => entity(e, d)),
  'capabilities:',
  ...ENTITIES.map(([e, , c, d]) => list(c, e, d)),
  'mappings:',
  ...ENTITIES.map(([e, , c]) => `  ${c}: GET /repos/{owner}/{repo}/${e.toLowerCase()}`),
].join('\n');
const { registry } = sourceRegistry(source, 'forge.yaml');
const top = (intent: string, n = 3) => discover(registry, intent, { limit: n }).map((r) => r.entity);

t.test('inflections share a key; rows show the singular', async (t) => {
  for (const [a, b] of [
    ['releases', 'release'],
    ['branches', 'branch'],
    ['statuses', 'status'],
    ['starred', 'stars'],
    ['created', 'create'],
    ['repositories', 'repository'],
    ['addresses', 'address'],
  ])
    t.equal(keyOf(a!), keyOf(b!), `${a} ~ ${b}`);
  t.equal(singularOf('releases'), 'release');
  t.same(
    wordsOf('Who starred the releases?').map((w) => w.shown),
    ['starred', 'release'],
    'stop words out',
  );
});

t.test('a rare word decides over one every entity has', async (t) => {
  t.equal(top('releases of a repository')[0], 'Release');
  t.equal(top('branches of a repository')[0], 'ShortBranch');
  const [first] = discover(registry, 'releases of a repository', { limit: 1 });
  t.same(first!.matched, ['release'], 'matched words in their singular form');
});

t.test('an entity whose whole name the intent says comes first', async (t) => {
  const [first, ...next] = top('commits of a repository');
  t.equal(first, 'Commit');
  t.same(next.sort(), ['CommitComment', 'GitCommit'], 'the longer names holding the word after it');
  t.equal(top('commit comments')[0], 'CommitComment');
});

t.test('scores are rounded and sorted; an empty intent lists every entity', async (t) => {
  const rows = discover(registry, 'repository releases', { limit: 20 });
  t.ok(rows.every((r) => Math.round(r.score * 100) / 100 === r.score));
  t.ok(rows.every((r, i) => i === 0 || rows[i - 1]!.score >= r.score));
  t.equal(discover(registry, '', { limit: 50 }).length, ENTITIES.length);
});
