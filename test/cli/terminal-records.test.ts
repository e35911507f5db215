/**
 * The records of a client session (docs/cli.md "The terminal workspace"): concurrent commands on
 * one session get distinct `out/NNNN-<kind>/` numbers, whatever their kinds, and every record is
 * complete; `body.json` holds the answer as JSON for toon, ndjson and json (the same rows), and
 * the `# key: value` meta only for plain (the rows of a live run are in `artifact.json`).
 */
import t from 'tap';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../_helpers/cli.js';
import { startStack } from '../_helpers/server.js';
import { records, sessionDir, term, workspace } from '../_helpers/terminal.js';

const RUN_FILES = ['program.svc', 'plan.json', 'body.txt', 'body.json', 'artifact.json', 'artifact.txt'];
const numberOf = (rec: string) => Number(rec.slice(0, 4));
const json = (file: string) => JSON.parse(readFileSync(file, 'utf8'));

t.test('concurrent svc run and svc search: distinct numbers, complete records', async (t) => {
  const stack = await startStack(t);
  const ws = await workspace(t);
  t.equal((await term(ws, ['init', '--server', stack.url])).code, 0);
  t.equal((await term(ws, ['context', 'brewery:Brewery'])).code, 0);
  const dir = sessionDir(ws, stack.url);

  const RUNS = 8;
  const SEARCHES = 3;
  const all = await Promise.all([
    ...Array.from({ length: RUNS }, (_, i) =>
      term(ws, ['run', '-e', `e1(country="DE")[name]`, ...(i % 2 ? ['--accept', 'json'] : [])]),
    ),
    ...Array.from({ length: SEARCHES }, () => term(ws, ['search', 'brewery'])),
  ]);
  for (const r of all) t.equal(r.code, 0, r.stderr);

  const made = records(dir).filter((r) => r !== '0001-context');
  const numbers = made.map(numberOf).sort((a, b) => a - b);
  t.same(
    numbers,
    Array.from({ length: RUNS + SEARCHES }, (_, i) => i + 2),
    'every number once, none skipped',
  );
  t.equal(made.filter((r) => r.endsWith('-run')).length, RUNS);
  t.equal(made.filter((r) => r.endsWith('-search')).length, SEARCHES);
  const printed = new Set(all.slice(0, RUNS).map((r) => r.stdout));
  for (const rec of made.filter((r) => r.endsWith('-run'))) {
    for (const f of RUN_FILES) t.ok(existsSync(join(dir, 'out', rec, f)), `${rec}/${f}`);
    t.ok(printed.has(readFileSync(join(dir, 'out', rec, 'body.txt'), 'utf8')), `${rec}: what one run printed`);
    t.equal(json(join(dir, 'out', rec, 'body.json')).meta.status, 'succeeded');
  }
  for (const rec of made.filter((r) => r.endsWith('-search')))
    t.ok(existsSync(join(dir, 'out', rec, 'body.md')) && existsSync(join(dir, 'out', rec, 'body.json')), rec);
  const latest = readFileSync(join(dir, 'latest'), 'utf8');
  t.match(latest, /^out\/\d{4}-(run|search)\n$/);
  t.ok(made.includes(latest.trim().slice(4)), `latest names one of them: ${latest.trim()}`);
  t.equal(readdirSync(join(dir, 'numbers')).length, RUNS + SEARCHES + 1, 'one reserved number per record');
  t.same(
    readdirSync(dir).filter((f) => f.startsWith('.')),
    [],
    'no temporary file left',
  );
});

t.test('newRecord under a burst of processes: every number once', async (t) => {
  const ws = await workspace(t);
  const id = 'abcd1234';
  const script = join(ws, 'burst.mts');
  writeFileSync(
    script,
    [
      `import { ClientSession } from ${JSON.stringify(join(ROOT, 'cli', 'workspace', 'session.ts'))};`,
      `const s = new ClientSession(${JSON.stringify(join(ws, '.svc'))}, '${id}');`,
      `const kinds = ['run', 'plan', 'search', 'context'];`,
      `for (let i = 0; i < 40; i++) s.newRecord(kinds[(i + Number(process.argv[2])) % 4]);`,
    ].join('\n'),
  );
  const PROCS = 6;
  const codes = await Promise.all(
    Array.from(
      { length: PROCS },
      (_, p) =>
        new Promise<number | null>((resolve) => {
          const child = spawn(process.execPath, ['--import', 'tsx', script, String(p)], {
            cwd: ROOT,
            stdio: 'inherit',
          });
          child.on('close', resolve);
        }),
    ),
  );
  t.same(codes, Array(PROCS).fill(0));
  const out = readdirSync(join(ws, '.svc', 's', id, 'out'));
  t.equal(out.length, PROCS * 40);
  t.same(
    out.map(numberOf).sort((a, b) => a - b),
    Array.from({ length: PROCS * 40 }, (_, i) => i + 1),
    'no number given twice, none skipped',
  );
});

