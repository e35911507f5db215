/**
 * docs/cli.md "The terminal" shows a real session: `$ svc <args>`, what the command printed
 * (stdout, then stderr), `[exit N]`. This test replays it step by step in a fresh workspace against
 * a real stack (svc over fixtures/packed, the json-server demo vendor as backend, as the doc says)
 * and compares the output exactly, after normalizing only what differs from run to run: the
 * workspace path, the server URL (and its host slug), run ids, ids json-server generates for
 * created rows and elapsed seconds. Commit ids, `pcN`, `oN` and `pgN` are deterministic in a fresh
 * session and stay exact: the doc cannot drift from the CLI without this test failing.
 */
import t from 'tap';
import { readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PACKED, ROOT, startStack } from '../_helpers/server.js';
import { term, workspace, type Ran } from '../_helpers/terminal.js';
import { hostSlug } from '../../cli/workspace/paths.js';
import { DEFAULT_SERVER } from '../../cli/workspace/profile.js';

/** The line that introduces the transcript block in docs/cli.md. */
const INTRO = 'A real session (server `svc serve --catalog-dir fixtures/packed`';
/** The workspace the doc's session ran in. */
const DOC_WS = '/tmp/demo-ws';

interface Step {
  /** The command line after `$ svc `, as in the doc. */
  line: string;
  args: string[];
  /** The expected output: the lines between the command and `[exit N]`, each ending in `\n`. */
  output: string;
  exit: number;
}

/** Splits a command line as a POSIX shell would for words, '…' and "…" (\" and \\ inside "…"). */
function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let quote = '';
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote && c === quote) quote = '';
    else if (quote === '"' && c === '\\' && /["\\]/.test(line[i + 1] ?? '')) word = (word ?? '') + line[++i];
    else if (quote) word = (word ?? '') + c;
    else if (c === "'" || c === '"') {
      quote = c;
      word ??= '';
    } else if (c === '\\') word = (word ?? '') + (line[++i] ?? '');
    else if (c !== ' ' && c !== '\t') word = (word ?? '') + c;
    else if (word !== undefined) {
      words.push(word);
      word = undefined;
    }
  }
  if (quote) throw new Error(`unclosed ${quote} in: ${line}`);
  if (word !== undefined) words.push(word);
  return words;
}

/** The steps of the transcript block; throws, saying what is wrong, when it is missing or malformed. */
function transcript(doc: string): Step[] {
  const at = doc.indexOf(INTRO);
  if (at < 0) throw new Error(`docs/cli.md has no line starting "${INTRO}"`);
  const block = /\n```\n([\s\S]*?)```\n/.exec(doc.slice(at));
  if (!block) throw new Error('docs/cli.md has no ``` block after the transcript intro');
  const steps: Step[] = [];
  let step: Step | undefined;
  for (const l of block[1]!.split('\n').slice(0, -1)) {
    const exit = /^\[exit (\d+)\]$/.exec(l);
    if (l.startsWith('$ ')) {
      if (step) throw new Error(`no [exit N] before: ${l}`);
      if (!l.startsWith('$ svc ')) throw new Error(`not an svc command: ${l}`);
      step = { line: l.slice(6), args: shellWords(l.slice(6)), output: '', exit: -1 };
    } else if (!step) throw new Error(`output outside a step: ${l}`);
    else if (exit) {
      steps.push({ ...step, exit: Number(exit[1]) });
      step = undefined;
    } else step.output += `${l}\n`;
  }
  if (step) throw new Error(`no [exit N] after: $ svc ${step.line}`);
  if (steps.length === 0) throw new Error('the transcript block of docs/cli.md is empty');
  return steps;
}

/**
 * Normalizes what differs between runs, on both sides: run ids (numbered in order of appearance,
 * so the run an operation names and the run_id line must still agree), elapsed seconds, and the id
 * json-server 0.17 gives a created row of a collection with string ids (a random nanoid(7); integer
 * ids count up and stay exact) — the first cell of rows of a table whose header starts with `id`.
 */
