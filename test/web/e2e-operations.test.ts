/**
 * Background runs in the playground, in a real browser against a real svc server (docs/playground.md,
 * "Operations"): the fault vendor answers slowly (each list takes a while; one kind never answers),
 * so "Run in background" (`wait=false`) shows the operation running with its progress from the
 * SSE stream, then succeeded with its result and stored run; another one, stuck on the vendor, is
 * cancelled from its button.
 */
import t from 'tap';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { playgroundDir } from '../../cli/package-root.js';
import { MemoryArtifactStore } from '../../runtime/artifacts/index.js';
import { SvcApp } from '../../server/app.js';
import { listen } from '../../server/serve.js';
import { faultRegistry, startFaultVendor } from '../_helpers/fault-vendor.js';
import { checkPageHygiene, launchBrowser, openPage, openSession, typeProgram } from '../_helpers/browser.js';
import { sleep } from '../_helpers/until.js';

const UI = playgroundDir();
if (!existsSync(join(UI, 'manifest.json'))) throw new Error(`${UI} has no build: run npm run build first`);

const ITEMS = [
  { id: 1, name: 'anvil', kind: 'alpha', price: 3, active: true },
  { id: 2, name: 'bolt', kind: 'beta', price: 1, active: true },
  { id: 3, name: 'crate', kind: 'alpha', price: 9, active: false },
];
/** How long the vendor takes to list each kind (the steps run side by side: one ends before the other). */
const DELAY_MS: Record<string, number> = { alpha: 300, beta: 1500 };

const vendor = await startFaultVendor({
  'GET /items': (req) => {
    const kind = req.query.get('kind');
    if (kind === 'gamma') return { hang: true }; // stuck until cancelled
    return { delayMs: DELAY_MS[kind ?? ''] ?? 0, json: ITEMS.filter((i) => !kind || i.kind === kind) };
  },
});
t.teardown(() => vendor.close());
const artifacts = new MemoryArtifactStore({ retentionSecs: 3600, gcIntervalSecs: 3600 });
const app = new SvcApp({ registry: faultRegistry(vendor.url), artifacts, ui: { dir: UI } });
const server = await listen(app, 0, '127.0.0.1');
t.teardown(async () => {
  await server.close(200);
  await artifacts.close();
});

const browser = await launchBrowser(t);
const w = await openPage(browser, server.url + '/');
const { page } = w;
await openSession(page, 'fault', ['fault:Item']);

t.test('a background run: running with its progress, then succeeded, with result and stored run', async (t) => {
  await typeProgram(page, 'e1(kind="alpha", limit=5)[name, price]\ne1(kind="beta", limit=5)[name]');
  await page.getByTestId('run-background').click();
  const op = page.getByTestId('operation-o1');
  await op.waitFor();
  t.match(await page.getByTestId('status-line').textContent(), /HTTP 202/, 'accepted at once');
  // Follow what the page shows while it runs (the stream's lines), until it ends.
  const seen: Array<{ state: string; line: string; value: string | null; max: string | null }> = [];
  for (let i = 0; i < 200; i++) {
    const s = {
      state: (await op.getByTestId('operation-state').textContent()) ?? '',
      line: (await op.getByTestId('operation-line').textContent()) ?? '',
      value: await op.getByTestId('operation-progress').getAttribute('value'),
      max: await op.getByTestId('operation-progress').getAttribute('max'),
    };
    const last = seen[seen.length - 1];
    if (!last || last.line !== s.line || last.state !== s.state) seen.push(s);
    if (s.state !== 'running') break;
    await sleep(40);
  }
  t.comment(seen.map((s) => `${s.state} ${s.value}/${s.max}: ${s.line}`).join('\n'));
  t.equal(seen[0]?.state, 'running', 'first running');
  t.match(seen[0]?.line, /^[+~] o1 (started|running)/);
  t.match(
    seen.find((s) => s.state === 'running' && /1\/2 steps/.test(s.line)),
    { line: /^~ o1 running: 1\/2 steps, 1 page, 2 rows/, value: '1', max: '2' },
    'the progress line and bar after the first step (from the stream)',
  );
  t.match(seen[seen.length - 1], { value: '2', max: '2' }, 'the bar full at the end');
  t.ok(
    w.requests.some((u) => u.endsWith('/operations/o1/stream')),
    'followed on GET .../operations/o1/stream',
  );
  t.equal(seen[seen.length - 1]?.state, 'succeeded', 'then succeeded');
  t.match(seen[seen.length - 1]?.line, /^! o1 succeeded/);

  const result = op.locator('[data-testid="operation-result"]:not([disabled])');
  await t.resolves(result.waitFor(), 'its result can be shown (the wait(o1) answer came)');
  await result.click();
  await page.getByTestId('results-table').first().waitFor();
  const blocks = page.getByTestId('result-block');
  t.equal(await blocks.count(), 2, 'both statements returned rows');
  t.match(await blocks.nth(0).textContent(), /fault:Item: 2 rows[\s\S]*anvil[\s\S]*crate/);
  t.match(await blocks.nth(1).textContent(), /bolt/);

  await op.getByTestId('operation-run').click();
  const json = page.getByTestId('artifact-json');
  await json.filter({ hasText: '"status": "succeeded"' }).waitFor();
  t.match(await json.textContent(), /"capability": "listItems"/, 'its stored run');
  await page.getByTestId('artifact-close').click();
  await page.getByTestId('artifact-dialog').waitFor({ state: 'hidden' });
});

t.test('another, stuck on the vendor, is cancelled from its button', async (t) => {
  await typeProgram(page, 'e1(kind="gamma", limit=5)[name]');
  await page.getByTestId('run-background').click();
  const op = page.getByTestId('operation-o2');
  await op.waitFor();
  t.equal(await op.getByTestId('operation-state').textContent(), 'running');
  await vendorSaw('kind=gamma');
  const cancel = op.getByTestId('operation-cancel');
  t.equal(await cancel.textContent(), 'Cancel o2');
  await cancel.click();
  await op.getByTestId('operation-state').filter({ hasText: 'cancelled' }).waitFor();
  t.match(await op.getByTestId('operation-line').textContent(), /^x o2 cancelled/);
  t.equal(await cancel.isDisabled(), true, 'nothing left to cancel');
  const bar = op.getByTestId('operation-progress');
  t.same([await bar.getAttribute('value'), await bar.getAttribute('max')], ['0', '1'], 'the bar: 0 of 1 step done');
  t.equal(
    await page.getByTestId('operation-o1').getByTestId('operation-state').textContent(),
    'succeeded',
    'the first one is still listed as it ended',
  );
});

t.test('offline and CSP: nothing but svc, no violation but the known one', async (t) => {
  await checkPageHygiene(t, w, server.url);
});

async function vendorSaw(query: string): Promise<void> {
  for (let i = 0; i < 200 && !vendor.requests.some((r) => r.url.includes(query)); i++) await sleep(25);
  if (!vendor.requests.some((r) => r.url.includes(query))) throw new Error(`the vendor never saw ${query}`);
}
