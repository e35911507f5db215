/**
 * Inbound auth for every terminal command (docs/cli.md "Exit status of the terminal commands"):
 * in mode `required`, no key and a wrong key are exit 3 for doctor, login, search, context and
 * run, with a line naming the problem and the `svc init --api-key` hint, whatever `--accept`;
 * a key of another tenant on the active context is 403 `forbidden` (exit 3, hint
 * `svc context --new` with the context's seeds) while search and `context --new` work with it.
 * In mode `optional` an anonymous profile works.
 */
import t from 'tap';
import { startStack } from '../_helpers/server.js';
import { InboundAuth, type AuthMode } from '../../server/auth/inbound-auth.js';
import { records, sessionDir, term, workspace, type Ran } from '../_helpers/terminal.js';

const ACME = 'key-acme-0a1b2c3d4e5f';
const GLOBEX = 'key-globex-6a7b8c9d0e1f';
const FORMATS = ['plain', 'toon', 'json', 'ndjson'];
const READ = 'e1(country="DE")[name]';

const auth = (mode: AuthMode) =>
  new InboundAuth({
    mode,
    apiKeys: [
      { key: ACME, tenant_id: 'acme', subject: 'alice' },
      { key: GLOBEX, tenant_id: 'globex', subject: 'bob' },
    ],
  });

const said = (r: Ran) => `exit ${r.code}\n${r.stdout}${r.stderr}`;

t.test('mode required: no key, a wrong key, another tenant', async (t) => {
  const stack = await startStack(t, { auth: auth('required') });
  const ws = await workspace(t);
  const init = (key?: string) => term(ws, ['init', '--server', stack.url, ...(key ? ['--api-key', key] : [])]);
  const hint = /\n {2}hint: set a valid key with `svc init --server http:\/\/127\.0\.0\.1:\d+ --api-key <key>`/;

  // Tenant acme opens a context.
  t.equal((await init(ACME)).code, 0);
  const doctor = await term(ws, ['doctor']);
  t.equal(doctor.code, 0, said(doctor));
  t.match(doctor.stdout, /ok: credentials: auth mode required, authenticated by api_key as alice \(tenant acme\)/);
  t.equal((await term(ws, ['search', 'brewery'])).code, 0);
  t.equal((await term(ws, ['context', 'brewery:Brewery'])).code, 0);
  t.equal((await term(ws, ['run', '-e', READ])).code, 0);
  const dir = sessionDir(ws, stack.url);
  const made = records(dir).length;

  for (const [key, code, problem, because] of [
    [
      undefined,
      'auth_required',
      'the profile has no API key',
      'it requires credentials and the profile has no API key',
    ],
    ['wrong-key', 'auth_unknown_key', "the profile's API key is not accepted", 'the API key is not accepted'],
  ] as const) {
    t.equal((await init(key)).code, 0);
    const doc = await term(ws, ['doctor']);
    t.equal(doc.code, 3, said(doc));
    t.match(doc.stdout, `problem: the server refused the credentials (${code}): ${because}; run \`svc init --server`);
    t.match(doc.stdout, '--api-key <key>`');

    const login = await term(ws, ['login']);
    t.equal(login.code, 3, said(login));
    t.match(
      login.stderr,
      /^device_login_unavailable: .* has no device login .*\n {2}hint: use an API key instead: `svc init --server .* --api-key <key>`/,
    );

    const refused = new RegExp(`^${code}: http://127\\.0\\.0\\.1:\\d+ refused the credentials \\(401\\): ${problem}; `);
    for (const args of [
      ['search', 'brewery'],
      ['context', 'brewery:Beer'],
      ['context', '--new', 'brewery:Beer'],
    ]) {
      const r = await term(ws, args);
      t.equal(r.code, 3, `${args.join(' ')}: ${said(r)}`);
      t.match(r.stderr, refused, args.join(' '));
      t.match(r.stderr, hint, args.join(' '));
    }
    for (const accept of FORMATS) {
      const r = await term(ws, ['run', '--accept', accept, '-e', READ]);
      t.equal(r.code, 3, `run --accept ${accept}: ${said(r)}`);
      t.match(r.stderr, refused, `run --accept ${accept}: the code and message, whatever the format`);
      t.match(r.stderr, hint, `run --accept ${accept}`);
      t.equal(r.stdout, '', 'nothing on stdout');
    }
  }
  t.equal(records(dir).length, made, 'a refused run records nothing');

  // The profile now holds globex's key while acme's context is still current.
  t.equal((await init(GLOBEX)).code, 0);
  const bob = await term(ws, ['doctor']);
  t.equal(bob.code, 0, said(bob));
  t.match(bob.stdout, /as bob \(tenant globex\)/);
  const forbidden =
    /^forbidden: http:\/\/127\.0\.0\.1:\d+ refused the credentials \(403\): this execute session belongs to another tenant\n {2}hint: the active context was opened with the key of another tenant .*open a new context with `svc context --new /;
  for (const accept of FORMATS) {
    const r = await term(ws, ['run', '--accept', accept, '-e', READ]);
    t.equal(r.code, 3, `run --accept ${accept}: ${said(r)}`);
    t.match(r.stderr, forbidden, `run --accept ${accept}`);
  }
  const extend = await term(ws, ['context', 'brewery:Beer']);
  t.equal(extend.code, 3, said(extend));
  t.match(extend.stderr, forbidden);
  t.match(extend.stderr, '`svc context --new brewery:Brewery brewery:Beer`', 'the seeds to open it again');
  t.equal(sessionDir(ws, stack.url), dir, 'still the same current context');

  const search = await term(ws, ['search', 'brewery']);
  t.equal(search.code, 0, said(search));
  const fresh = await term(ws, ['context', '--new', 'brewery:Brewery']);
  t.equal(fresh.code, 0, said(fresh));
  t.not(sessionDir(ws, stack.url), dir, 'a new context');
  const run = await term(ws, ['run', '-e', READ]);
  t.equal(run.code, 0, said(run));
  t.match(run.stdout, /^brewery:Brewery: \d+ (of \d+ )?rows\n/);
  const login = await term(ws, ['login']);
  t.equal(login.code, 3, 'a valid key does not make device login exist');
  t.match(login.stderr, /^device_login_unavailable: /);
});

t.test('mode optional: anonymous works, a wrong key does not', async (t) => {
  const stack = await startStack(t, { auth: auth('optional') });
  const ws = await workspace(t);
  t.equal((await term(ws, ['init', '--server', stack.url])).code, 0);
  const doctor = await term(ws, ['doctor']);
  t.equal(doctor.code, 0, said(doctor));
  t.match(doctor.stdout, /ok: credentials: auth mode optional, anonymous/);
  t.equal((await term(ws, ['search', 'brewery'])).code, 0);
  t.equal((await term(ws, ['context', '--new', 'brewery:Brewery'])).code, 0);
  const run = await term(ws, ['run', '--accept', 'json', '-e', READ]);
  t.equal(run.code, 0, said(run));
  t.ok(JSON.parse(run.stdout).count > 0);
  t.equal((await term(ws, ['login'])).code, 3);

  t.equal((await term(ws, ['init', '--server', stack.url, '--api-key', 'wrong-key'])).code, 0);
  const wrong = await term(ws, ['run', '-e', READ]);
  t.equal(wrong.code, 3, said(wrong));
  t.match(
    wrong.stderr,
    /^auth_unknown_key: .*refused the credentials \(401\): the profile's API key is not accepted; /,
  );
});
