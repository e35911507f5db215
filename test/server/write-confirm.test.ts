/**
 * A write that returns nothing confirms what it did (issue 17: "Delete answers confirm what was
 * deleted"): `deleted brewery:Beer 3` as the plain text of its block, `done` in JSON and TOON
 * blocks, one id per call of a fan-out; and the vendor really lost the rows.
 */
import t from 'tap';
import { openSession, runProgram, startStack } from '../_helpers/server.js';

t.test('a delete answers with the rows it deleted', async (t) => {
  const stack = await startStack(t);
  const { path } = await openSession(stack.url, { entry_id: 'brewery', seeds: ['brewery:Beer'] });
  // e1 = brewery:Beer; m4 = deleteBeer (the wave of a Beer seed).
  const plain = await runProgram(stack.url, path, 'e1(3).m4', 'force=true', { accept: 'text/plain' });
  t.equal(plain.status, 200, plain.text);
  t.match(plain.text, /^deleted brewery:Beer 3\n/, 'plain: the confirmation, not an empty table');
  t.notMatch(plain.text, /no rows/);
  t.equal((await fetch(`${stack.vendorUrl}/beers/3`)).status, 404, 'the vendor lost beer 3');

  const json = await runProgram(stack.url, path, 'x = e1(style="IPA", limit=2)[id]\nx.m4', 'force=true', {
    accept: 'application/json',
  });
  t.equal(json.status, 200, json.text);
  const ids = (json.body.rows as unknown[]).length === 0 ? (json.body.done as string) : '';
  t.match(ids, /^deleted brewery:Beer \d+, \d+$/, 'one id per call of the fan-out');
  for (const id of ids.replace('deleted brewery:Beer ', '').split(', '))
    t.equal((await fetch(`${stack.vendorUrl}/beers/${id}`)).status, 404, `beer ${id} is gone`);

  const toon = await runProgram(stack.url, path, 'e1(5).m4', 'force=true', { accept: 'text/toon' });
  t.match(toon.text, /^done: "deleted brewery:Beer 5"$/m);
});
