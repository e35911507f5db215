/**
 * Terminal errors (SPEC "Errors", "Client session (terminal)", "Command-line terminal" rule 1):
 * no profile, no active context, `--new` with a bare name, an ambiguous unqualified name (lists
 * the api:Entity options), unknown names, catalogs and entities: all exit 2; unreachable server,
 * missing or wrong credentials: exit 3; the right key works and its profile is mode 0600.
 */
import t from 'tap';
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startStack } from '../_helpers/server.js';
import { InboundAuth } from '../../server/auth/inbound-auth.js';
import { hostSlug } from '../../cli/workspace/paths.js';
import { term, workspace } from '../_helpers/terminal.js';

t.test('usage errors: exit 2', async (t) => {
  const stack = await startStack(t);
  const ws = await workspace(t);

  const noProfile = await term(ws, ['search', 'beer']);
  t.equal(noProfile.code, 2);
  t.match(noProfile.stderr, /^no_profile: .*\n {2}hint: run `svc init/);
  t.equal((await term(ws, ['init', '--server', 'ftp://x'])).code, 2);
  t.equal((await term(ws, ['init', '--server', stack.url])).code, 0);

  const noContext = await term(ws, ['run', '-e', 'e1[name]']);
  t.equal(noContext.code, 2);
  t.match(
    noContext.stderr,
    /^no_active_context: no active context for .*\n {2}hint: run `svc context` with api:Entity seeds/,
  );

  const bare = await term(ws, ['context', '--new', 'Beer']);
  t.equal(bare.code, 2);
  t.match(bare.stderr, /^bad_seed: --new takes entry_id:Entity seeds/);

  // Two catalogs of the cache have an entity of that name.
  const cache = join(ws, '.svc', 'hosts', hostSlug(stack.url), 'discovery.tsv');
  mkdirSync(join(cache, '..'), { recursive: true });
  writeFileSync(
    cache,
    'api\tentity\tlabel\tdescription\tcapabilities\tintent\nbrewery\tBeer\tB\t\t\t\nhelpdesk\tBeer\tH\t\t\t\n',
  );
  const ambiguous = await term(ws, ['context', 'Beer']);
  t.equal(ambiguous.code, 2);
  t.match(ambiguous.stderr, /^ambiguous_entity: .*brewery:Beer, helpdesk:Beer/);
  t.equal((await term(ws, ['context', 'Nothing'])).code, 2, 'a name the cache does not know');
  t.equal((await term(ws, ['context', 'brewery:Nope'])).code, 2, 'an entity the catalog does not have');
  t.equal((await term(ws, ['context', 'nope:Beer'])).code, 2, 'a catalog the server does not have');
  t.equal((await term(ws, ['run', '-e', 'e1[name]'])).code, 2, 'still no active context');
});

t.test('unreachable server and credentials: exit 3', async (t) => {
  const KEY = 'key-terminal-0a1b2c3d';
  const stack = await startStack(t, {
    auth: new InboundAuth({ mode: 'required', apiKeys: [{ key: KEY, tenant_id: 'acme', subject: 'tester' }] }),
  });
  const down = await startStack(t);
  await down.close();

  const ws = await workspace(t);
  t.equal((await term(ws, ['init', '--server', down.url])).code, 0);
  const doctor = await term(ws, ['doctor']);
  t.equal(doctor.code, 3);
  t.match(doctor.stdout, /problem: cannot reach/);
  const search = await term(ws, ['search', 'beer']);
  t.equal(search.code, 3);
  t.match(search.stderr, /^server_unreachable: cannot reach/);

  t.equal((await term(ws, ['init', '--server', stack.url])).code, 0);
  const anonymous = await term(ws, ['doctor']);
  t.equal(anonymous.code, 3);
  t.match(anonymous.stdout, /problem: the server refused the credentials \(auth_required\)/);

  t.equal((await term(ws, ['init', '--server', stack.url, '--api-key', 'wrong-key'])).code, 0);
  const wrong = await term(ws, ['doctor']);
  t.equal(wrong.code, 3);
  t.match(wrong.stdout, /the API key is not accepted/);
  const refused = await term(ws, ['context', 'brewery:Beer']);
  t.equal(refused.code, 3);
  t.match(refused.stderr, /refused the credentials \(401\)/);

  t.equal((await term(ws, ['init', '--server', stack.url, '--api-key', KEY])).code, 0);
  const profile = join(ws, '.svc', 'profiles', 'default.json');
  t.equal(statSync(profile).mode & 0o777, 0o600, 'a profile with a key is 0600');
  const ok = await term(ws, ['doctor']);
  t.equal(ok.code, 0, ok.stdout);
  t.match(ok.stdout, /authenticated by api_key as tester \(tenant acme\)/);
  t.equal((await term(ws, ['context', 'brewery:Brewery'])).code, 0);
  const run = await term(ws, ['run', '-e', 'e1(country="DE")[name]']);
  t.equal(run.code, 0, run.stderr);
});
