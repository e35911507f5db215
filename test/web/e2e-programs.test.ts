/**
 * The playground end to end in a real browser (Chromium driven by playwright-core) against a real
 * svc server and the json-server demo vendor (docs/playground.md): the catalogs with their diagram;
 * a session opened on seeds picked in the catalogs shows its teaching table; a program with a typo
 * shows the server's diagnostic inline (underline, tooltip with the hint) and in the list, the
 * "did you mean" fix applies, the fixed program's rows are a table sortable by any column, More
 * sends `page(pgN)` and appends its rows, the run id opens the stored run; a write is dry-run, reviewed, run with its
 * `pcN`, and the vendor has the new row. The page asks nothing of any other origin and reports no
 * CSP violation but the editor's known one.
 */
import t from 'tap';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { playgroundDir } from '../../cli/package-root.js';
import { runProgram, startStack } from '../_helpers/server.js';
import { until } from '../_helpers/until.js';
import {
  checkPageHygiene,
  column,
  editor,
  launchBrowser,
  openPage,
  programText,
  typeProgram,
} from '../_helpers/browser.js';

const UI = playgroundDir();
if (!existsSync(join(UI, 'manifest.json'))) throw new Error(`${UI} has no build: run npm run build first`);

const browser = await launchBrowser(t);
const stack = await startStack(t, { ui: { dir: UI } });
const w = await openPage(browser, stack.url + '/');
const { page } = w;

t.test('the catalogs: the registry, an entry with its diagram, seeds picked for a session', async (t) => {
  const list = page.getByTestId('registry-list');
  t.match(await list.textContent(), /brewery[\s\S]*helpdesk/, 'both catalogs are listed');
  await page.getByTestId('registry-entry-brewery').click();
  const detail = page.getByTestId('entry-detail');
  await detail.getByTestId('entity-brewery:Brewery').waitFor();
  t.equal(await page.getByTestId('entity-diagram').locator('svg').count(), 1, 'the diagram is an SVG');
  t.match(await page.getByTestId('entity-brewery:Brewery').textContent(), /createBrewery/, 'capabilities shown');
  await page.getByTestId('seed-toggle-brewery:Brewery').click();
  t.equal(await page.getByTestId('seed-toggle-brewery:Brewery').getAttribute('aria-pressed'), 'true');
  await page.getByTestId('discover-input').fill('beer reviews');
  await page.getByTestId('discover-submit').click();
  t.match(await page.getByTestId('discover-results').textContent(), /brewery:Review/, 'discovery finds reviews');
});

t.test('a session on the picked seed shows its rules and teaching table', async (t) => {
  await page.getByTestId('go-to-session').click();
  t.equal(await page.getByTestId('tab-session').getAttribute('aria-selected'), 'true', 'the session tab is shown');
  t.match(await page.getByTestId('seeds-open').textContent(), /brewery:Brewery/, 'the seed came along');
  await page.getByTestId('open-session').click();
  const table = page.getByTestId('wave-1').getByTestId('teaching-table');
  await table.waitFor();
  t.match(await page.getByTestId('teaching-rules').textContent(), /svc programs: one statement per line/);
  const forms = await table.locator('tbody td:first-child').allTextContents();
  t.ok(
    forms.some((f) => f.startsWith('e1(')),
    `e1 is taught: ${forms.join(' | ')}`,
  );
  t.ok(
    forms.some((f) => f.startsWith('m1(')),
    'the create capability is taught',
  );
  t.match(await page.getByTestId('session-revision').textContent(), /^1$/);
});