function normalize(text: string): string {
  const runs = new Map<string, string>();
  let idTable = false;
  return text
    .replace(/\bpr[0-9a-f]{64}\b/g, (r) => runs.get(r) ?? (runs.set(r, `pr<run ${runs.size + 1}>`), runs.get(r)!))
    .replace(/\b\d+\.\d s\b/g, '<secs> s')
    .split('\n')
    .map((l) => {
      if (/^id {2}/.test(l)) idTable = true;
      else if (!idTable || l === '' || l.startsWith('#')) idTable = false;
      else return l.replace(/^[\w-]{7}(?= {2})/, '<new id>');
      return l;
    })
    .join('\n');
}

/** Stdout then stderr, as the doc shows them (no step of it prints on both). */
const printed = (r: Ran) => r.stdout + r.stderr;
/** An answer of `wait(oN)` while the operation still runs (`~` progress, `=` unchanged). */
const stillRunning = (r: Ran) => /^[~=] o\d+ running/.test(r.stdout);

const doc = await readFile(join(ROOT, 'docs', 'cli.md'), 'utf8');

t.test('the shell-word splitter', async (t) => {
  t.same(shellWords(`run -e 'e2(country="DE")[name,city]'`), ['run', '-e', 'e2(country="DE")[name,city]']);
  t.same(shellWords(`a  "b \\"c\\" 'd'" e'f g'`), ['a', `b "c" 'd'`, 'ef g']);
  t.throws(() => shellWords(`run -e 'e1`), /unclosed '/);
});

t.test('the transcript parser fails clearly on a missing, empty or malformed block', async (t) => {
  t.throws(() => transcript('# no transcript'), /no line starting/);
  t.throws(() => transcript(`${INTRO} ...:\n\n\`\`\`\n\`\`\`\n`), /empty/);
  t.throws(() => transcript(`${INTRO} ...:\n\n\`\`\`\n$ svc doctor\nok\n\`\`\`\n`), /no \[exit N\] after/);
  t.throws(() => transcript(`${INTRO} ...:\n\n\`\`\`\nok\n[exit 0]\n\`\`\`\n`), /output outside a step/);
});

t.test('the session of docs/cli.md "The terminal" is what the CLI prints', async (t) => {
  const steps = transcript(doc);
  const stack = await startStack(t);
  // startStack serves fixtures/packed with a fresh demo vendor as backend, as the doc's server did.
  t.same(
    stack.app.registry
      .list()
      .map((e) => `${e.entry_id}.v${e.version}.${e.cgs_hash.slice(0, 12)}.cgs.json`)
      .sort(),
    readdirSync(PACKED)
      .filter((f) => f.endsWith('.cgs.json'))
      .sort(),
    'the stack serves the catalogs of fixtures/packed',
  );
  const ws = await workspace(t);
  // The doc's server listened on the default port; ours on a free one. Its URL and host slug are
  // written back as the doc's (DEFAULT_SERVER) before comparing, and nothing else about the server.
  const server = (s: string) =>
    s
      .replaceAll(stack.url, DEFAULT_SERVER)
      .replaceAll(`host ${hostSlug(stack.url)}`, `host ${hostSlug(DEFAULT_SERVER)}`);
  const local = (s: string) => server(s.replaceAll(ws, DOC_WS));

  for (const step of steps) {
    const label = `$ svc ${step.line}`;
    let ran = await term(ws, step.args);
    if (step.args[0] === 'init' && !step.args.includes('--server')) {
      // `svc init` without --server writes the default server (127.0.0.1:7311), which the doc's
      // server was on: its output is compared as is. Then the same command with --server points
      // the workspace at our stack for the steps that follow (a setup step the doc does not show).
      const repoint = await term(ws, [...step.args, '--server', stack.url]);
      t.equal(repoint.code, 0, `svc ${[...step.args, '--server', '<stack>'].join(' ')} ${repoint.stderr}`.trim());
    }
    if (step.args[0] === 'run' && /^wait\(o\d+\)$/.test(step.args.at(-1) ?? '')) {
      // wait(oN) straight after a `--wait=false` start answers `~`/`=` until the background run
      // ends (it does not block). The doc shows the end, so poll with the same command until the
      // answer is terminal and compare that one.
      for (let i = 0; i < 100 && stillRunning(ran); i++) {
        await new Promise((r) => setTimeout(r, 50));
        ran = await term(ws, step.args);
      }
    }
    t.equal(normalize(local(printed(ran))), normalize(step.output), label);
    t.equal(ran.code, step.exit, `${label}: exit status`);
  }
});
