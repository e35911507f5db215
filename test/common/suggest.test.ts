import t from 'tap';
import { didYouMean, editDistance, knownList, nearest, suggestHint } from '../../common/suggest.js';

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
  t.same(
    nearest('brewery', ['Beer', 'Brewery']),
    ['Brewery', 'Beer'],
    'within a third of the length (3 edits for 7 letters)',
  );
  t.same(
    nearest('datetme', ['date', 'datetime', 'string']),
    ['datetime', 'date'],
    'distance 1 before the prefix match at distance 3',
  );
  t.same(nearest('zzz', ['Brewery', 'Beer']), [], 'nothing close');
  t.same(
    nearest('list', ['listBeers', 'listReviews', 'listBreweries', 'listX', 'getBeer']),
    ['listX', 'listBeers', 'listReviews'],
    'prefix matches count; at most 3',
  );
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

t.test('didYouMean: one phrasing, decorated candidates, undefined when nothing is close', async (t) => {
  t.equal(didYouMean('numbr', ['string', 'number']), 'did you mean `number`?');
  t.equal(didYouMean('date', ['date_x', 'datetime']), 'did you mean one of: `date_x`, `datetime`?');
  t.equal(didYouMean('zzz', ['Brewery', 'Beer']), undefined);
  t.equal(didYouMean('zzz', []), undefined);
  const label: Record<string, string> = { e1: 'shop:Order', e2: 'shop:Product' };
  t.equal(
    didYouMean('e9', ['e1', 'e2'], { show: (c) => `\`${c}\` (${label[c]})` }),
    'did you mean one of: `e1` (shop:Order), `e2` (shop:Product)?',
    'compared bare, shown decorated',
  );
  t.equal(didYouMean('Ordr', ['Order'], { show: (c) => `\`shop:${c}\`` }), 'did you mean `shop:Order`?');
  t.equal(
    didYouMean('a', ['b', 'b', 'c'], { max: 5 }),
    'did you mean one of: `b`, `c`?',
    'duplicates named once; max widens the list',
  );
});

t.test('knownList and suggestHint options: label, limit, none', async (t) => {
  t.equal(knownList(['id', 'name']), 'known: `id`, `name`');
  t.equal(knownList(['id', 'name'], { known: 'fields' }), 'fields: `id`, `name`');
  t.equal(knownList([], { none: 'there are no fields here' }), 'there are no fields here');
  t.equal(knownList(['a', 'b', 'c'], { limit: 2 }), 'known: `a`, `b`, ... (3 in all)');
  t.equal(
    knownList(['r1', 'm2'], { show: (c) => `\`${c}\` (x)`, known: 'after a Brewery row', limit: Infinity }),
    'after a Brewery row: `r1` (x), `m2` (x)',
  );
  t.equal(suggestHint('zzz', ['Brewery', 'Beer'], { known: 'entities' }), 'entities: `Brewery`, `Beer`');
  t.equal(suggestHint('Bear', ['Brewery', 'Beer'], { known: 'entities' }), 'did you mean `Beer`?');
});