t.test('a typo: the diagnostic inline with its hint, the fix applied, then rows', async (t) => {
  await typeProgram(page, 'e1()[name, cty, country]');
  t.equal(await programText(page), 'e1()[name, cty, country]', 'typed as meant (brackets typed over)');
  await page.getByTestId('run').click();
  const item = page.getByTestId('error-item');
  await item.waitFor();
  t.match(await item.textContent(), /projection_unknown_field at 1:12[\s\S]*hint: did you mean `city`\?/);
  t.match(await page.getByTestId('status-line').textContent(), /HTTP 400/);
  const underline = editor(page).locator('.cm-lintRange-error');
  t.equal(await underline.textContent(), 'cty', 'the misspelled name is underlined');
  await underline.hover();
  const tooltip = page.locator('.cm-tooltip-lint');
  await tooltip.waitFor();
  t.match(await tooltip.textContent(), /has no field `cty`[\s\S]*hint: did you mean `city`\?/, 'the hint inline');
  await tooltip.locator('.cm-diagnosticAction').filter({ hasText: 'use city' }).click();
  t.equal(await programText(page), 'e1()[name, city, country]', 'the inline fix replaced the name');

  await page.getByTestId('run').click();
  const table = page.getByTestId('results-table');
  await table.waitFor();
  t.match(await page.getByTestId('status-line').textContent(), /HTTP 200 · live · succeeded · run pr/);
  t.match(await page.getByTestId('result-block').locator('h3').textContent(), /brewery:Brewery: 10 of 42 rows/);
  t.equal(await editor(page).locator('.cm-lintRange-error').count(), 0, 'no diagnostic left');
  const names = await column(table, 'name');
  t.equal(names.length, 10);

  await page.getByTestId('sort-name').click();
  t.equal(await table.locator('th').first().getAttribute('aria-sort'), 'ascending');
  t.same(
    await column(table, 'name'),
    [...names].sort((a, b) => a.localeCompare(b)),
    'sorted by name',
  );
  await page.getByTestId('sort-name').click();
  t.equal(await table.locator('th').first().getAttribute('aria-sort'), 'descending');
  t.same(
    await column(table, 'name'),
    [...names].sort((a, b) => b.localeCompare(a)),
    'then the other way',
  );

  await page.getByTestId('view-json').click();
  t.match(await page.getByTestId('raw-answer').textContent(), /"entity": "brewery:Brewery"/, 'the raw JSON');
  await page.getByTestId('view-toon').click();
  t.match(
    await page.getByTestId('raw-answer').textContent(),
    /^entity: "brewery:Brewery"\ncount: 10\ntotal: 42\n/,
    'the TOON',
  );
  // The same program run again by the server in TOON and plain text: a clean read answers the
  // same rows with no meta, so the page's views must be the server's own text, byte for byte but
  // for the number of the next page's handle (each run mints its own).
  const address = ((await page.getByTestId('session-address').textContent()) ?? '').trim();
  const handles = (text: string | null) => (text ?? '').replace(/\bpg\d+\b/g, 'pgN');
  const asServer = (accept: string) =>
    runProgram(stack.url, `/execute/${address}`, 'e1()[name, city, country]', '', { accept }).then((a) =>
      handles(a.text),
    );
  t.equal(
    handles(await page.getByTestId('raw-answer').textContent()),
    await asServer('text/toon'),
    "the server's TOON",
  );
  await page.getByTestId('view-plain').click();
  const plain = handles(await page.getByTestId('raw-answer').textContent());
  t.match(plain, /^brewery:Brewery: 10 of 42 rows\nname {2,}city {2,}country\n[\s\S]*\nmore: page\(pgN\)\[\.\.\]\n$/);
  t.equal(plain, await asServer('text/plain'), "the server's plain text");
  await page.getByTestId('view-table').click();
});

t.test('the run id opens the stored run', async (t) => {
  const link = page.getByTestId('run-id-link');
  await link.click();
  const dialog = page.getByTestId('artifact-dialog');
  await dialog.waitFor();
  const json = page.getByTestId('artifact-json');
  await json.filter({ hasNotText: 'loading…' }).waitFor();
  const text = (await json.textContent()) ?? '';
  t.match(text, /"status": "succeeded"[\s\S]*"capability": "listBreweries"[\s\S]*"name": "Stone Lantern Brewing"/);
  t.match(await dialog.locator('h2').textContent(), /Stored run pr[0-9a-f]{64}/, 'the run id in the title');
  t.match(await page.getByTestId('artifact-open').getAttribute('href'), /^execute\/[^/]+\/[^/]+\/artifacts\/pr/);
  await page.getByTestId('artifact-close').click();
  await t.resolves(dialog.waitFor({ state: 'hidden' }), 'closed');
});

