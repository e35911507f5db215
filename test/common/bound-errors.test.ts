import t from 'tap';
import { boundErrors, MAX_ERROR_TEXT, MAX_SHOWN_ERRORS, tooManyErrors } from '../../common/bound-errors.js';
import { svcError, type SvcError } from '../../common/errors.js';

const many = (n: number): SvcError[] =>
  Array.from({ length: n }, (_, i) =>
    svcError('syntax_error', `error ${i}`, { hint: 'h', span: { line: i + 1, col: 1 } }),
  );

t.test('at most MAX_SHOWN_ERRORS, then one too_many_errors with the count', async (t) => {
  t.equal(MAX_SHOWN_ERRORS, 20);
  const b = boundErrors(many(5000));
  t.equal(b.length, 21);
  t.same(
    b.slice(0, 20).map((e) => e.message),
    Array.from({ length: 20 }, (_, i) => `error ${i}`),
    'the first 20, in the order given',
  );
  t.same(
    b[20],
    {
      code: 'too_many_errors',
      message: '4980 more errors not shown',
      hint: 'fix the errors above and compile again',
      span: { line: 21, col: 1 },
    },
    'at the first one left out',
  );
  t.same(boundErrors(many(20)), many(20), 'twenty: unchanged, no summary');
  t.equal(boundErrors(many(21))[20]!.message, '1 more error not shown');
  t.same(boundErrors(b), b, 'idempotent: a bounded list keeps its count');
  t.equal(boundErrors(many(3), 7)[3]!.message, '7 more errors not shown', 'errors counted elsewhere are added');
  t.same(boundErrors([]), []);
  t.equal(tooManyErrors(2).span, undefined);
});

t.test('message, hint and cause are cut', async (t) => {
  const long = 'x'.repeat(100_000);
  const [e] = boundErrors([svcError('vendor_error', long, { hint: long, cause: long, path: '/steps/n1' })]);
  t.equal(e!.message.length, MAX_ERROR_TEXT);
  t.ok(e!.message.endsWith('…'));
  t.equal(e!.hint!.length, MAX_ERROR_TEXT);
  t.equal(e!.cause!.length, MAX_ERROR_TEXT);
  t.equal(e!.path, '/steps/n1', 'other fields kept');
  const short = svcError('syntax_error', 'short', { hint: 'fine' });
  t.equal(boundErrors([short])[0], short, 'a short error is passed as it is');
});
