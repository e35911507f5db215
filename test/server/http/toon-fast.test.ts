import t from 'tap';
import { encode } from '@toon-format/toon';
import { fastEncode, toonEncode } from '../../../server/http/toon-fast.js';
import { prng } from '../../_helpers/prng.js';

/** Strings that exercise every quoting rule, and pieces to build random ones from. */
const TRICKY = [
  '',
  ' ',
  'a b',
  ' lead',
  'trail ',
  '\ttab',
  'true',
  'false',
  'null',
  'True',
  '42',
  '-3',
  '+7',
  '1.5',
  '1e5',
  '05',
  '0x1F',
  'lone \ud83d',
  'lone \ude00 low',
  'swapped \ude00\ud83d',
  '1.',
  '.5',
  '-',
  '#tag',
  'a#b',
  'a:b',
  'say "hi"',
  'back\\slash',
  '[x]',
  '{y}',
  'a,b',
  'a|b',
  'line\nbreak',
  'cr\r',
  'nul\u0000',
  'bell\u0007',
  'del\u007f',
  'é',
  '日本語',
  '😀 emoji',
  '\ufeffbom',
  'a\u2028b',
  'snake_case',
  'dotted.key',
  'CamelCase',
  '1abc',
  'a-b',
  'ok',
];
const PIECES = [
  'a',
  'Z',
  '0',
  '9',
  ' ',
  ',',
  ':',
  '"',
  '\\',
  '-',
  '#',
  '[',
  '{',
  '\n',
  '\t',
  'é',
  '😀',
  '.',
  '_',
  'e',
  '+',
];

function randomString(r: () => number): string {
  if (r() < 0.4) return TRICKY[Math.floor(r() * TRICKY.length)]!;
  let s = '';
  const n = Math.floor(r() * 8);
  for (let i = 0; i < n; i++) s += PIECES[Math.floor(r() * PIECES.length)]!;
  return s;
}

function randomPrimitive(r: () => number): unknown {
  const k = Math.floor(r() * 9);
  switch (k) {
    case 0:
      return randomString(r);
    case 1:
      return Math.floor(r() * 2000) - 1000;
    case 2:
      return (r() - 0.5) * 10 ** Math.floor(r() * 30 - 10);
    case 3:
      return [-0, NaN, Infinity, -Infinity, 0, 1e21, 1e-7, Number.MAX_SAFE_INTEGER][Math.floor(r() * 8)];
    case 4:
      return r() < 0.5;
    case 5:
      return null;
    default:
      return randomString(r);
  }
}

function randomKey(r: () => number): string {
  return r() < 0.7 ? ['id', 'name', 'abv', 'beerId', 'created_at', 'x.y', '_k'][Math.floor(r() * 7)]! : randomString(r);
}

function randomValue(r: () => number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const top = 1 + Math.floor(r() * 4);
  for (let i = 0; i < top; i++) out[randomKey(r)] = randomPrimitive(r);
  const fields = Array.from({ length: 1 + Math.floor(r() * 5) }, () => randomKey(r));
  const n = r() < 0.1 ? 0 : 1 + Math.floor(r() * 6);
  const rows = Array.from({ length: n }, () => {
    const row: Record<string, unknown> = {};
    // Rows with the same keys in another order are still one table.
    const order = r() < 0.2 ? [...fields].reverse() : fields;
    for (const f of order) row[f] = randomPrimitive(r);
    return row;
  });
  out[r() < 0.8 ? 'rows' : randomKey(r)] = rows;
  if (r() < 0.3) out.more = `page(pg${Math.floor(r() * 9)})[..]`;
  return out;
}

/** The text, or the error's class and message (a lone surrogate throws in both). */
function outcome(f: () => string): string {
  try {
    return f();
  } catch (e) {
    return `${(e as Error).name}: ${(e as Error).message}`;
  }
}

