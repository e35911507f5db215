/**
 * The playground's session work in a real browser against a real svc server and the json-server
 * demo vendor behind a counting proxy (docs/playground.md): a typo is underlined while typing,
 * without Run, by a check that mints no pcN, stores no run and sends nothing to the vendor (nor
 * checks a continuation, which would run); an answer about older text is dropped; More twice
 * appends three pages of rows under the sort in force; a reload reopens the session (address,
 * waves, editor text) from sessionStorage, and a session the server no longer knows starts fresh.
 */
import t from 'tap';
import { existsSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { startDemoVendor } from '../../cli/demo-vendor.js';
import { playgroundDir } from '../../cli/package-root.js';
import { call, startStack } from '../_helpers/server.js';
import { sleep, until } from '../_helpers/until.js';
import {
  checkPageHygiene,
  column,
  editor,
  launchBrowser,
  openPage,
  openSession,
  programText,
  typeProgram,
} from '../_helpers/browser.js';

const UI = playgroundDir();
if (!existsSync(join(UI, 'manifest.json'))) throw new Error(`${UI} has no build: run npm run build first`);

/** A proxy in front of the vendor that counts what svc asks of it. */
async function countingProxy(target: string) {
  const to = new URL(target);
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const up = request(
      { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers },
      (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      },
    );
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve())));
  return { url, seen, close };
}

const vendor = await startDemoVendor();
t.teardown(() => vendor.close());
const proxy = await countingProxy(vendor.url);
t.teardown(() => proxy.close());
const stack = await startStack(t, { ui: { dir: UI }, vendorUrl: proxy.url });
const browser = await launchBrowser(t);
const w = await openPage(browser, stack.url + '/');
const { page } = w;

const PROGRAM_ROUTE = /^\/execute\/[0-9a-f]{16}\/[0-9a-f]{16}$/;
/** The JSON bodies the page POSTed to the program route, in order. */
const posted: Array<Record<string, unknown>> = [];
page.on('request', (r) => {
  if (r.method() === 'POST' && PROGRAM_ROUTE.test(new URL(r.url()).pathname))
    posted.push(JSON.parse(r.postData() ?? '{}') as Record<string, unknown>);
});
const SAVED = 'svc.playground.state';

await openSession(page, 'brewery', ['brewery:Brewery']);
const address = ((await page.getByTestId('session-address').textContent()) ?? '').trim();
const status = async () => (await call(stack.url, `/execute/${address}/status`)).body;
const note = page.getByTestId('check-note');
const underline = editor(page).locator('.cm-lintRange-error');

/** Types `text` and waits until the check of that very text came back. */
async function typeAndCheck(text: string, expect: RegExp): Promise<void> {
  await typeProgram(page, text);
  let last = '';
  await until(`the check of ${text} (${last})`, async () => {
    last = (await note.textContent()) ?? '';
    return posted.at(-1)?.program === text && expect.test(last);
  }).catch(() => {
    throw new Error(`the check of ${text}: ${last}`);
  });
}

t.test('a typo is underlined while typing; the check runs nothing and mints no pcN', async (t) => {
  const before = await status();
  const vendorCalls = proxy.seen.length;
  await typeProgram(page, 'e1()[name, cty]');
  await underline.waitFor();
  t.equal(await underline.textContent(), 'cty', 'the misspelled name is underlined, Run not pressed');
  t.match(await note.textContent(), /^1 problem: projection_unknown_field at 1:12$/, 'line:col under the editor');
  t.equal(await page.getByTestId('outcome').count(), 0, 'no answer shown: nothing was run');
  await underline.hover();
  const tooltip = page.locator('.cm-tooltip-lint');
  await tooltip.waitFor();
  t.match(await tooltip.textContent(), /has no field `cty`[\s\S]*hint: did you mean `city`\?/, 'the hint inline');
  await tooltip.locator('.cm-diagnosticAction').filter({ hasText: 'use city' }).click();
  t.equal(await programText(page), 'e1()[name, city]', 'the fix applied');
  await note.filter({ hasText: 'no problem found' }).waitFor();
  t.equal(await underline.count(), 0, 'and the fixed text checked clean');

  await typeAndCheck('m1(name="Typed Brewing", city="Oslo", country="NO")', /no problem found/);
  await typeAndCheck('page(pg1)', /no problem found/);

  const after = await status();
  t.same(after.plan_tokens, before.plan_tokens, 'no plan token minted');
  t.equal(after.runs, before.runs, 'no run stored');
  t.same(after.page_handles, before.page_handles, 'no page handle');
  t.same(proxy.seen.slice(vendorCalls), [], 'no vendor request');
  t.ok(posted.length >= 3, `${posted.length} checks sent`);
  t.same(
    posted.filter((p) => Object.keys(p).sort().join() !== 'mode,program' || p.mode !== 'check'),
    [],
    'every check is the program with mode=check, nothing else',
  );
  t.equal(posted.filter((p) => p.program === 'page(pg1)').length, 1, 'a continuation is checked, and did not run');
});

t.test('an answer about older text is dropped', async (t) => {
  const slow = 'e1()[nme]';
  let held = 0;
  await page.route(`**/execute/${address}`, async (route) => {
    const body = JSON.parse(route.request().postData() ?? '{}') as { program?: string };
    if (body.program === slow) {
      held++;
      await sleep(1500);
    }
    await route.continue().catch(() => undefined); // aborted by the page meanwhile
  });
  await typeProgram(page, slow);
  await until('the slow check sent', () => held > 0);
  await typeAndCheck('e1()[name]', /no problem found/);
  await sleep(1700);
  t.equal(await underline.count(), 0, 'the diagnostic of the older text never showed');
  t.match(await note.textContent(), /no problem found/);
  await page.unroute(`**/execute/${address}`);
});