t.test('More sends page(pgN): the next rows appended, same fields', async (t) => {
  const first = await column(page.getByTestId('results-table'), 'name');
  const more = page.getByTestId('more-button');
  const clicked = /More: page\((pg\d+)\)/.exec((await more.textContent()) ?? '')?.[1];
  t.ok(clicked, 'More names the next page');
  await more.click();
  const all = await until('the next page', async () => {
    const n = await column(page.getByTestId('results-table'), 'name');
    return n.length === 20 && n;
  });
  const next = all.filter((n) => !first.includes(n));
  t.equal(next.length, 10, 'ten other rows than the first page');
  t.same(
    first.filter((n) => !all.includes(n)),
    [],
    'the first page is still there',
  );
  t.match(await page.getByTestId('result-block').locator('h3').textContent(), /20 of 42 rows loaded · 2 pages/);
  t.same(await page.getByTestId('results-table').locator('thead th').allTextContents(), ['name', 'city', 'country']);
  const after = /page\((pg\d+)\)/.exec((await page.getByTestId('more-button').textContent()) ?? '')?.[1];
  t.ok(after && after !== clicked, `and a handle for the one after (${after}, not ${clicked})`);
});

t.test('a write: dry-run, review, run with the plan token, the vendor changed', async (t) => {
  t.equal(await page.getByTestId('force').isChecked(), false, 'force is off by default');
  await typeProgram(page, 'm1(name="Fjord Light Brewing", city="Oslo", country="NO")');
  await page.getByTestId('dry-run').click();
  const review = page.getByTestId('review');
  await review.waitFor();
  t.equal(await page.getByTestId('review-verdict').textContent(), 'review');
  t.equal(await page.getByTestId('review-mutations').textContent(), '1');
  t.equal(await page.getByTestId('review-flow').textContent(), 'clean');
  const write = page.getByTestId('review-steps').locator('li.write');
  t.match(await write.textContent(), /WRITE brewery:Brewery createBrewery\(name="Fjord Light Brewing"/);
  t.match(await page.getByTestId('review-countdown').textContent(), /^(10:00|9:5\d) left$/, 'the countdown');
  const before = await vendorBreweries(stack.vendorUrl, 'Fjord Light Brewing');
  t.equal(before.length, 0, 'nothing written by the dry-run');

  const run = page.getByTestId('run-with-token');
  const token = /Run with (pc\d+)/.exec((await run.textContent()) ?? '')?.[1];
  t.ok(token, `a plan token: ${token}`);
  await run.click();
  await page.getByTestId('status-line').filter({ hasText: 'succeeded' }).waitFor();
  t.match(await page.getByTestId('status-line').textContent(), /HTTP 200 · live · succeeded/);
  t.equal(await page.getByTestId('review').count(), 0, 'the review is gone');
  const after = await vendorBreweries(stack.vendorUrl, 'Fjord Light Brewing');
  t.equal(after.length, 1, 'json-server has the new brewery');
  t.match(after[0], { city: 'Oslo', country: 'NO', kind: 'micro' });
});

t.test('replacing a selection across highlighted tokens: the known CSP report at most, nothing lost', async (t) => {
  await typeProgram(page, 'e1(city="Berlin", country="DE")[name, city]');
  await page.keyboard.press('Home');
  for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowRight');
  for (let i = 0; i < 14; i++) await page.keyboard.press('Shift+ArrowRight'); // city="Berlin",
  await page.keyboard.type('kind="micro",');
  t.equal(await programText(page), 'e1(kind="micro", country="DE")[name, city]', 'a part replaced');
  await page.keyboard.press('ControlOrMeta+a');
  await page.keyboard.type('e1()[name]'); // Chrome tries a style attribute here (blocked)
  await page.keyboard.press('Escape');
  t.equal(await programText(page), 'e1()[name]', 'all replaced: the editor kept its text');
  const violations = await w.violations();
  t.comment(`${violations.length} CSP report(s)`);
  for (const v of violations)
    t.match(v, { directive: 'style-src-attr', blocked: 'inline' }, 'a style attribute, blocked');
});

t.test('offline and CSP: nothing but svc, no violation but the known one', async (t) => {
  await checkPageHygiene(t, w, stack.url);
  // The watcher itself: a style element without the nonce is reported (and would fail the check above).
  const other = await openPage(browser, stack.url + '/');
  await other.page.evaluate(
    "document.head.append(Object.assign(document.createElement('style'), { textContent: 'body { color: red }' }))",
  );
  t.match(await other.violations(), [{ directive: 'style-src-elem', blocked: 'inline' }], 'violations are seen');
  await other.page.context().close();
});

async function vendorBreweries(vendor: string, name: string): Promise<Array<Record<string, unknown>>> {
  const res = await fetch(`${vendor}/breweries?name=${encodeURIComponent(name)}`);
  return (await res.json()) as Array<Record<string, unknown>>;
}
