/**
 * Programs compiled by `svc run` (issue 16): the commit id of a locally compiled plan equals the
 * one the server computes for the same program text (`mode=plan` over HTTP); `p#` is rejected by
 * the terminal (exit 1), compile errors show a caret (exit 1), bad flags are usage errors (exit 2).
 */
import t from 'tap';
import { runProgram, startStack } from '../_helpers/server.js';
import { meta, sessionDir, term, workspace } from '../_helpers/terminal.js';

t.test('the commit id of `svc run` is the one the server computes for the same text', async (t) => {
  const stack = await startStack(t);
  const ws = await workspace(t);
  t.equal((await term(ws, ['init', '--server', stack.url])).code, 0);
  t.equal((await term(ws, ['context', '--new', 'brewery:Brewery', 'brewery:Beer'])).code, 0);
  const m = meta(sessionDir(ws, stack.url));
  for (const program of [
    'e1(country="DE")[name,city]',
    'x = e1(city="Berlin")[id]\nx.beers[name,style]',
    'm1(name="Pale Test", city="Oslo", country="NO")',
  ]) {
    const local = await term(ws, ['run', '--mode', 'plan', '--accept', 'json', '-e', program]);
    t.equal(local.code, 0, local.stdout + local.stderr);
    const remote = await runProgram(stack.url, `/execute/${m.prompt_hash}/${m.session}`, program, 'mode=plan');
    t.equal(remote.status, 200, remote.text);
    t.match(remote.body._meta.svc.commit_id, /^[0-9a-f]{64}$/);
    t.equal(JSON.parse(local.stdout)._meta.svc.commit_id, remote.body._meta.svc.commit_id, program);
  }
});

t.test('p#, compile errors and bad flags', async (t) => {
  const stack = await startStack(t);
  const ws = await workspace(t);
  t.equal((await term(ws, ['init', '--server', stack.url])).code, 0);
  t.equal((await term(ws, ['context', 'brewery:Brewery'])).code, 0);
  const legacy = await term(ws, ['run', '-e', 'e1(p1="Berlin")[name]']);
  t.equal(legacy.code, 1);
  t.match(legacy.stderr, /^legacy_symbol: the terminal rejects p# symbols/);
  const compileError = await term(ws, ['run', '-e', 'e1(nope=1)[name]']);
  t.equal(compileError.code, 1);
  t.match(compileError.stderr, /unknown_argument at 1:4: .*\n {2}1 \| e1\(nope=1\)\[name\]/);
  for (const args of [
    ['--accept', 'xml'],
    ['--mode', 'live'],
    ['--wait=maybe'],
    ['--plan-commit-ref', 'x1'],
    ['--nope'],
  ]) {
    const r = await term(ws, ['run', ...args, '-e', 'e1[name]']);
    t.equal(r.code, 2, args.join(' '));
  }
  t.equal((await term(ws, ['run', '-e', '  '])).code, 2, 'an empty program');
  t.equal((await term(ws, ['run', '--mode', 'plan', '-e', 'wait(o1)'])).code, 2, 'a continuation has no dry-run');
});
