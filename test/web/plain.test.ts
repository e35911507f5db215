/**
 * The playground's TOON and plain views (web/src/components/plain.ts) against the server's own
 * renderer (server/http/format.ts): for answers of every shape, the page, given the JSON answer
 * the server sends, writes the text the server sends for `Accept: text/toon` and `text/plain`.
 * The one documented difference: a program diagnostic without its source line and caret.
 */
import t from 'tap';
import { render } from '../../server/http/format.js';
import type { Outcome } from '../../server/execute/outcome.js';
import { cleanAnswer, plainText, toonText } from '../../web/src/components/plain.js';
import type { ExecAnswer } from '../../web/src/api/types.js';

const rows = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    id: i + 1,
    name: i === 2 ? 'tab\there, new\nline' : `Brewery ${i}`,
    city: i % 2 ? null : 'Ghent',
    score: i / 3,
    tags: ['a', 'b'],
    owner: { name: `o${i}`, since: 2000 + i },
    beers:
      i === 1
        ? []
        : [
            { id: 10 + i, abv: 5.5 },
            { id: 20 + i, abv: null },
          ],
    long: 'x'.repeat(i === 0 ? 70 : 3),
  }));

const live = { mode: 'live' as const, commit_id: 'c'.repeat(64), run_id: 'pr' + 'a'.repeat(64), status: 'succeeded' };

const cases: Array<[string, Outcome, { wrote?: boolean }?]> = [
  [
    'a clean read',
    {
      kind: 'result',
      clean: true,
      results: [{ entity: 'brewery:Brewery', rows: rows(5), total: 42, next: 'pg3' }],
      errors: [],
      meta: live,
    },
  ],
  [
    'a page',
    {
      kind: 'result',
      clean: true,
      results: [{ entity: 'brewery:Beer', rows: rows(2) }],
      errors: [],
      meta: { mode: 'live' },
    },
  ],
  [
    'no rows',
    { kind: 'result', clean: true, results: [{ entity: 'brewery:Beer', rows: [], total: 0 }], errors: [], meta: live },
  ],
  [
    'one row',
    {
      kind: 'result',
      clean: true,
      results: [{ entity: 'brewery:Beer', rows: rows(1), total: 1 }],
      errors: [],
      meta: live,
    },
  ],
  [
    'two returned expressions',
    {
      kind: 'result',
      clean: true,
      results: [
        { entity: 'brewery:Brewery', rows: rows(2), total: 2 },
        { entity: 'brewery:Beer', rows: rows(3) },
      ],
      errors: [],
      meta: live,
    },
  ],
  [
    'a write run',
    {
      kind: 'result',
      results: [
        { entity: 'brewery:Beer', rows: rows(1) },
        { entity: 'brewery:Beer', rows: [], done: 'deleted brewery:Beer 3' },
      ],
      errors: [],
      meta: live,
    },
    { wrote: true },
  ],
  [
    'a dry-run',
    {
      kind: 'result',
      results: [],
      errors: [],
      text: 'dry-run pc2: review, 1 write; run it with its token pc2 within 10 minutes\n  n1 create brewery:Beer',
      meta: {
        mode: 'plan',
        commit_id: 'c'.repeat(64),
        plan_commit_ref: 'pc2',
        dry_verdict: 'review',
        dry_review: { verdict: 'review', flow: ['over_call_budget'], mutations: 1, max_calls: null, summary: 'x' },
      },
    },
  ],
  [
    'a failed run with rows, errors and warnings',
    {
      kind: 'result',
      results: [{ entity: 'brewery:Brewery', rows: rows(2) }],
      errors: [{ code: 'vendor_error', message: 'the vendor answered 500', hint: 'try again later' }],
      warnings: [{ code: 'store_unavailable', message: 'the run could not be stored' }],
      meta: { ...live, status: 'failed', code: 'vendor_error' },
    },
  ],
  [
    'a gate refusal',
    {
      kind: 'result',
      results: [],
      errors: [{ code: 'plan_token_unknown', message: '`pc9` is not a plan token of this session' }],
      meta: { code: 'plan_token_unknown' },
    },
  ],
];

for (const [name, o, how] of cases) {
  t.test(name, async (t) => {
    const body = JSON.parse(render(o, 'json')) as ExecAnswer;
    const clean = cleanAnswer(body, how?.wrote ?? false);
    t.equal(clean, o.clean === true, 'clean as the server has it');
    t.equal(toonText(body, clean), render(o, 'toon'), 'TOON');
    t.equal(plainText(body, clean), render(o, 'plain'), 'plain');
  });
}

t.test('a program diagnostic: one line with line:col where the server also draws the source line', async (t) => {
  const o: Outcome = {
    kind: 'result',
    results: [],
    errors: [
      {
        code: 'unknown_symbol',
        message: '`e9` is not a symbol of this session',
        hint: 'did you mean `e1`?',
        span: { line: 1, col: 1, endLine: 1, endCol: 3 },
      },
    ],
    meta: { code: 'unknown_symbol' },
  };
  const body = JSON.parse(render(o, 'json')) as ExecAnswer;
  const page = plainText(body, false);
  const server = render(o, 'plain', 'e9(city="Berlin")');
  t.match(server, /unknown_symbol at 1:1: `e9` is not a symbol of this session\n {2}1 \| e9\(city="Berlin"\)\n/);
  t.equal(page, server.replace(/\n {2}1 \| .*\n {2} {2}\| \^+/, ''), 'the same but the source line and caret');
});
