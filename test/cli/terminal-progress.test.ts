/**
 * The live status line of `svc run` (issue 16 "Progress"), against a real svc server whose vendor
 * is the demo json-server behind a slow forwarder (each vendor answer held 1.5 s, a fault a real
 * json-server cannot produce on demand). stderr is a pipe here, so `--progress` forces the line
 * that a TTY gets by default; without it, or with `--quiet`, stderr stays empty. Also `--json`,
 * and Ctrl-C: a followed run is cancelled, a followed `wait(oN)` is left running.
 */
import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startDemoVendor } from '../../cli/demo-vendor.js';
import { childEnv, svcArgv } from '../_helpers/cli.js';
import { startFaultVendor } from '../_helpers/fault-vendor.js';
import { startStack } from '../_helpers/server.js';
import { records, sessionDir, term, workspace, type Ran } from '../_helpers/terminal.js';

const SLOW_MS = 1500;
/** Reads with country=NO are held longer: a background run outlives the start of the next `svc run`. */
const SLOWER_MS = 5000;

async function slowStack(t: Test) {
  const real = await startDemoVendor();
  t.teardown(() => real.close());
  const slow = await startFaultVendor({
    '/:collection': async (req) => {
      const r = await fetch(real.url + req.url);
      const headers: Record<string, string> = {};
      for (const h of ['x-total-count', 'link']) {
        const v = r.headers.get(h);
        if (v) headers[h] = v;
      }
      return {
        status: r.status,
        json: await r.json(),
        headers,
        delayMs: req.query.get('country') === 'NO' ? SLOWER_MS : SLOW_MS,
      };
    },
  });
  t.teardown(() => slow.close());
  return startStack(t, { vendorUrl: slow.url });
}

/** The erase-line escape the status line redraws with. */
const ERASE = '\r\u001b[2K';
const esc = (s: string) => s.replace(/[[\]\\]/g, '\\$&');
/** The status line as drawn: `\r`, erase, a spinner frame, the elapsed seconds, the line. */
const DRAWN = new RegExp(`${esc(ERASE)}\\S \\d+\\.\\d s `);

t.test('a slow run draws its progress on stderr, never on stdout', async (t) => {
  const stack = await slowStack(t);
  const ws = await workspace(t);
  t.equal((await term(ws, ['init', '--server', stack.url])).code, 0);
  t.equal((await term(ws, ['context', '--new', 'brewery:Brewery'])).code, 0);
  const dir = sessionDir(ws, stack.url);

  const followed = await term(ws, ['run', '--progress', '-e', 'e1(country="DE")[name]']);
  t.equal(followed.code, 0, followed.stderr);
  t.match(followed.stderr, DRAWN, 'the status line is drawn');
  t.match(followed.stderr, /[~=] o1 running: 0\/1 steps/, 'it shows the operation progress line');
  t.ok(followed.stderr.endsWith(ERASE), 'and is erased at the end');
  t.notOk(followed.stdout.includes('\u001b') || followed.stdout.includes('\r'), 'stdout holds no drawing');
  t.match(followed.stdout, /^! o1 succeeded: 1\/1 steps/m, 'the answer is the end of the operation');
  t.match(followed.stdout, /Stone Kettle Brewing/);
  const rec = records(dir).at(-1)!;
  t.match(JSON.parse(readFileSync(join(dir, 'out', rec, 'plan.json'), 'utf8')), { operation: 'o1' });

  const piped = await term(ws, ['run', '-e', 'e1(country="DE")[name]']);
  t.equal(piped.code, 0);
  t.equal(piped.stderr, '', 'piped without --progress: no status line');
  t.notMatch(piped.stdout, /o\d+ succeeded/, 'and the run is a waited one');
  const quiet = await term(ws, ['run', '--progress', '--quiet', '-e', 'e1(country="DE")[name]']);
  t.equal(quiet.stderr, '', '--quiet wins');

  const started = await term(ws, ['run', '--wait=false', '-e', 'e1(country="NO")[name]']);
  const op = /^\+ (o\d+) started/m.exec(started.stdout)?.[1];
  t.ok(op, started.stdout);
  const waited = await term(ws, ['run', '--progress', '-e', `wait(${op})`]);
  t.equal(waited.code, 0, waited.stderr);
  t.match(waited.stderr, new RegExp(`${op} running`), 'wait(oN) follows the stream');
  t.match(waited.stdout, new RegExp(`^! ${op} succeeded`, 'm'), 'then answers the end, not a poll');

  const json = await term(ws, ['run', '--json', '--progress', '-e', 'e1(country="DE")[name]']);
  t.equal(json.code, 0, json.stderr);
  t.equal(json.stderr, '', '--json draws nothing');
  const doc = JSON.parse(json.stdout) as Record<string, unknown>;
  t.match(doc, {
    record: `out/${records(dir).at(-1)}`,
    http_status: 200,
    accept: 'plain',
    meta: { status: 'succeeded' },
  });
});

/** Start `svc run` and send SIGINT once the status line shows; resolves when it exits. */
function interrupt(ws: string, args: string[]): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, svcArgv(args), { cwd: ws, env: childEnv({ SVC_WORKSPACE: ws }) });
    let stdout = '';
    let stderr = '';
    let sent = false;
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      stderr += c;
      if (!sent && DRAWN.test(stderr)) {
        sent = true;
        child.kill('SIGINT');
      }
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

t.test('Ctrl-C cancels a followed run and leaves a followed wait(oN) running', async (t) => {
  const stack = await slowStack(t);
  const ws = await workspace(t);
  t.equal((await term(ws, ['init', '--server', stack.url])).code, 0);
  t.equal((await term(ws, ['context', '--new', 'brewery:Brewery'])).code, 0);

  const cancelled = await interrupt(ws, ['run', '--progress', '-e', 'e1[name]']);
  t.equal(cancelled.code, 130, cancelled.stderr);
  t.match(cancelled.stdout, /^x o1 cancelled/m, 'the run was cancelled and its end printed');

  const started = await term(ws, ['run', '--wait=false', '-e', 'e1(country="NO")[name]']);
  const op = /^\+ (o\d+) started/m.exec(started.stdout)![1]!;
  const detached = await interrupt(ws, ['run', '--progress', '-e', `wait(${op})`]);
  t.equal(detached.code, 130);
  t.match(detached.stderr, new RegExp(`${op} keeps running`));
  t.match(detached.stdout, new RegExp(`^[~=] ${op} running`, 'm'), 'the poll after Ctrl-C says it runs');
  const after = await term(ws, ['run', '--progress', '-e', `wait(${op})`]);
  t.match(after.stdout, new RegExp(`^! ${op} succeeded`, 'm'), 'and it went on to succeed');
});
