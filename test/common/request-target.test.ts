/**
 * A request target split by hand (`requestUrl`) reads exactly as `new URL` reads it: fixed cases
 * at the edges and a seeded fuzz over every ASCII character and a few others.
 */
import t, { type Test } from 'tap';
import { isPlainTarget, requestUrl } from '../../common/request-target.js';
import { prng } from '../_helpers/prng.js';

const BASE = 'http://svc.invalid';

/** pathname, search and the parameters, or the error's name when parsing throws. */
function reading(f: () => { pathname: string; search: string; searchParams: URLSearchParams }) {
  try {
    const u = f();
    return { pathname: u.pathname, search: u.search, params: [...u.searchParams] };
  } catch (e) {
    return { error: (e as Error).name };
  }
}

/** Whether `target` reads the same both ways; a difference fails `t` with both readings. */
function agree(t: Test, target: string): boolean {
  const got = reading(() => requestUrl(target, BASE));
  const want = reading(() => new URL(target, BASE));
  if (JSON.stringify(got) === JSON.stringify(want)) return true;
  t.fail(`${JSON.stringify(target)} reads differently`, { found: got, wanted: want });
  return false;
}

t.test('fixed targets read as the URL parser reads them', async (t) => {
  const cases = [
    '/',
    '/execute/ph/s1',
    '/v1/registry?q=beer&limit=5',
    '/a?',
    '/a?b?c',
    '/a?x=1&x=2&y',
    '/a?q=a+b%20c',
    '/a?%zz',
    '/a%2Fb/%7e',
    '//host/path',
    '/a/../b',
    '/a/./b',
    '/a/%2e%2e/b',
    '/a/.%2E/b',
    '/.well-known/x',
    '/a\\b',
    "/a?x='1'",
    "/it's",
    '/a#frag',
    '/a?b#c',
    '/a b',
    '/é',
    '/a?é=ü',
    '/a\tb',
    '/a{b}',
    '/a|b',
    '/a^b',
    '/a`b',
    '/a<b>',
    '/a"b',
    '/:@!$&()*+,;=~_-.',
    '*',
    'x/y',
    '',
  ];
  t.ok(
    cases.every((c) => agree(t, c)),
    `all ${cases.length} read the same`,
  );
  t.ok(isPlainTarget('/execute/ph/s1'), 'an execute path is plain');
  t.ok(isPlainTarget('/v1/registry?q=beer&limit=5'), 'so is a query');
  for (const c of ['//host/path', '/a/../b', '/a\\b', "/a?x='1'", '/a#frag', '/é', '/a b'])
    t.notOk(isPlainTarget(c), `${JSON.stringify(c)} goes to the URL parser`);
});

const ASCII = Array.from({ length: 128 }, (_, i) => String.fromCharCode(i));
const FAVOURED = [
  '/',
  '/',
  '/',
  '?',
  '&',
  '=',
  '%',
  '%2e',
  '%2E',
  '.',
  '..',
  'a',
  'b',
  '1',
  '%41',
  'é',
  '😀',
  '#',
  '\\',
];

t.test('random targets read as the URL parser reads them', async (t) => {
  let plain = 0;
  for (let seed = 1; seed <= 20_000; seed++) {
    const r = prng(seed);
    let target = r() < 0.9 ? '/' : '';
    const n = Math.floor(r() * 12);
    for (let i = 0; i < n; i++)
      target += r() < 0.6 ? FAVOURED[Math.floor(r() * FAVOURED.length)]! : ASCII[Math.floor(r() * 128)]!;
    if (isPlainTarget(target)) plain++;
    if (!agree(t, target)) return;
  }
  t.pass('20000 random targets read the same');
  t.ok(plain > 2_000, `many of them take the split by hand (${plain} of 20000)`);
});

t.test('parameters are parsed once, when first read', async (t) => {
  const u = requestUrl('/a?x=1', BASE);
  t.equal(u.searchParams, u.searchParams, 'the same object each time');
  t.equal(u.searchParams.get('x'), '1');
});
