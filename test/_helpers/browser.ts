/**
 * Test helper for the playground's end-to-end tests (docs/playground.md): Debian's Chromium
 * (`/usr/bin/chromium`, installed by scripts/pretest.sh and .ci/run) driven by playwright-core,
 * one browser per test file, one context per page (so credentials in sessionStorage never leak
 * between pages). Every page is watched, across reloads: each request it makes, its console
 * messages, its uncaught errors and the CSP violations it reports (`securitypolicyviolation`
 * events, recorded by an init script, which CDP runs whatever the page's CSP says).
 */
import type { Test } from 'tap';
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { sleep } from './until.js';

export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'];
/** A laptop screen (the screenshots use it too). */
export const VIEWPORT = { width: 1366, height: 850 };

/** Launches Chromium; it closes when `t` ends. No browser is an error, never a skip. */
export async function launchBrowser(t: Test): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`the browser tests need ${CHROMIUM}: run apt-get install -y chromium (as root), then test again`);
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  t.teardown(() => browser.close());
  return browser;
}

/** One CSP violation as the page saw it. */
export interface CspViolation {
  directive: string;
  blocked: string;
  sample: string;
}

export interface Watched {
  page: Page;
  /** The URL of every request the page made, in order. */
  requests: string[];
  /** Console messages (`type: text`). */
  console: Array<{ type: string; text: string }>;
  /** Uncaught errors of the page. */
  errors: string[];
  /**
   * The CSP violations the page reported, once each CSP report of the console has its event
   * (Chrome logs at once, the event comes in a later task; bounded wait).
   */
  violations(): Promise<CspViolation[]>;
}

const CSP_REPORT = /Content Security Policy/i;

/** Runs in the page before its own scripts (whatever its CSP says); reports reach the test through a binding. */
const RECORD_CSP = `
  document.addEventListener('securitypolicyviolation', (e) => {
    window.__svcCspReport({ directive: e.effectiveDirective, blocked: e.blockedURI, sample: e.sample });
  });
`;

/** Opens `url` in a fresh context (light by default) and waits until the registry is listed. */
export async function openPage(
  browser: Browser,
  url: string,
  opts: { colorScheme?: 'light' | 'dark'; waitFor?: string } = {},
): Promise<Watched> {
  const context = await browser.newContext({ viewport: VIEWPORT, colorScheme: opts.colorScheme ?? 'light' });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  const violations: CspViolation[] = [];
  await page.exposeFunction('__svcCspReport', (v: CspViolation) => violations.push(v));
  await page.addInitScript(RECORD_CSP);
  const w: Watched = {
    page,
    requests: [],
    console: [],
    errors: [],
    violations: async () => {
      const reported = () => w.console.filter((m) => m.type === 'error' && CSP_REPORT.test(m.text)).length;
      for (let i = 0; i < 60 && violations.length < reported(); i++) await sleep(50);
      return [...violations];
    },
  };
  page.on('request', (r) => w.requests.push(r.url()));
  page.on('console', (m) => w.console.push({ type: m.type(), text: m.text() }));
  page.on('pageerror', (e) => w.errors.push(String(e)));
  await page.goto(url);
  await page.getByTestId(opts.waitFor ?? 'registry-list').waitFor();
  return w;
}

/**
 * The console errors nothing explains: not a 4xx answer the page shows (Chrome logs each as
 * "Failed to load resource"), not one of the `allowed` CSP reports (`allowedCsp` of them at most).
 */
export function unexplainedConsole(w: Watched, allowedCsp: number): string[] {
  const errors = w.console.filter((m) => m.type === 'error').map((m) => m.text);
  const csp = errors.filter((m) => CSP_REPORT.test(m));
  const other = errors.filter(
    (m) => !CSP_REPORT.test(m) && !/^Failed to load resource: the server responded with a status of 4\d\d/.test(m),
  );
  return [...other, ...(csp.length > allowedCsp ? csp : [])];
}

/**
 * Checks what every page must keep to: no request off the svc origin (the page works offline), no
 * uncaught error, no CSP violation except the known one (docs/playground.md, "Security
 * headers"): Chrome's editing code setting a `style` attribute when a selection across highlighted
 * tokens is replaced (`style-src-attr`, blocked; CodeMirror redraws the line). Each console CSP
 * report must be one of those.
 */
export async function checkPageHygiene(t: Test, w: Watched, origin: string): Promise<void> {
  const off = w.requests.filter((u) => new URL(u).origin !== origin);
  t.same(off, [], `every request went to ${origin} (${w.requests.length} requests)`);
  t.same(w.errors, [], 'no uncaught error in the page');
  const violations = await w.violations();
  const unexpected = violations.filter((v) => v.directive !== 'style-src-attr');
  t.same(unexpected, [], 'no CSP violation but the known style attribute of the editor');
  t.same(unexplainedConsole(w, violations.length - unexpected.length), [], 'no unexplained console error');
}

/** The program editor's content (CodeMirror's editable element). */
export const editor = (page: Page): Locator => page.getByTestId('program-editor');

/** Replaces the program with `text`, typed key by key (brackets close themselves and are typed over). */
export async function typeProgram(page: Page, text: string): Promise<void> {
  const ed = editor(page);
  await ed.click();
  await page.keyboard.press('ControlOrMeta+a');
  await page.keyboard.press('Delete');
  for (const [i, line] of text.split('\n').entries()) {
    if (i > 0) await page.keyboard.press('Enter');
    await page.keyboard.type(line);
    await page.keyboard.press('Escape'); // close the completion list, if open (Enter would pick from it)
  }
}

/** The program as the editor holds it (one line per `.cm-line`). */
export async function programText(page: Page): Promise<string> {
  return (await editor(page).locator('.cm-line').allTextContents()).join('\n');
}

/** Opens a session from the Session tab on `seeds` of `entry` and waits for the teaching table. */
export async function openSession(page: Page, entry: string, seeds: string[]): Promise<void> {
  await page.getByTestId('tab-session').click();
  await page.getByTestId('session-entry').selectOption(entry);
  for (const s of seeds) {
    await page.getByTestId('seed-input-open').fill(s);
    await page.getByTestId('seed-add-open').click();
  }
  await page.getByTestId('open-session').click();
  await page.getByTestId('teaching-table').first().waitFor();
}

/** The text of every cell of a results table's column `col` (by header order). */
export async function column(table: Locator, col: string): Promise<string[]> {
  const headers = await table.locator('thead th').allTextContents();
  const i = headers.findIndex((h) => h.replace(/[▲▼]/g, '').trim() === col);
  if (i < 0) throw new Error(`no column ${col} in ${headers.join(', ')}`);
  return table.locator(`tbody tr td:nth-child(${i + 1})`).allTextContents();
}
