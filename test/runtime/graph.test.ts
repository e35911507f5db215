/**
 * The session graph's row map (runtime/graph.ts RowGraph): what `find` hands out (age, fields, a
 * get's whole row), a list's partial row never downgrading a get's row of the same moment,
 * `forget` per session and entity, the LRU cap across sessions, `drain` of the rows added since
 * the last one, `items`/`load` for persistence, and ids of different types; `keyable`/`isIdGet`.
 */
import t from 'tap';
import type { JsonValue } from '../../pack/cgs.js';
import { isIdGet, keyable, RowGraph } from '../../runtime/graph.js';
import { graphRegistry } from '../_helpers/graph-vendor.js';

const reg = graphRegistry('http://127.0.0.1:1');
const Item = reg.entity('fault', 'Item')!;
const Parent = reg.entity('fault', 'Parent')!;
const whole = (id: JsonValue) => ({ id, name: `parent ${String(id)}`, code: `P-${String(id)}` });
const partial = (id: JsonValue) => ({ id, name: `parent ${String(id)}` });

t.test('find: rows seen at or after `since` only', async (t) => {
  const g = new RowGraph();
  g.seen('s', 'fault', Parent, [whole(1)], 100, true);
  t.same(g.find('s', 'fault', 'Parent', 1, 100), whole(1), 'seen at since: found');
  t.same(g.find('s', 'fault', 'Parent', 1, 50), whole(1), 'seen after since: found');
  t.equal(g.find('s', 'fault', 'Parent', 1, 101), undefined, 'seen before since: not found');
  t.equal(g.find('s', 'fault', 'Parent', 2, 0), undefined, 'another id: not found');
  t.equal(g.find('other', 'fault', 'Parent', 1, 0), undefined, 'another session: not found');
  t.equal(g.find('s', 'other', 'Parent', 1, 0), undefined, 'another api: not found');
});

t.test('find: a projection needs its fields in the row; no projection needs a row a get fetched', async (t) => {
  const g = new RowGraph();
  g.seen('s', 'fault', Parent, [partial(1)], 100, false);
  t.same(g.find('s', 'fault', 'Parent', 1, 0, ['name']), partial(1), 'a list row holds name');
  t.same(g.find('s', 'fault', 'Parent', 1, 0, ['id', 'name']), partial(1));
  t.equal(g.find('s', 'fault', 'Parent', 1, 0, ['name', 'code']), undefined, 'a list row without code: not used');
  t.equal(g.find('s', 'fault', 'Parent', 1, 0), undefined, 'no projection: a list row is not whole');
  g.seen('s', 'fault', Parent, [whole(2)], 100, true);
  t.same(g.find('s', 'fault', 'Parent', 2, 0), whole(2), "no projection: the get's row");
  t.same(g.find('s', 'fault', 'Parent', 2, 0, ['code']), whole(2));
  t.equal(g.find('s', 'fault', 'Parent', 2, 0, ['missing']), undefined, 'a field no row has: not used');
});

t.test("a list's partial row of the same moment does not downgrade a get's whole row; a later one does", async (t) => {
  const g = new RowGraph();
  g.seen('s', 'fault', Parent, [whole(1)], 100, true);
  g.seen('s', 'fault', Parent, [partial(1)], 100, false);
  t.same(g.find('s', 'fault', 'Parent', 1, 0), whole(1), 'still whole, with its code');
  t.same(g.find('s', 'fault', 'Parent', 1, 0, ['code']), whole(1), 'code still there');
  g.seen('s', 'fault', Parent, [partial(1)], 99, false);
  t.same(g.find('s', 'fault', 'Parent', 1, 0), whole(1), 'an older list row neither');
  g.seen('s', 'fault', Parent, [{ ...partial(1), name: 'renamed' }], 101, false);
  t.equal(g.find('s', 'fault', 'Parent', 1, 0), undefined, 'a newer list row replaces it: no longer whole');
  t.same(g.find('s', 'fault', 'Parent', 1, 0, ['name']), { id: 1, name: 'renamed' }, 'the newer values win');
  g.seen('s', 'fault', Parent, [whole(1)], 102, true);
  t.same(g.find('s', 'fault', 'Parent', 1, 0), whole(1), 'a newer get makes it whole again');
});

t.test('rows without a usable id are not kept', async (t) => {
  const g = new RowGraph();
  g.seen('s', 'fault', Parent, [{ name: 'no id' }, { id: null }, { id: { a: 1 } }], 1, true);
  t.equal(g.size, 0);
});

