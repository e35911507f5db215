/**
 * The terminal's first steps (issue 16; SPEC "Command-line terminal", "Client-side workspace"):
 * `svc init` → `svc doctor` → `svc search` → `svc context` as subprocesses in a temp workspace
 * against a real svc server: the profile, the discovery cache merged by (api, entity), the
 * session files, the new-wave TSV on stdout, a client symbol table equal to the server's,
 * `out/NNNN-search/` once a session is active, `svc login` without device login (exit 3), and the
 * legacy `.svc/cgs/` layout removed with a notice.
 */
import t from 'tap';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { call, startStack } from '../_helpers/server.js';
import { hostSlug } from '../../cli/workspace/paths.js';
import { meta, records, sessionDir, term, workspace } from '../_helpers/terminal.js';

t.test('init → doctor → search → context', async (t) => {
  const stack = await startStack(t);
  const ws = await workspace(t);

  const init = await term(ws, ['init', '--server', stack.url, '--no-login']);
  t.equal(init.code, 0, init.stderr);
  const profileFile = join(ws, '.svc', 'profiles', 'default.json');
  t.same(JSON.parse(readFileSync(profileFile, 'utf8')), { server: stack.url });

  const doctor = await term(ws, ['doctor']);
  t.equal(doctor.code, 0, doctor.stdout);
  t.match(doctor.stdout, /ok: .* answers/);
  t.match(doctor.stdout, /ok: credentials: auth mode off, anonymous/);

  const search = await term(ws, ['search', 'beer', 'reviews']);
  t.equal(search.code, 0, search.stderr);
  t.match(search.stdout, '| `brewery:Review` |');
  const discovery = readFileSync(join(ws, '.svc', 'hosts', hostSlug(stack.url), 'discovery.tsv'), 'utf8').split('\n');
  t.equal(discovery[0], 'api\tentity\tlabel\tdescription\tcapabilities\tintent');
  t.ok(
    discovery.some((l) => l.startsWith('brewery\tReview\t')),
    'the rows are merged by (api, entity)',
  );

  // An unqualified name the discovery cache knows in one catalog; --verbose prints a banner on stderr.
  const ctx = await term(ws, ['context', '-i', 'beer reviews', '--verbose', 'Review']);
  t.equal(ctx.code, 0, ctx.stderr);
  t.match(ctx.stdout, /^form\tmeaning\ne1\(beerId=\$, rating=\$, author=\$\)\[\.\.\]\tbrewery:Review: /);
  t.match(ctx.stderr, /^# svc context: new client session [0-9a-f]{8}/);
  t.notMatch(ctx.stderr, /warning/);
  const dir = sessionDir(ws, stack.url);
  t.match(meta(dir), { server: stack.url, intent: 'beer reviews', catalog: /^brewery [0-9a-f]{64}$/ });
  t.ok(existsSync(join(dir, 'catalogs', 'brewery.json')));
  t.same(records(dir), ['0001-context']);
  t.equal(readFileSync(join(dir, 'out', '0001-context', 'wave.tsv'), 'utf8'), ctx.stdout);
  t.match(JSON.parse(readFileSync(join(dir, 'out', '0001-context', 'meta.json'), 'utf8')), {
    opened: true,
    seeds: ['brewery:Review'],
    domain_revision: 1,
  });
  t.equal(readFileSync(join(dir, 'latest'), 'utf8'), 'out/0001-context\n');

  // Federate a second catalog and expand the first: the new rows only.
  const more = await term(ws, ['context', 'helpdesk:Ticket', 'brewery:Beer']);
  t.equal(more.code, 0, more.stderr);
  t.notMatch(more.stdout, /\tbrewery:Review: /);
  t.match(more.stdout, /^e2\(.*\tbrewery:Beer: /m);
  t.match(more.stdout, /^e3\(.*\thelpdesk:Ticket: /m);
  t.notMatch(more.stderr, /warning/);
  const teaching = readFileSync(join(dir, 'teaching.tsv'), 'utf8');
  t.match(teaching, /^svc programs:/);
  t.ok(teaching.includes('\thelpdesk:Ticket: '), 'teaching.tsv is cumulative');
  const again = await term(ws, ['context', 'brewery:Beer']);
  t.equal(again.code, 0);
  t.equal(again.stdout, 'form\tmeaning\n', 'nothing new: the header alone');
  t.match(again.stderr, /already taught: e2 \(brewery:Beer\)/);

  // The client symbol table is the server's.
  const m = meta(dir);
  const server = (await call(stack.url, `/execute/${m.prompt_hash}/${m.session}/symbols`)).body;
  t.same(JSON.parse(readFileSync(join(dir, 'symbols.json'), 'utf8')), {
    entities: server.entities,
    capabilities: server.capabilities,
    relations: server.relations,
    domain_revision: server.domain_revision,
  });

  // With an active session, search also records out/NNNN-search/.
  const searched = await term(ws, ['search', 'tickets']);
  t.equal(searched.code, 0);
  const rec = records(dir).find((r) => r.endsWith('-search'));
  t.ok(rec, 'a search record');
  t.equal(readFileSync(join(dir, 'out', rec!, 'body.md'), 'utf8'), searched.stdout);
  t.ok(JSON.parse(readFileSync(join(dir, 'out', rec!, 'body.json'), 'utf8')).rows.length > 0);

  // --new starts another client session.
  const fresh = await term(ws, ['context', '--new', 'helpdesk:Customer']);
  t.equal(fresh.code, 0, fresh.stderr);
  t.match(fresh.stdout, /^form\tmeaning\ne1\(.*\thelpdesk:Customer: /);
  t.not(sessionDir(ws, stack.url), dir);
});

t.test('login without device login, and the legacy layout', async (t) => {
  const stack = await startStack(t);
  const ws = await workspace(t);
  t.equal((await term(ws, ['init', '--server', stack.url])).code, 0);
  const login = await term(ws, ['login']);
  t.equal(login.code, 3);
  t.match(login.stderr, /^device_login_unavailable: .* has no device login/);
  t.match(login.stderr, /hint: use an API key instead: `svc init --server .* --api-key <key>`/);

  mkdirSync(join(ws, '.svc', 'cgs', 'x'), { recursive: true });
  const cleaned = await term(ws, ['doctor']);
  t.equal(cleaned.code, 0);
  t.match(cleaned.stderr, /^svc: removed the old workspace layout .*cgs/);
  t.notOk(existsSync(join(ws, '.svc', 'cgs')));
});
