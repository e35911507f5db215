// Screenshots of the playground (docs/playground.md) for the docs: `npm run screenshots` builds,
// then this starts the demo stack in-process (the bundled json-server vendor, the packed demo
// catalogs, svc with the page on 127.0.0.1) and drives Debian's Chromium (/usr/bin/chromium) with
// playwright-core through the main views at a laptop size (1366x850), light theme and one dark,
// saving PNGs into docs/img/. Reviews of the vendor's `reviews` go through a small proxy that
// answers them slowly, so a background run is caught running.
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createServer, request } from 'node:http';
import { dirname, join } from 'node:path';
import { setTimeout } from 'node:timers';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, URL } from 'node:url';
import { chromium } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';
if (!existsSync(CHROMIUM)) {
  process.stderr.write(`screenshots need ${CHROMIUM}: run apt-get install -y chromium (as root)\n`);
  process.exit(1);
}

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'docs', 'img');
const dist = (p) => import(join(root, 'dist', p));

const { startDemoVendor } = await dist('cli/demo-vendor.js');
const { playgroundDir } = await dist('cli/package-root.js');
const { loadCatalogDir } = await dist('pack/index.js');
const { MemoryArtifactStore } = await dist('runtime/artifacts/index.js');
const { SvcApp } = await dist('server/app.js');
const { listen } = await dist('server/serve.js');

const SLOW_MS = 4000;

/** A proxy in front of the vendor that holds answers about reviews for SLOW_MS. */
async function slowProxy(target) {
  const t = new URL(target);
  const server = createServer((req, res) => {
    const forward = () => {
      const up = request(
        { host: t.hostname, port: t.port, method: req.method, path: req.url, headers: req.headers },
        (r) => {
          res.writeHead(r.statusCode ?? 502, r.headers);
          r.pipe(res);
        },
      );
      up.on('error', () => res.destroy());
      req.pipe(up);
    };
    if (req.url?.startsWith('/reviews')) setTimeout(forward, SLOW_MS);
    else forward();
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () => new Promise((resolve) => (server.closeAllConnections(), server.close(resolve))),
  };
}

const vendor = await startDemoVendor();
const proxy = await slowProxy(vendor.url);
const { registry } = await loadCatalogDir(join(root, 'fixtures', 'packed'), {
  backendOverrides: { brewery: proxy.url, helpdesk: proxy.url },
});
const artifacts = new MemoryArtifactStore({ retentionSecs: 3600, gcIntervalSecs: 3600 });
const app = new SvcApp({ registry, artifacts, ui: { dir: playgroundDir() } });
const server = await listen(app, 0, '127.0.0.1');
const browser = await chromium.launch({
  executablePath: CHROMIUM,
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
});
await mkdir(out, { recursive: true });
const saved = [];

try {
  await shoot('light');
  await shoot('dark');
} finally {
  await browser.close();
  await server.close(200);
  await artifacts.close();
  await proxy.close();
  await vendor.close();
}
process.stdout.write(`saved ${saved.length} screenshots in docs/img: ${saved.join(', ')}\n`);

async function shoot(scheme) {
  const context = await browser.newContext({ viewport: { width: 1366, height: 850 }, colorScheme: scheme });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  const snap = async (name, keepMouse = false) => {
    if (!keepMouse) await page.mouse.move(0, 0);
    await sleep(150); // transitions, caret
    const file = `playground-${name}${scheme === 'dark' ? '-dark' : ''}.png`;
    await page.screenshot({ path: join(out, file) });
    saved.push(file);
  };
  const byId = (id) => page.getByTestId(id);
  const type = async (text) => {
    await byId('program-editor').click();
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.press('Delete');
    for (const [i, line] of text.split('\n').entries()) {
      if (i > 0) await page.keyboard.press('Enter');
      await page.keyboard.type(line);
      await page.keyboard.press('Escape');
    }
  };

  await page.goto(server.url + '/');
  await byId('registry-entry-brewery').click();
  await byId('entity-diagram').waitFor();
  await byId('seed-toggle-brewery:Brewery').click();
  await byId('seed-toggle-brewery:Beer').click();
  await byId('seed-toggle-brewery:Review').click();
  await byId('discover-input').fill('beer reviews');
  await byId('discover-submit').click();
  await byId('discover-results').waitFor();
  if (scheme === 'dark') {
    await byId('go-to-session').click();
  } else {
    await page.evaluate('scrollTo(0, 0)');
    await snap('catalogs');
    await byId('go-to-session').click();
  }
  await byId('open-session').click();
  await byId('teaching-table').first().waitFor();
  await page.getByText('Rules', { exact: true }).click(); // folded: the wave's table in view
  await page.evaluate('scrollTo(0, 0)');
  if (scheme === 'light') await snap('session');

  // A typo: the server's diagnostic, inline while typing (no Run).
  await type('e1()[name, cty, country, kind, founded]');
  await page.locator('.cm-lintRange-error').hover();
  await page.locator('.cm-tooltip-lint').waitFor();
  await byId('check-note').filter({ hasText: 'problem' }).waitFor();
  if (scheme === 'light') await snap('diagnostic', true);
  await page.locator('.cm-diagnosticAction').first().click();
  await byId('check-note').filter({ hasText: 'no problem' }).waitFor();

  // Rows: two pages (More appends), sorted.
  await byId('run').click();
  await byId('results-table').waitFor();
  await byId('more-button').click();
  await page.getByText('loaded · 2 pages').waitFor();
  await byId('sort-founded').click();
  await snap('results');
  if (scheme === 'dark') return context.close();

  // A write: the review of its dry-run.
  await type('m1(name="Fjord Light Brewing", city="Oslo", country="NO", founded=2024)');
  await byId('dry-run').click();
  await byId('review').waitFor();
  await snap('review');

  // Background runs: one done, one cancelled, one still running (the proxy holds reviews).
  await type('e1(country="BE")[name, city]');
  await byId('run-background').click();
  await byId('operation-o1').getByTestId('operation-state').filter({ hasText: 'succeeded' }).waitFor();
  await type('e3(rating=5)[author, text]');
  await byId('run-background').click();
  await byId('operation-o2').waitFor();
  await byId('operation-o2').getByTestId('operation-cancel').click();
  await byId('operation-o2').getByTestId('operation-state').filter({ hasText: 'cancelled' }).waitFor();
  await type('e2(available=true)[name, style, abv]\ne3(rating=4)[author, text]');
  await byId('run-background').click();
  await byId('operation-o3').getByTestId('operation-line').filter({ hasText: '1/2 steps' }).waitFor();
  await snap('operations');
  await context.close();
}
