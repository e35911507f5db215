/**
 * The depth bound of vendor answers (runtime/json-depth.ts, runtime/decode.ts): levels counted
 * without recursion, the bound exact at MAX_VENDOR_JSON_DEPTH, and what decoding does past it.
 */
import t from 'tap';
import type { Capability } from '../../pack/cgs.js';
import { decodeResponse } from '../../runtime/decode.js';
import { jsonDeeperThan, MAX_VENDOR_JSON_DEPTH } from '../../runtime/json-depth.js';

const arrays = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
const objects = (levels: number) => '{"a":'.repeat(levels - 1) + '{}' + '}'.repeat(levels - 1);

t.test('jsonDeeperThan counts levels of arrays and objects', async (t) => {
  t.equal(jsonDeeperThan(42, 0), false, 'a scalar is level 0');
  t.equal(jsonDeeperThan('[[[', 0), false, 'brackets inside a string are text');
  t.equal(jsonDeeperThan([], 0), true);
  t.equal(jsonDeeperThan([], 1), false);
  t.equal(jsonDeeperThan(JSON.parse('[[1]]'), 1), true);
  t.equal(jsonDeeperThan(JSON.parse('{"a":[{"b":{}}]}'), 4), false, 'mixed: 4 levels');
  t.equal(jsonDeeperThan(JSON.parse('{"a":[{"b":{}}]}'), 3), true);
  // The deep branch last among shallow ones: every branch is looked at, not the first only.
  t.equal(jsonDeeperThan(JSON.parse('[[1],{"x":2},[[[[]]]]]'), 4), true, 'a deep last branch');
  t.equal(jsonDeeperThan(JSON.parse('[[[[[]]]],[1],{"x":2}]'), 4), true, 'a deep first branch');
  for (const make of [arrays, objects]) {
    t.equal(jsonDeeperThan(JSON.parse(make(MAX_VENDOR_JSON_DEPTH)), MAX_VENDOR_JSON_DEPTH), false, 'at the bound');
    t.equal(jsonDeeperThan(JSON.parse(make(MAX_VENDOR_JSON_DEPTH + 1)), MAX_VENDOR_JSON_DEPTH), true, 'one past');
  }
});

t.test('jsonDeeperThan does not recurse: 300,000 levels, and 200,000 siblings', async (t) => {
  t.equal(jsonDeeperThan(JSON.parse(arrays(300_000)), MAX_VENDOR_JSON_DEPTH), true);
  t.equal(jsonDeeperThan(JSON.parse(objects(300_000)), MAX_VENDOR_JSON_DEPTH), true);
  const wide = Array.from({ length: 200_000 }, (_, i) => ({ id: i, tags: [i] }));
  t.equal(jsonDeeperThan(wide, 3), false);
  t.equal(jsonDeeperThan(wide, 2), true);
});

function cap(returns: Capability['returns']): Capability {
  return {
    name: 'listItems',
    kind: returns === 'none' ? 'action' : 'query',
    entity: 'Item',
    description: 'test capability',
    params: [],
    returns,
    http: { method: 'GET', path: '/items', query: {}, headers: {}, array_style: 'repeat', response: { path: '' } },
  };
}
const answer = (text: string) => ({
  status: 200,
  headers: { 'content-type': 'application/json' },
  body: Buffer.from(text),
});

t.test('decodeResponse refuses an answer past the bound, saying the depth', async (t) => {
  const deep = `[{"id":1,"name":${arrays(10_000)}}]`;
  for (const returns of ['rows', 'row'] as const) {
    const d = decodeResponse(cap(returns), answer(returns === 'rows' ? deep : deep.slice(1, -1)));
    t.equal(d.ok, false, returns);
    if (!d.ok) {
      t.equal(d.problem, `the vendor answer is nested deeper than 256 levels (arrays or objects inside each other)`);
      t.match(d.hint, /svc reads vendor answers up to 256 levels deep/);
    }
  }
  const edge = decodeResponse(cap('rows'), answer(`[{"id":1,"name":${arrays(MAX_VENDOR_JSON_DEPTH - 2)}}]`));
  t.equal(edge.ok, true, 'an answer at the bound is read');
  // A capability that returns nothing reads no rows: a deep answer of a write is not a failure.
  const none = decodeResponse(cap('none'), answer(deep));
  t.same(none, { ok: true, rows: [], body: null }, 'a write: its answer dropped');
});