t.test('body.json: the same rows from toon, ndjson and json; the meta from headers and the stored run', async (t) => {
  const stack = await startStack(t);
  const ws = await workspace(t);
  t.equal((await term(ws, ['init', '--server', stack.url])).code, 0);
  t.equal((await term(ws, ['context', 'brewery:Beer'])).code, 0);
  const dir = sessionDir(ws, stack.url);
  // Numbers, booleans, dates and strings: what TOON must bring back with their JSON types.
  const READ = 'e1(style="IPA")[id,name,abv,available,released,breweryId]';

  const bodies: Record<string, Record<string, any>> = {};
  for (const accept of ['json', 'toon', 'ndjson', 'plain']) {
    const r = await term(ws, ['run', '--accept', accept, '-e', READ]);
    t.equal(r.code, 0, r.stderr);
    const rec = records(dir).at(-1)!;
    t.equal(readFileSync(join(dir, 'out', rec, 'body.txt'), 'utf8'), r.stdout, `${accept}: body.txt as printed`);
    bodies[accept] = json(join(dir, 'out', rec, 'body.json'));
    bodies[accept]!.artifact = json(join(dir, 'out', rec, 'artifact.json'));
    t.match(
      bodies[accept],
      { http_status: 200, accept, meta: { status: 'succeeded', run_id: /^pr/, commit_id: /^[0-9a-f]{64}$/ } },
      accept,
    );
  }
  const rows = bodies.json!.body.rows as Array<Record<string, unknown>>;
  t.ok(rows.length > 1, 'a read with rows');
  t.match(rows[0], { id: Number, name: String, abv: Number, available: Boolean });
  t.same(bodies.toon!.body.rows, rows, 'toon decodes to the same rows');
  t.notOk('_meta' in bodies.toon!.body, 'toon: a clean read has no _meta (the ids come from the headers)');
  t.ok(Array.isArray(bodies.ndjson!.body), 'ndjson: the array of its lines');
  t.same(bodies.ndjson!.body.slice(0, -1), rows, 'ndjson: the rows, then the summary line');
  t.same(bodies.ndjson!.body.at(-1)._meta.svc, bodies.ndjson!.meta);
  for (const accept of ['toon', 'ndjson'])
    t.equal(bodies[accept]!.meta.commit_id, bodies.json!.meta.commit_id, `${accept}: the same commit_id`);

  const plain = bodies.plain!;
  t.notOk('body' in plain, 'plain text is not lossless: no body');
  t.match(plain.meta, { status: 'succeeded', commit_id: bodies.json!.meta.commit_id, run_id: /^pr/ });
  // The rows of a plain live run are in artifact.json (the stored run named by artifact.txt).
  const rec = join(dir, 'out', records(dir).at(-1)!);
  t.match(readFileSync(join(rec, 'artifact.txt'), 'utf8'), `run_id: ${plain.meta.run_id}\n`);
  const art = plain.artifact as { returns: string[]; steps: Array<{ id: string; rows: unknown[] }> };
  t.equal(art.steps.find((s) => s.id === art.returns[0])?.rows.length, rows.length, 'artifact.json: the rows');

  // A dry-run: TOON's nested dry_review comes back as the object JSON has.
  const dry: Record<string, any> = {};
  for (const accept of ['json', 'toon']) {
    const r = await term(ws, ['run', '--mode', 'plan', '--accept', accept, '-e', READ]);
    t.equal(r.code, 0, r.stdout + r.stderr);
    dry[accept] = json(join(dir, 'out', records(dir).at(-1)!, 'body.json'));
  }
  t.same(dry.toon.meta.dry_review, dry.json.meta.dry_review);
  t.match(dry.toon.meta.dry_review, { verdict: String, mutations: 0 });
});
