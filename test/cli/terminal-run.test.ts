/**
 * `svc run` (issue 16; SPEC "Command-line terminal" rules 3-5) as a subprocess against a real svc
 * server and the json-server vendor: a read in plain text (the default), a program on stdin as
 * JSON, `page(pgN)[..]` on the same session, a write refused without review, dry-run with
 * `--mode plan` and the live run with `--plan-commit-ref`, `--wait=false` then `wait(oN)` and
 * `cancel(oN)`, a relation over bound rows, and
 * the records `out/NNNN-run/` and `out/NNNN-plan/`.
 */
import t from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startStack } from '../_helpers/server.js';
import { records, sessionDir, term, workspace, type Ran } from '../_helpers/terminal.js';

t.test('reads, pages, reviewed writes and background runs', async (t) => {
  const stack = await startStack(t);
  const ws = await workspace(t);
  t.equal((await term(ws, ['init', '--server', stack.url])).code, 0);
  const ctx = await term(ws, ['context', '--new', 'brewery:Review', 'brewery:Brewery']);
  t.equal(ctx.code, 0, ctx.stderr);
  const dir = sessionDir(ws, stack.url);

  const read = await term(ws, ['run', '-e', 'e1(rating=5)[id,rating]']);
  t.equal(read.code, 0, read.stderr);
  t.match(read.stdout, /^brewery:Review: \d+ (of \d+ )?rows\nid +rating\n/);
  t.notMatch(read.stdout, /^# /m, 'a clean read prints no meta lines');

  const list = await term(ws, ['run', '--accept', 'json'], 'e1[id]\n');
  t.equal(list.code, 0, list.stderr);
  const listed = JSON.parse(list.stdout);
  t.equal(listed.count, 25);
  t.match(listed.more, /^page\(pg\d+\)\[\.\.\]$/);
  const runRec = records(dir).at(-1)!;
  t.match(runRec, /^\d{4}-run$/);
  for (const f of ['program.svc', 'plan.json', 'body.json', 'body.txt', 'artifact.json', 'artifact.txt'])
    t.ok(existsSync(join(dir, 'out', runRec, f)), `${runRec}/${f}`);
  t.equal(readFileSync(join(dir, 'out', runRec, 'program.svc'), 'utf8'), 'e1[id]\n');
  t.equal(readFileSync(join(dir, 'out', runRec, 'body.txt'), 'utf8'), list.stdout);
  t.match(JSON.parse(readFileSync(join(dir, 'out', runRec, 'body.json'), 'utf8')), {
    http_status: 200,
    accept: 'json',
    meta: { mode: 'live', status: 'succeeded' },
  });
  t.match(JSON.parse(readFileSync(join(dir, 'out', runRec, 'plan.json'), 'utf8')), {
    commit_id: listed._meta.svc.commit_id,
    plan: { steps: [{ capability: 'listReviews' }] },
  });
  t.equal(JSON.parse(readFileSync(join(dir, 'out', runRec, 'artifact.json'), 'utf8')).status, 'succeeded');

  const handle = /pg\d+/.exec(listed.more as string)![0];
  const page = await term(ws, ['run', '--accept', 'json', '-e', `page(${handle})[id]`]);
  t.equal(page.code, 0, page.stderr);
  t.equal(JSON.parse(page.stdout).rows[0].id, 26);
  t.same(JSON.parse(readFileSync(join(dir, 'out', records(dir).at(-1)!, 'plan.json'), 'utf8')), {
    continuation: `page(${handle})[id]`,
  });

  // m2 is createBrewery here (the Review wave taught m1 = createReview first).
  const write = 'm2(name="Terminal Test Brewing", city="Oslo", country="NO")';
  const refused = await term(ws, ['run', '-e', write]);
  t.equal(refused.code, 1);
  t.match(refused.stdout, /review_required/);
  const dry = await term(ws, ['run', '--mode', 'plan', '-e', write]);
  t.equal(dry.code, 0, dry.stderr);
  t.match(dry.stdout, /WRITE brewery:Brewery createBrewery/);
  const pc = /^# plan_commit_ref: (pc\d+)$/m.exec(dry.stdout)?.[1];
  t.ok(pc, 'the dry-run prints its plan_commit_ref');
  t.match(records(dir).at(-1), /-plan$/);
  const live = await term(ws, ['run', '--plan-commit-ref', pc!, '-e', write]);
  t.equal(live.code, 0, live.stdout + live.stderr);
  t.match(live.stdout, /# status: succeeded/);

  const bg = await term(ws, ['run', '--wait=false', '-e', 'e2[name]']);
  t.equal(bg.code, 0, bg.stderr);
  const op = /^\+ (o\d+) started/m.exec(bg.stdout)?.[1];
  t.ok(op, 'the accept line names the handle');
  let polled: Ran | undefined;
  for (let i = 0; i < 50; i++) {
    polled = await term(ws, ['run', '--accept', 'json', '-e', `wait(${op})`]);
    if (JSON.parse(polled.stdout)._meta.svc.status) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  t.equal(polled?.code, 0);
  t.equal(JSON.parse(polled!.stdout)._meta.svc.status, 'succeeded');

  // cancel(oN) of another background run: the operation answers for its handle (cancelled, or
  // succeeded when it ended first).
  const bg2 = await term(ws, ['run', '--wait=false', '--accept', 'json', '-e', 'e1[id]']);
  t.equal(bg2.code, 0, bg2.stderr);
  const op2 = JSON.parse(bg2.stdout)._meta.svc.op.n as string;
  const cancelled = await term(ws, ['run', '--accept', 'json', '-e', `cancel(${op2})`]);
  t.equal(cancelled.code, 0, cancelled.stdout + cancelled.stderr);
  t.equal(JSON.parse(cancelled.stdout)._meta.svc.op.n, op2);
  t.match(JSON.parse(cancelled.stdout)._meta.svc.op['~'], /^[x!~=]$/);

  // A relation followed from bound rows.
  const rel = await term(ws, ['run', '--accept', 'json'], 'x = e2(city="Berlin")[id]\nx.beers[name]\n');
  t.equal(rel.code, 0, rel.stdout + rel.stderr);
  t.equal(JSON.parse(rel.stdout).entity, 'brewery:Beer');
  t.ok(JSON.parse(rel.stdout).count > 0, 'the Berlin breweries brew beers');
});
