import t from 'tap';
import { fail, SvcFailure } from '../../common/errors.js';

t.test('fail throws one error as a SvcFailure, with its hint when given', async (t) => {
  const caught = (f: () => never): unknown => {
    try {
      return f();
    } catch (e) {
      return e;
    }
  };
  const hinted = caught(() => fail('unknown_session', 'no session s9', 'open one with POST /execute'));
  t.ok(hinted instanceof SvcFailure, 'a SvcFailure');
  t.same((hinted as SvcFailure).errors, [
    { code: 'unknown_session', message: 'no session s9', hint: 'open one with POST /execute' },
  ]);
  t.equal((hinted as SvcFailure).message, 'unknown_session: no session s9');
  const bare = caught(() => fail('bad_arguments', 'no program'));
  t.strictSame(
    (bare as SvcFailure).errors,
    [{ code: 'bad_arguments', message: 'no program' }],
    'no hint key without a hint',
  );
});