t.test('forget drops one session’s rows of one entity', async (t) => {
  const g = new RowGraph(100, 0, true);
  g.seen('a', 'fault', Parent, [whole(1), whole(2)], 1, true);
  g.seen('a', 'fault', Item, [{ id: 1, name: 'i', parentId: 1 }], 1, true);
  g.seen('b', 'fault', Parent, [whole(1)], 1, true);
  g.forget('a', 'fault', 'Parent');
  t.equal(g.find('a', 'fault', 'Parent', 1, 0), undefined, "a's parents are gone");
  t.equal(g.find('a', 'fault', 'Parent', 2, 0), undefined);
  t.ok(g.find('a', 'fault', 'Item', 1, 0), "a's items stay");
  t.same(g.find('b', 'fault', 'Parent', 1, 0), whole(1), "b's parents stay");
  t.equal(g.size, 2);
  t.same(
    g.drain('a').map((x) => x[0]),
    ['fault\0Item\0number:1'],
    'the forgotten rows are not persisted either',
  );
});

t.test('the LRU cap holds across sessions: the least recently used row goes, a find refreshes', async (t) => {
  const g = new RowGraph(3);
  g.seen('a', 'fault', Parent, [whole(1)], 1, true);
  g.seen('b', 'fault', Parent, [whole(2)], 2, true);
  g.seen('a', 'fault', Parent, [whole(3)], 3, true);
  t.ok(g.find('a', 'fault', 'Parent', 1, 0), 'a/1 used: now the most recent');
  g.seen('c', 'fault', Parent, [whole(4)], 4, true);
  t.equal(g.size, 3, 'never more than max');
  t.equal(g.find('b', 'fault', 'Parent', 2, 0), undefined, 'b/2, the least recently used, is gone');
  t.ok(g.find('a', 'fault', 'Parent', 1, 0), 'a/1 stays (refreshed by the find)');
  t.ok(g.find('a', 'fault', 'Parent', 3, 0));
  t.ok(g.find('c', 'fault', 'Parent', 4, 0));
  g.seen('a', 'fault', Parent, [whole(3)], 5, true);
  g.seen('d', 'fault', Parent, [whole(5), whole(6)], 6, true);
  t.equal(g.size, 3);
  t.same(
    g.items('a').map((x) => x[0]),
    ['fault\0Parent\0number:3'],
    'seen again counts as used: a/3 outlives a/1 and c/4',
  );
  const big = new RowGraph(2);
  big.seen('a', 'fault', Parent, [whole(1), whole(2), whole(3)], 1, true);
  t.same(
    big.items('a').map((x) => x[1]),
    [whole(2), whole(3)],
    'one read of more rows than max keeps the last ones',
  );
});

t.test('drain hands the rows added since the last drain, once; nothing without persistence', async (t) => {
  const g = new RowGraph(100, 0, true);
  g.seen('a', 'fault', Parent, [whole(1), whole(2)], 10, true);
  g.seen('b', 'fault', Parent, [whole(9)], 10, true);
  t.same(g.drain('a'), [
    ['fault\0Parent\0number:1', whole(1), 10, true, 0],
    ['fault\0Parent\0number:2', whole(2), 10, true, 0],
  ]);
  t.same(g.drain('a'), [], 'taken: nothing new');
  g.seen('a', 'fault', Parent, [partial(3)], 11, false);
  g.seen('a', 'fault', Parent, [whole(1)], 12, true);
  t.same(g.drain('a'), [
    ['fault\0Parent\0number:3', partial(3), 11, false, 0],
    ['fault\0Parent\0number:1', whole(1), 12, true, 0],
  ]);
  t.equal(g.drain('b').length, 1, "b's rows are b's own");
  const mem = new RowGraph(100, 0, false);
  mem.seen('a', 'fault', Parent, [whole(1)], 1, true);
  t.same(mem.drain('a'), [], 'without persistence nothing is kept for a drain');
});