t.test('the fast path is byte-identical to @toon-format/toon on random flat rows', async (t) => {
  let fast = 0;
  for (let seed = 1; seed <= 3000; seed++) {
    const value = randomValue(prng(seed));
    const f = fastEncode(value);
    if (f !== undefined) fast++;
    const want = outcome(() => encode(value));
    const got = outcome(() => toonEncode(value));
    if ((f !== undefined && f !== want) || got !== want) {
      t.fail(`seed ${seed}: ${JSON.stringify(value)}`, { found: f ?? got, wanted: want });
      return;
    }
  }
  t.ok(fast > 2000, `most random values take the fast path (${fast} of 3000)`);
});

t.test('the answer of a clean read takes the fast path', async (t) => {
  const v = {
    entity: 'brewery:Review',
    count: 2,
    total: 210,
    more: 'page(pg1)[..]',
    rows: [
      { id: 1, beerId: 3, rating: 5, author: 'ana', text: 'Crisp, clean: "great"', createdAt: '2024-01-02T03:04:05Z' },
      { id: 2, beerId: 3, rating: -0, author: '', text: null, createdAt: 'true' },
    ],
  };
  t.equal(fastEncode(v), encode(v));
  t.equal(fastEncode({ entity: 'x', count: 0, rows: [] }), encode({ entity: 'x', count: 0, rows: [] }));
});

t.test('other shapes and values go to the library, which gives the same text', async (t) => {
  const cases: Array<Record<string, unknown>> = [
    {},
    { rows: [{ id: 1, customer: { name: 'a' } }] },
    { rows: [{ id: 1 }, { id: 2, extra: 3 }] },
    { rows: [{ id: 1 }, { other: 2 }] },
    { rows: [1, 2, 3] },
    { rows: [{}] },
    { rows: [{ id: [1, 2] }] },
    { _meta: { svc: { mode: 'live' } } },
    { a: { x: 1 }, b: { x: 2 } },
    { d: new Date(0) },
    { u: undefined, n: 1 },
    { rows: [{ id: 1, when: new Date(0) }] },
    { ['__proto__']: 1 },
  ];
  for (const c of cases) {
    t.equal(fastEncode(c), undefined, JSON.stringify(c));
    t.equal(toonEncode(c), encode(c));
  }
  t.throws(() => toonEncode({ s: 'lone \ud83d' }), TypeError, 'a lone surrogate throws, as in the library');
  t.throws(() => toonEncode({ rows: [{ ['k\ude00']: 1 }] }), TypeError);
  t.equal(fastEncode({ s: 'pair \ud83d\ude00' }), encode({ s: 'pair \ud83d\ude00' }), 'a surrogate pair is text');
});

t.test('rows told apart by their keys alone: a missing field, an inherited name, a polluted prototype', async (t) => {
  const cases: Array<Record<string, unknown>> = [
    {
      rows: [
        { id: 1, a: 2 },
        { id: 2, b: 3 },
      ],
    },
    {
      rows: [
        { id: 1, toString: 'x' },
        { id: 2, other: 3 },
      ],
    },
    {
      rows: [
        { id: 1, constructor: 2 },
        { id: 2, valueOf: 3 },
      ],
    },
    { rows: [{ id: 1 }, Object.assign(Object.create(null) as object, { id: 2 })] },
  ];
  for (const c of cases) t.equal(toonEncode(c), encode(c), JSON.stringify(c));
  t.equal(fastEncode(cases[0]!), undefined, 'a row without a field of the first goes to the library');
  t.equal(fastEncode(cases[1]!), undefined, 'so does one whose missing field Object.prototype has');
  const proto = Object.prototype as Record<string, unknown>;
  // A row without `name` would read the inherited one: it has to be counted as a key of its own.
  proto.name = 'inherited';
  try {
    const v = {
      rows: [
        { id: 1, name: 'a' },
        { id: 2, other: 'b' },
        { id: 3, name: 'c' },
      ],
    };
    t.equal(
      fastEncode(v),
      undefined,
      'with an enumerable key on Object.prototype, rows after the first go to the library',
    );
    t.equal(toonEncode(v), encode(v));
  } finally {
    delete proto.name;
  }
  const v = {
    rows: [
      { id: 1, name: 'a' },
      { name: 'b', id: 2 },
    ],
  };
  t.equal(fastEncode(v), encode(v), 'the same keys in another order are one table');
});
