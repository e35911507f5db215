/**
 * Terminal escape sequences in vendor text (issue 41 item 8): `svc run` prints a plain answer
 * with its control characters shown escaped (a title change, a clear screen, an OSC 8 hyperlink,
 * a backspace, DEL, a C1 CSI), so the terminal acts on none of them; JSON and TOON answers are
 * printed byte for byte as the server sent them, and the record keeps the exact answer. Error
 * lines on stderr are escaped too. Against a real svc server and the json-server vendor.
 */
import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { demoVendorData, startDemoVendor } from '../../cli/demo-vendor.js';
import { startStack } from '../_helpers/server.js';
import { records, sessionDir, term, workspace } from '../_helpers/terminal.js';

/** Short enough for a plain cell (60 characters at most). */
const NAME = 'Evil\x1b]0;pwned\x07 \x1b[2J\x08over';
const WEBSITE = '\x1b]8;;https://e.example\x1b\\link\x1b]8;;\x1b\\ \u009b31m\x7f';
/** Any control character a terminal acts on (C0 but \n and \t, DEL, C1). */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

t.test('vendor text with escape sequences', async (t) => {
  const data = demoVendorData();
  Object.assign(data.breweries![0] as object, { name: NAME, website: WEBSITE, city: 'Escapetown' });
  const vendor = await startDemoVendor({ data });
  t.teardown(() => vendor.close());
  const stack = await startStack(t, { vendorUrl: vendor.url });
  const ws = await workspace(t);
  t.equal((await term(ws, ['init', '--server', stack.url])).code, 0);
  t.equal((await term(ws, ['context', 'brewery:Brewery'])).code, 0);
  const dir = sessionDir(ws, stack.url);
  const program = 'e1(city="Escapetown")[name,website]';

  const plain = await term(ws, ['run', '-e', program]);
  t.equal(plain.code, 0, plain.stderr);
  t.notMatch(plain.stdout, CONTROL, 'the plain answer holds no control character');
  t.ok(plain.stdout.includes('Evil\\x1b]0;pwned\\x07 \\x1b[2J\\x08over'), plain.stdout);
  t.ok(plain.stdout.includes('\\x1b]8;;https://e.example\\x1b\\link\\x1b]8;;\\x1b\\ \\u009b31m\\x7f'), plain.stdout);
  const body = readFileSync(join(dir, 'out', records(dir).at(-1)!, 'body.txt'), 'utf8');
  t.ok(body.includes(NAME) && body.includes(WEBSITE), 'the record keeps the answer exactly as it came');

  const json = await term(ws, ['run', '--accept', 'json', '-e', program]);
  t.equal(json.code, 0, json.stderr);
  t.match(JSON.parse(json.stdout).rows[0], { name: NAME, website: WEBSITE }, 'JSON carries the exact values');
  t.equal(json.stdout, readFileSync(join(dir, 'out', records(dir).at(-1)!, 'body.txt'), 'utf8'));

  const toon = await term(ws, ['run', '--accept', 'toon', '-e', program]);
  t.equal(toon.code, 0, toon.stderr);
  t.equal(toon.stdout, readFileSync(join(dir, 'out', records(dir).at(-1)!, 'body.txt'), 'utf8'), 'TOON byte for byte');
  t.ok(toon.stdout.includes('\u009b31m'), 'TOON output is not rewritten');

  const usage = await term(ws, ['run', '--plan-commit-ref', 'pc1\x1b[2J\x1b]0;x\x07', '-e', program]);
  t.equal(usage.code, 2);
  t.notMatch(usage.stderr, CONTROL, 'an error line holds no control character');
  t.match(usage.stderr, /^bad_arguments: --plan-commit-ref takes pcN, not `pc1\\x1b\[2J\\x1b\]0;x\\x07`/);
});
