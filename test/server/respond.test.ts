/** Error answers are bounded in every format and on JSON routes; plain dry-runs show the review line; big tables render. */
import t from 'tap';
import { decode } from '@toon-format/toon';
import { svcError, type SvcError } from '../../common/errors.js';
import { render, renderErrors, table, type Format } from '../../server/http/format.js';
import { errorBody } from '../../server/http/respond.js';

const errors = (n: number): SvcError[] =>
  Array.from({ length: n }, (_, i) =>
    svcError('unexpected_character', `unexpected character \`@\` ${'m'.repeat(1000)}`, {
      hint: 'h'.repeat(1000),
      span: { line: 1, col: 1 + 2 * i, endLine: 1, endCol: 2 + 2 * i },
    }),
  );

t.test('every format shows 20 errors, then how many more, each cut short', async (t) => {
  const source = '@ '.repeat(5000);
  for (const format of ['json', 'toon', 'plain', 'ndjson'] as Format[]) {
    const small = renderErrors(errors(1000), format, source);
    const big = renderErrors(errors(4000), format, source);
    t.ok(big.length < 20_000, `${format}: ${big.length} characters for 4,000 errors`);
    t.ok(big.length - small.length < 10, `${format}: the same size for 1,000 and 4,000 errors`);
    t.match(big, /3980 more errors not shown/, format);
  }
  const json = JSON.parse(renderErrors(errors(4000), 'json')) as { errors: Array<{ code: string; message: string }> };
  t.equal(json.errors.length, 21);
  t.equal(json.errors[0]!.message.length, 300, 'a message is cut to 300 characters');
  t.equal((decode(renderErrors(errors(4000), 'toon')) as { errors: unknown[] }).errors.length, 21);
});

t.test('errorBody (JSON routes) is bounded the same way', async (t) => {
  const body = errorBody(errors(4000)) as {
    code: string;
    message: string;
    errors: Array<{ code: string; message: string }>;
  };
  t.equal(body.code, 'unexpected_character');
  t.equal(body.message.length, 300);
  t.equal(body.errors.length, 21);
  t.match(body.errors[20], { code: 'too_many_errors', message: '3980 more errors not shown' });
  t.same(errorBody([svcError('not_found', 'no')]), { code: 'not_found', message: 'no' });
});

t.test('plain dry-runs show dry_review on one line', async (t) => {
  // max_calls is asked of the service's dry_review (a variable, so the object may carry it before SvcMeta types it).
  const review = {
    verdict: 'review',
    flow: ['over_call_budget'],
    mutations: 0,
    max_calls: 3000 as number | null,
    summary: 'n1 read ...',
  };
  const o = {
    kind: 'result' as const,
    results: [],
    errors: [],
    text: 'dry-run pc1: review, flow: over_call_budget\nup to 3000 vendor calls',
    meta: { mode: 'plan' as const, plan_commit_ref: 'pc1', dry_verdict: 'review', dry_review: review },
  };
  const plain = render(o, 'plain');
  t.match(plain, /^# dry_review: verdict=review flow=over_call_budget mutations=0 max_calls=3000$/m);
  t.notOk(plain.includes('n1 read ...'), 'the summary is not repeated');
  const clean = render(
    {
      ...o,
      meta: { ...o.meta, dry_review: { verdict: 'proceed', flow: 'clean', mutations: 0, max_calls: 1, summary: '' } },
    },
    'plain',
  );
  t.match(clean, /^# dry_review: verdict=proceed flow=clean mutations=0 max_calls=1$/m);
  const unbounded = { ...review, max_calls: null };
  t.match(render({ ...o, meta: { ...o.meta, dry_review: unbounded } }, 'plain'), /max_calls=unbounded$/m);
});

t.test('a table of 300,000 rows renders (no call-stack overflow)', async (t) => {
  const rows = Array.from({ length: 300_000 }, (_, i) => ({ id: i, name: `n${i}` }));
  const text = table(rows);
  t.equal(text.split('\n').length, 300_001);
  t.match(text.split('\n')[0], /^id +name$/);
});
