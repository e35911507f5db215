import t from 'tap';
import { article } from '../../common/article.js';
import { QUOTE_MAX, quote, quoteJson } from '../../common/quote.js';

t.test('quote keeps short text, puts it on one line and cuts long text', async (t) => {
  t.equal(quote('e2'), 'e2');
  t.equal(quote('a\n\n\tb'), 'a b', 'runs of line breaks and tabs become one space');
  t.equal(quote('x'.repeat(100)), `${'x'.repeat(QUOTE_MAX)}…`);
});

t.test('quoteJson shows a value as JSON, cut past 32 characters', async (t) => {
  t.equal(quoteJson('abc'), '"abc"');
  t.equal(quoteJson([1, 2]), '[1,2]');
  t.equal(quoteJson(null), 'null');
  const exact = 'x'.repeat(30); // 32 characters with its quotes
  t.equal(quoteJson(exact), `"${exact}"`, '32 characters are shown whole');
  const long = quoteJson('y'.repeat(40));
  t.equal(long, `"${'y'.repeat(28)}...`);
  t.equal(long.length, 32);
});

t.test('article: an before a vowel letter, a otherwise', async (t) => {
  t.equal(article('integer'), 'an integer');
  t.equal(article('string'), 'a string');
  t.equal(article('object'), 'an object');
  t.equal(article('array'), 'an array');
  t.equal(article('date'), 'a date');
});
