import t from 'tap';
import { editDistance, nearest, suggestHint } from '../../common/suggest.js';

t.test('editDistance is the Levenshtein distance', async (t) => {
  t.equal(editDistance('', ''), 0);
  t.equal(editDistance('abc', 'abc'), 0);
  t.equal(editDistance('', 'abc'), 3);
  t.equal(editDistance('abc', ''), 3);
  t.equal(editDistance('kitten', 'sitting'), 3);
  t.equal(editDistance('flaw', 'lawn'), 2);
  t.equal(editDistance('numbr', 'number'), 1, 'one insertion');
  t.equal(editDistance('ab', 'ba'), 2, 'a transposition counts as two edits');
  t.equal(editDistance('Beer', 'beer'), 1, 'case-sensitive');
  t.equal(editDistance('abcdef', 'azced'), editDistance('azced', 'abcdef'), 'symmetric');
});

t.test('nearest ranks close candidates, case-insensitively, nearest first', async (t) => {
  t.same(nearest('numbr', ['string', 'number', 'integer']), ['number']);
  t.same(nearest('BREWERY', ['Customer', 'Brewery']), ['Brewery']);
  t.same(nearest('brewery', ['Beer', 'Brewery']), ['Brewery', 'Beer'], 'within a third of the length (3 edits for 7 letters)');
  t.same(nearest('datetme', ['date', 'datetime', 'string']), ['datetime', 'date'], 'distance 1 before the prefix match at distance 3');
  t.same(nearest('zzz', ['Brewery', 'Beer']), [], 'nothing close');
  t.same(nearest('list', ['listBeers', 'listReviews', 'listBreweries', 'listX', 'getBeer']), ['listX', 'listBeers', 'listReviews'], 'prefix matches count; at most 3');
  t.same(nearest('beer', ['listBeers', 'Review']), ['listBeers'], 'a word of 3+ letters inside a candidate counts');
  t.same(nearest('ab', ['xaby']), [], 'containment needs 3 letters or more');
  t.same(nearest('a', ['b', 'c'], 1), ['b'], 'max limits the list; ties sorted by name');
});

t.test('suggestHint forms', async (t) => {
  t.equal(suggestHint('numbr', ['string', 'number']), 'did you mean `number`?');
  t.equal(suggestHint('date', ['date_x', 'datetime']), 'did you mean one of: `date_x`, `datetime`?');
  t.equal(suggestHint('zzz', []), 'none is declared');
  t.equal(suggestHint('zzz', ['Brewery', 'Beer']), 'known: `Brewery`, `Beer`');
  const many = Array.from({ length: 14 }, (_, i) => `name${String.fromCharCode(97 + i)}long`);
  const hint = suggestHint('qqq', many);
  t.match(hint, /^known: `nameaLong`|^known: `namealong`/);
  t.ok(hint.endsWith(', ... (14 in all)'), 'long lists are cut after 12 names');
  t.equal(hint.split('`').length - 1, 24, 'twelve names shown');
});