t.test('More twice: three pages of rows appended, the sort held', async (t) => {
  await typeProgram(page, 'e1()[name, city]');
  await page.getByTestId('run').click();
  const table = page.getByTestId('results-table');
  await table.waitFor();
  const first = await column(table, 'name');
  t.equal(first.length, 10);
  const rowsAfter = (n: number) =>
    until(`${n} rows`, async () => {
      const names = await column(table, 'name');
      return names.length === n && names;
    });
  await page.getByTestId('more-button').click();
  await rowsAfter(20);
  await page.getByTestId('sort-name').click();
  const handle = /page\((pg\d+)\)/.exec((await page.getByTestId('more-button').textContent()) ?? '')?.[1];
  await page.getByTestId('more-button').click();
  const names = await rowsAfter(30);
  t.equal(new Set(names).size, 30, 'thirty different rows');
  t.same(
    first.filter((n) => !names.includes(n)),
    [],
    'the first page kept',
  );
  t.same(
    names,
    [...names].sort((a, b) => a.localeCompare(b)),
    'the sort by name covers the appended rows',
  );
  t.match(await page.getByTestId('result-block').locator('h3').textContent(), /30 of 42 rows loaded · 3 pages/);
  t.match(await page.getByTestId('status-line').textContent(), new RegExp(`HTTP 200 · live · page\\(${handle}\\)`));
  t.match(await page.getByTestId('more-button').textContent(), /page\(pg\d+\)/, 'more to come');
  await page.getByTestId('view-json').click();
  t.match(await page.getByTestId('raw-note').textContent(), new RegExp(`page\\(${handle}\\), the last page loaded`));
  t.match(await page.getByTestId('raw-answer').textContent(), /"count": 10,/, 'the raw answer of the last page');
  await page.getByTestId('view-table').click();
});

t.test('a reload reopens the session: address, waves, editor text', async (t) => {
  await page.getByTestId('seed-input-context').fill('helpdesk:Ticket');
  await page.getByTestId('seed-add-context').click();
  await page.getByTestId('add-context').click();
  await page.getByTestId('wave-2').waitFor();
  const rows = async (n: number) => page.getByTestId(`wave-${n}`).locator('tbody tr').allTextContents();
  const [wave1, wave2] = [await rows(1), await rows(2)];
  const ticket = /^(e\d+)\(/.exec(wave2[0] ?? '')?.[1];
  t.ok(ticket, `tickets are ${ticket}`);
  const program = `${ticket}(status="open")[subject, status]`;
  await typeAndCheck(program, /no problem found/);
  const requests = w.requests.length;

  await page.reload();
  await page.getByTestId('session-info').waitFor();
  t.equal(await page.getByTestId('tab-session').getAttribute('aria-selected'), 'true', 'on the session tab');
  t.equal((await page.getByTestId('session-address').textContent())?.trim(), address, 'the same session');
  t.equal(await programText(page), program, 'the editor text kept');
  t.same(await rows(1), wave1, 'wave 1 as before');
  t.same(await rows(2), wave2, 'wave 2 as before');
  t.match(await page.getByTestId('wave-2').locator('h3').textContent(), /helpdesk:Ticket/);
  const paths = w.requests.slice(requests).map((u) => new URL(u).pathname);
  t.ok(paths.includes(`/execute/${address}/status`) && paths.includes(`/execute/${address}/symbols`), 'read back');
  t.notOk(paths.includes('/execute'), 'no new session opened');

  await page.getByTestId('run').click();
  const table = page.getByTestId('results-table');
  await table.waitFor();
  t.same([...new Set(await column(table, 'status'))], ['open'], 'the reopened session runs programs');
  const saved = JSON.parse((await page.evaluate<string>(`sessionStorage.getItem('${SAVED}')`)) ?? '{}') as object;
  t.same(Object.keys(saved).sort(), ['entry', 'program', 'seeds', 'session'], 'what is saved');
  t.same(await page.evaluate('Object.keys(sessionStorage)'), [SAVED], 'and nothing else');
});

t.test('a session the server no longer knows: dropped quietly, a fresh start', async (t) => {
  // Another session id at the same address: what the server answers for a session it dropped.
  await page.evaluate(`{
    const s = JSON.parse(sessionStorage.getItem('${SAVED}'));
    s.session.ref.session = '0000000000000000';
    sessionStorage.setItem('${SAVED}', JSON.stringify(s));
  }`);
  const requests = w.requests.length;
  await page.reload();
  await page.getByTestId('open-session').waitFor();
  t.ok(
    w.requests.slice(requests).some((u) => u.endsWith('/0000000000000000/status')),
    'the status of the saved session was asked',
  );
  t.equal(await page.getByTestId('session-error').count(), 0, 'quietly');
  const saved = JSON.parse((await page.evaluate<string>(`sessionStorage.getItem('${SAVED}')`)) ?? '{}') as object;
  t.same(Object.keys(saved).sort(), ['entry', 'seeds'], 'the session and its program forgotten');
  t.match(await page.getByTestId('seeds-open').textContent(), /brewery:Brewery/, 'the chosen seeds kept');
  t.equal(await page.getByTestId('session-entry').inputValue(), 'brewery', 'and the catalog');
  await page.getByTestId('open-session').click();
  await page.getByTestId('session-info').waitFor();
  t.not((await page.getByTestId('session-address').textContent())?.trim(), address, 'a new session');
  t.equal(await editor(page).locator('.cm-placeholder').count(), 1, 'with an empty editor');
});

t.test('offline and CSP: nothing but svc, no violation but the known one', async (t) => {
  await checkPageHygiene(t, w, stack.url);
});
