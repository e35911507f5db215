import t from 'tap';
import { SlotSet } from '../../common/slot-set.js';
import { prng } from '../_helpers/prng.js';

t.test('add, has, delete and size, as a Set does', async (t) => {
  const s = new SlotSet<{ n: number }>();
  const a = { n: 1 };
  const b = { n: 2 };
  const c = { n: 3 };
  s.add(a);
  s.add(b);
  s.add(c);
  s.add(b);
  t.equal(s.size, 3, 'adding a member again changes nothing');
  t.ok(s.delete(a), 'the first member, moved over by the last');
  t.notOk(s.delete(a), 'deleting it again: false');
  t.same(
    s.values().map((m) => m.n),
    [3, 2],
  );
  t.ok(s.has(c) && s.has(b) && !s.has(a));
  t.notOk(s.delete({ n: 3 }), 'an equal object that is not a member');
  t.ok(s.delete(c));
  t.ok(s.delete(b));
  t.equal(s.size, 0);
  s.add(a);
  t.same(s.values(), [a], 'a deleted member can come back');
});

t.test('a member of two sets is tracked in each apart', async (t) => {
  const x = new SlotSet<object>();
  const y = new SlotSet<object>();
  const m = {};
  const other = {};
  x.add(other);
  x.add(m);
  y.add(m);
  t.ok(x.delete(other), 'moves m to slot 0 in x');
  t.ok(y.has(m) && x.has(m));
  t.ok(y.delete(m));
  t.ok(x.has(m), 'still in x');
  t.notOk(y.has(m));
});

t.test('values() is a copy: deleting while going through it is safe', async (t) => {
  const s = new SlotSet<object>();
  const ms = Array.from({ length: 5 }, () => ({}));
  for (const m of ms) s.add(m);
  for (const m of s.values()) s.delete(m);
  t.equal(s.size, 0);
});

t.test('random adds and deletes: the same members as a Set (seeded)', async (t) => {
  for (const seed of [1, 2, 3, 4, 5]) {
    const r = prng(seed);
    const pool = Array.from({ length: 40 }, (_, i) => ({ i }));
    const s = new SlotSet<{ i: number }>();
    const ref = new Set<{ i: number }>();
    let mismatch = '';
    for (let step = 0; step < 5000 && !mismatch; step++) {
      const m = pool[Math.floor(r() * pool.length)]!;
      if (r() < 0.55) {
        s.add(m);
        ref.add(m);
      } else if (s.delete(m) !== ref.delete(m)) mismatch = `delete at step ${step}`;
      if (s.size !== ref.size) mismatch = `size at step ${step}`;
      else if (s.has(m) !== ref.has(m)) mismatch = `has at step ${step}`;
    }
    const got = s
      .values()
      .map((m) => m.i)
      .sort((a, b) => a - b);
    const want = [...ref].map((m) => m.i).sort((a, b) => a - b);
    t.equal(mismatch, '', `seed ${seed}: no mismatch`);
    t.same(got, want, `seed ${seed}: the same members at the end`);
  }
});
