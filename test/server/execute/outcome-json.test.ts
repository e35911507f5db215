import t from 'tap';
import { svcError } from '../../../common/errors.js';
import { blockJson, errorJson, errorsJson, withHints } from '../../../server/execute/outcome-json.js';

t.test('errorJson writes code, message, hint, line, col and path, leaving out what is absent', async (t) => {
  const e = svcError('unknown_symbol', 'no e9', {
    hint: 'did you mean e2?',
    span: { line: 2, col: 5 },
    path: '/steps/s1',
  });
  t.strictSame(errorJson(e), {
    code: 'unknown_symbol',
    message: 'no e9',
    hint: 'did you mean e2?',
    line: 2,
    col: 5,
    path: '/steps/s1',
  });
  t.strictSame(errorJson(svcError('not_found', 'no')), { code: 'not_found', message: 'no' });
});

t.test('errorsJson is bounded: 20 errors, then one too_many_errors count', async (t) => {
  const many = Array.from({ length: 30 }, (_, i) => svcError('bad_arguments', `e${i}`));
  const list = errorsJson(many);
  t.equal(list.length, 21);
  t.match(list[20], { code: 'too_many_errors', message: '10 more errors not shown' });
});

t.test("withHints words the hints of the codes in the surface's table and keeps the others", async (t) => {
  const errors = [
    svcError('unknown_session', 'gone', { hint: 'core words' }),
    svcError('not_found', 'no', { hint: 'kept' }),
  ];
  const worded = withHints(errors, { unknown_session: 'surface words' });
  t.same(
    worded.map((e) => e.hint),
    ['surface words', 'kept'],
  );
  t.equal(errors[0]!.hint, 'core words', 'the input is not changed');
  t.equal(withHints(errors, {}), errors, 'no code in the table: the same list');
});

t.test("blockJson puts the surface's fields between total and more, and writes the rows asked for", async (t) => {
  const rows = [{ id: 1 }, { id: 2 }, { id: 3 }];
  const b = { entity: 'shop:Order', rows, total: 40, next: 'pg2' };
  const http = blockJson(b, { more: (pg) => `page(${pg})[..]` });
  t.same(Object.keys(http), ['entity', 'count', 'total', 'more', 'rows']);
  t.equal(http.more, 'page(pg2)[..]');
  t.equal(http.rows, rows);
  const mcp = blockJson(b, { more: (pg) => `run_ref=l_x_${pg}`, extra: { shown: 2 }, rows: rows.slice(0, 2) });
  t.same(Object.keys(mcp), ['entity', 'count', 'total', 'shown', 'more', 'rows']);
  t.equal(mcp.count, 3, 'count is the rows of the block, not the rows written');
  t.same(mcp.rows, [{ id: 1 }, { id: 2 }]);
  t.same(blockJson({ entity: 'shop:Order', rows: [], done: 'deleted shop:Order 3' }, { more: () => 'x' }), {
    entity: 'shop:Order',
    count: 0,
    done: 'deleted shop:Order 3',
    rows: [],
  });
});