t.test('items and load round trip; a loaded row older than the one held does not replace it', async (t) => {
  const a = new RowGraph();
  a.seen('s', 'fault', Parent, [whole(1)], 10, true);
  a.seen('s', 'fault', Parent, [partial(2)], 20, false);
  a.seen('s', 'fault', Item, [{ id: 'x', name: 'i' }], 30, false);
  a.seen('other', 'fault', Parent, [whole(7)], 10, true);
  const items = JSON.parse(JSON.stringify(a.items('s')));
  t.equal(items.length, 3, "only the session's rows");
  const b = new RowGraph();
  b.seen('s', 'fault', Parent, [{ ...whole(1), name: 'newer' }], 50, true);
  b.load('s', items);
  t.same(b.items('s').length, 3);
  t.same(b.find('s', 'fault', 'Parent', 1, 0), { ...whole(1), name: 'newer' }, 'the newer row held wins');
  t.same(b.find('s', 'fault', 'Parent', 2, 20, ['name']), partial(2), 'loaded with its moment');
  t.equal(b.find('s', 'fault', 'Parent', 2, 21, ['name']), undefined);
  t.equal(b.find('s', 'fault', 'Parent', 2, 0), undefined, 'and its kind (a list row is not whole)');
  t.same(b.find('s', 'fault', 'Item', 'x', 0, ['name']), { id: 'x', name: 'i' });
  const c = new RowGraph();
  c.seen('s', 'fault', Parent, [{ ...whole(1), name: 'older' }], 5, true);
  c.load('s', items);
  t.same(c.find('s', 'fault', 'Parent', 1, 0), whole(1), 'a newer loaded row replaces an older one');
  const small = new RowGraph(2);
  small.load('s', items);
  t.equal(small.size, 2, 'load keeps the cap');
});

t.test('ids of different types are different rows', async (t) => {
  const g = new RowGraph();
  g.seen('s', 'fault', Parent, [{ id: 1, name: 'number' }], 1, true);
  g.seen('s', 'fault', Parent, [{ id: '1', name: 'string' }], 1, true);
  g.seen('s', 'fault', Parent, [{ id: true, name: 'boolean' }], 1, true);
  t.equal(g.size, 3);
  t.same(g.find('s', 'fault', 'Parent', 1, 0), { id: 1, name: 'number' });
  t.same(g.find('s', 'fault', 'Parent', '1', 0), { id: '1', name: 'string' });
  t.same(g.find('s', 'fault', 'Parent', true, 0), { id: true, name: 'boolean' });
  t.equal(g.find('s', 'fault', 'Parent', 'true', 0), undefined);
});

t.test('keyable: entities with a get that takes the id alone', async (t) => {
  t.ok(isIdGet(reg.capability('fault', 'getParent')!), 'getParent takes the id alone');
  t.notOk(isIdGet(reg.capability('fault', 'getChild')!), 'getChild takes the parent id too');
  t.notOk(isIdGet(reg.capability('fault', 'updateParent')!), 'not a get');
  t.notOk(isIdGet(reg.capability('fault', 'listParents')!), 'not a get');
  t.ok(keyable(reg, 'fault', 'Parent'));
  t.notOk(keyable(reg, 'fault', 'Child'), 'a scoped get only: not kept');
  t.notOk(keyable(reg, 'fault', 'Item'), 'no get: not kept');
});

t.test("a row is used only at its entity's write count; the count persists with it", async (t) => {
  const g = new RowGraph(100, 0, true);
  g.seen('s', 'fault', Parent, [whole(1)], 100, true, 2);
  t.same(g.find('s', 'fault', 'Parent', 1, 0, undefined, 2), whole(1), 'seen at count 2, asked at 2: found');
  t.equal(g.find('s', 'fault', 'Parent', 1, 0, undefined, 3), undefined, 'a write since (count 3): not used');
  t.equal(g.find('s', 'fault', 'Parent', 1, 0), undefined, 'nor at count 0');
  g.seen('s', 'fault', Parent, [partial(1)], 100, false, 3);
  t.same(
    g.find('s', 'fault', 'Parent', 1, 0, ['name'], 3),
    partial(1),
    'a list row of a newer count replaces a get row',
  );
  t.same(g.drain('s').at(-1)?.[4], 3, 'a drained item carries its count');
  const h = new RowGraph(100, 0, true);
  h.load('s', [...g.items('s'), ['fault\0Parent\0number:2', whole(2), 100, true]]);
  t.same(h.find('s', 'fault', 'Parent', 1, 0, ['name'], 3), partial(1), 'loaded with its count');
  t.same(h.find('s', 'fault', 'Parent', 2, 0, undefined, 0), whole(2), 'an item persisted without one: count 0');
  t.equal(h.find('s', 'fault', 'Parent', 2, 0, undefined, 1), undefined);
});
