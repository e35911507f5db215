/**
 * Damaged workspace files (issue 41 items 12 and 10): a session file of `.svc/` that is not JSON,
 * not of the shape svc wrote, not a regular file (a directory, a FIFO: never waited on) or without
 * its server session is `workspace_damaged` (exit 2) naming the file, with the hint
 * `svc context --new`; never `internal_error` (exit 70), a stack trace or a hang. `svc context
 * --new` then starts a working session. The real `svc` process against a real svc server and the
 * json-server vendor.
 */
import t, { type Test } from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startStack } from '../_helpers/server.js';
import { sessionDir, term, workspace, type Ran } from '../_helpers/terminal.js';

function damaged(t: Test, ran: Ran, file: RegExp): void {
  t.equal(ran.code, 2, ran.stderr);
  t.match(ran.stderr, /^workspace_damaged: /);
  t.match(ran.stderr, file);
  t.match(ran.stderr, /\n {2}hint: run `svc context --new` with api:Entity seeds/);
  t.notMatch(ran.stderr, /internal_error|\n\s+at /, 'no internal error, no stack trace');
}

t.test('a damaged session file is workspace_damaged with the svc context --new hint', async (t) => {
  const stack = await startStack(t);
  const ws = await workspace(t);
  t.equal((await term(ws, ['init', '--server', stack.url])).code, 0);
  t.equal((await term(ws, ['context', 'brewery:Brewery'])).code, 0);
  const dir = sessionDir(ws, stack.url);
  const symbols = join(dir, 'symbols.json');
  const good = readFileSync(symbols, 'utf8');
  const program = 'e1(country="DE")[name]';

  writeFileSync(symbols, '{');
  damaged(t, await term(ws, ['run', '-e', program]), /symbols\.json is not valid JSON/);
  damaged(t, await term(ws, ['context', 'brewery:Beer']), /symbols\.json is not valid JSON/);

  writeFileSync(symbols, '{"entities": {}}\n');
  damaged(t, await term(ws, ['run', '-e', program]), /symbols\.json has no `entities` list/);
  writeFileSync(symbols, JSON.stringify({ ...JSON.parse(good), domain_revision: 'one' }));
  damaged(t, await term(ws, ['run', '-e', program]), /symbols\.json has no numeric `domain_revision`/);

  rmSync(symbols);
  mkdirSync(symbols);
  damaged(t, await term(ws, ['run', '-e', program]), /symbols\.json is not a regular file \(a directory\)/);
  rmSync(symbols, { recursive: true });
  execFileSync('mkfifo', [symbols]);
  damaged(t, await term(ws, ['run', '-e', program]), /symbols\.json is not a regular file \(a FIFO\)/);
  rmSync(symbols);
  writeFileSync(symbols, good);
  t.equal((await term(ws, ['run', '-e', program])).code, 0, 'the restored file works again');

  const cached = join(dir, 'catalogs', 'brewery.json');
  const catalog = readFileSync(cached, 'utf8');
  writeFileSync(cached, catalog.slice(0, 100));
  damaged(t, await term(ws, ['run', '-e', program]), /brewery\.json is not valid JSON/);
  writeFileSync(cached, catalog);

  const meta = join(dir, 'meta.txt');
  writeFileSync(meta, '{');
  damaged(t, await term(ws, ['run', '-e', program]), /meta\.txt names no server session/);

  const renewed = await term(ws, ['context', '--new', 'brewery:Brewery']);
  t.equal(renewed.code, 0, renewed.stderr);
  const ran = await term(ws, ['run', '-e', program]);
  t.equal(ran.code, 0, ran.stderr);
});
