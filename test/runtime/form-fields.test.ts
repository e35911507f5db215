/**
 * The fields of a form or multipart body: nested objects `a[b]`, lists of scalars `a[]`, lists of
 * objects indexed `a[0][b]`, scalars as their text, `null` an empty value, empty containers nothing.
 */
import t from 'tap';
import { formFields } from '../../runtime/form-fields.js';

t.test('a body object flattens by the bracket convention', async (t) => {
  t.same(
    formFields({
      name: 'Pen & Ale',
      founded: 2019,
      abv: 6.5,
      open: false,
      note: null,
      owner: { id: 3, address: { city: 'Oslo' } },
      tags: ['a', 'b'],
      items: [{ price: 'p1', quantity: 2 }, { price: 'p2' }],
      grid: [
        [1, 2],
        [3, 4],
      ],
      none: {},
      empty: [],
    }),
    [
      ['name', 'Pen & Ale'],
      ['founded', '2019'],
      ['abv', '6.5'],
      ['open', 'false'],
      ['note', ''],
      ['owner[id]', '3'],
      ['owner[address][city]', 'Oslo'],
      ['tags[]', 'a'],
      ['tags[]', 'b'],
      ['items[0][price]', 'p1'],
      ['items[0][quantity]', '2'],
      ['items[1][price]', 'p2'],
      ['grid[0][]', '1'],
      ['grid[0][]', '2'],
      ['grid[1][]', '3'],
      ['grid[1][]', '4'],
    ],
  );
  t.same(new URLSearchParams(formFields({ q: 'a b&c', 'k[x]': 'é' })).toString(), 'q=a+b%26c&k%5Bx%5D=%C3%A9');
});

t.test('a body that is not an object is a bug (the catalog check refuses it)', async (t) => {
  t.throws(() => formFields(['x']), /assertion/);
  t.throws(() => formFields('x'), /assertion/);
});
