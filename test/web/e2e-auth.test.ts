/**
 * The playground when inbound auth is required (docs/playground.md "Auth", docs/auth.md), in a real
 * browser against a real svc server whose auth is read from the environment as `svc serve` reads
 * it: the page loads without a credential, every call answers 401 and the page asks for one; a
 * bad token is refused (asked again), a good JWT shows the tenant and the catalogs, a session and
 * a program run with it (the operation stream too: it is read with fetch, header included). The
 * credential is in no cookie, no localStorage and not in the page's saved state (sessionStorage); "Keep it
 * for this tab" keeps it there, in its own entry, across a reload.
 */
import t from 'tap';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { playgroundDir } from '../../cli/package-root.js';
import { inboundAuthFromEnv } from '../../server/auth/inbound.js';
import { startStack } from '../_helpers/server.js';
import { checkPageHygiene, column, launchBrowser, openPage, openSession, typeProgram } from '../_helpers/browser.js';

const UI = playgroundDir();
if (!existsSync(join(UI, 'manifest.json'))) throw new Error(`${UI} has no build: run npm run build first`);

const SECRET = 'svc-e2e-hs256-secret-0123456789abcdef';
const now = () => Math.floor(Date.now() / 1000);
const mint = (claims: Record<string, unknown>, secret = SECRET) =>
  new SignJWT({ iat: now(), exp: now() + 3600, ...claims })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .sign(new TextEncoder().encode(secret));

const auth = await inboundAuthFromEnv({ SVC_INCOMING_AUTH_MODE: 'required', SVC_AUTH_JWT_SECRET: SECRET });
const stack = await startStack(t, { ui: { dir: UI }, auth });
const browser = await launchBrowser(t);
const w = await openPage(browser, stack.url + '/', { waitFor: 'auth-dialog' });
const { page } = w;
const good = await mint({ sub: 'alice', tenant_id: 'acme' });

t.test('without a credential the page asks for one', async (t) => {
  const dialog = page.getByTestId('auth-dialog');
  t.equal(await dialog.isVisible(), true, 'the credential dialog is open');
  t.match(await page.getByTestId('registry-error').textContent(), /sign in to see the catalogs/);
  t.equal(await page.getByTestId('auth-kind').inputValue(), 'bearer', 'a bearer token by default');

  const forged = await mint({ sub: 'mallory', tenant_id: 'acme' }, 'another-secret-0123456789abcdef');
  await page.getByTestId('auth-value').fill(forged);
  const refused = page.waitForResponse((r) => r.url().endsWith('/v1/registry'));
  await page.getByTestId('auth-submit').click();
  const answer = await refused;
  t.equal(answer.status(), 401, 'the registry refused it');
  t.equal(answer.request().headers().authorization, `Bearer ${forged}`, 'the token was sent as a bearer token');
  await t.resolves(dialog.waitFor(), 'asked again');
  t.equal(await page.getByTestId('auth-value').inputValue(), '', 'the field was emptied');
  t.equal(await page.getByTestId('auth-tenant').textContent(), 'anonymous');
  t.match(await page.getByTestId('registry-error').textContent(), /sign in to see the catalogs/);
});

t.test('a good JWT: the tenant, the catalogs, a session and programs', async (t) => {
  await page.getByTestId('auth-value').fill(good);
  await page.getByTestId('auth-submit').click();
  await page.getByTestId('auth-dialog').waitFor({ state: 'hidden' });
  await page.getByTestId('auth-tenant').filter({ hasText: 'acme' }).waitFor();
  t.equal(await page.getByTestId('auth-mode').textContent(), 'required');
  t.match(await page.getByTestId('auth-status').textContent(), /tenant: acme \(jwt, alice\)/);
  await page.getByTestId('registry-entry-brewery').waitFor();
  t.equal(await page.getByTestId('registry-error').count(), 0, 'the catalogs are listed');

  await openSession(page, 'brewery', ['brewery:Brewery']);
  await typeProgram(page, 'e1(city="Berlin")[name, city]');
  await page.getByTestId('run').click();
  const table = page.getByTestId('results-table');
  await table.waitFor();
  const cities = await column(table, 'city');
  t.ok(cities.length > 0, `rows: ${cities.length}`);
  t.same([...new Set(cities)], ['Berlin'], 'Berlin only');

  await page.getByTestId('run-background').click();
  const op = page.getByTestId('operation-o1');
  await op.getByTestId('operation-state').filter({ hasText: 'succeeded' }).waitFor();
  t.equal(await op.locator('.error').count(), 0, 'the stream was read with the credential');
  t.match(await op.getByTestId('operation-line').textContent(), /^! o1 succeeded/);

  const stored = await page.evaluate<Record<string, unknown>>(
    '({ cookie: document.cookie, local: localStorage.length, keys: Object.keys(sessionStorage) })',
  );
  t.same(stored, { cookie: '', local: 0, keys: ['svc.playground.state'] }, 'kept in memory only');
  const saved = await page.evaluate<string>("sessionStorage.getItem('svc.playground.state')");
  t.notMatch(saved, good, 'the saved page state holds no credential');
  t.notMatch(saved, /eyJ|bearer|api_key/i, 'nor anything like one');
});

t.test('"Keep it for this tab" keeps it in sessionStorage, across a reload', async (t) => {
  await page.getByTestId('auth-open').click();
  await page.getByTestId('auth-dialog').waitFor();
  await page.getByTestId('auth-value').fill(good);
  await page.getByTestId('auth-remember').check();
  await page.getByTestId('auth-submit').click();
  await page.getByTestId('auth-dialog').waitFor({ state: 'hidden' });
  t.equal(await page.evaluate('localStorage.length'), 0, 'nothing in localStorage');
  t.same(
    await page.evaluate('Object.keys(sessionStorage).sort()'),
    ['svc.playground.credential', 'svc.playground.state'],
    'its own entry in sessionStorage, by the saved page state',
  );
  t.notMatch(await page.evaluate("sessionStorage.getItem('svc.playground.state')"), good, 'only there');
  const address = await page.getByTestId('session-address').textContent();
  await page.reload();
  await page.getByTestId('auth-tenant').filter({ hasText: 'acme' }).waitFor();
  t.equal(await page.getByTestId('session-address').textContent(), address, 'the session reopened with it');
  t.equal(await page.getByTestId('auth-dialog').isVisible(), false, 'not asked again');
  await page.getByTestId('tab-catalogs').click();
  await page.getByTestId('registry-entry-brewery').waitFor();

  await page.getByTestId('auth-open').click();
  await page.getByTestId('auth-clear').click();
  await t.resolves(page.getByTestId('registry-error').waitFor(), 'forgotten: the catalogs need it again');
  t.same(await page.evaluate('Object.keys(sessionStorage)'), ['svc.playground.state'], 'and it left sessionStorage');
});

t.test('offline and CSP: nothing but svc, no violation but the known one', async (t) => {
  await checkPageHygiene(t, w, stack.url);
});
