/**
 * The pure parts behind the playground's session work, under node: the debounced check while
 * typing dropping answers about older text,
 * pages appended to a block, and waves saved for a reload and cut back out of the teaching table.
 */
import t from 'tap';
import type { ExecAnswer } from '../../web/src/api/types.js';
import { LiveCheck } from '../../web/src/editor/live-check.js';
import { appendPage, handleOf, loadedBlocks } from '../../web/src/components/pages.js';
import { savedWaves, splitWaves } from '../../web/src/components/waves.js';
import { sleep } from '../_helpers/until.js';

t.test('the check while typing: after a pause, once per text, the newest text only', async (t) => {
  const asked: string[] = [];
  const shown: Array<[string, string | null]> = [];
  const slow = new Set(['a']);
  const check = async (text: string, signal: AbortSignal) => {
    asked.push(text);
    await sleep(slow.has(text) ? 120 : 5);
    if (signal.aborted) throw new Error('aborted');
    return `checked ${text}`;
  };
  const live = new LiveCheck<string>(check, (text, r) => shown.push([text, r]), 30);
  t.ok(live.changed('e'));
  t.ok(live.changed('e1'));
  await sleep(80);
  t.same(asked, ['e1'], 'one check after the pause, of the last text');
  t.same(shown, [['e1', 'checked e1']]);
  t.notOk(live.changed('e1'), 'the same text again: no check');

  live.changed('a'); // slow: still under way when the next text is checked
  await sleep(50);
  live.changed('b');
  await sleep(200);
  t.same(asked.slice(1), ['a', 'b']);
  t.same(shown.slice(1), [['b', 'checked b']], 'the answer about older text is dropped');

  live.changed('c');
  live.settled('c'); // a run showed its diagnostics
  await sleep(60);
  t.equal(asked.length, 3, 'no check of a text a run answered for');
  live.stop();
});

const page = (names: string[], more?: string, total = 5): ExecAnswer => ({
  entity: 'brewery:Brewery',
  count: names.length,
  total,
  ...(more ? { more } : {}),
  rows: names.map((name) => ({ name })),
});

t.test('More appends the next page to its block, once', async (t) => {
  const blocks = loadedBlocks(page(['a', 'b'], 'page(pg1)[..]'));
  t.equal(handleOf(blocks[0]!.more), 'pg1');
  const two = appendPage(blocks, 0, 'pg1', page(['c', 'd'], 'page(pg2)[..]'));
  t.match(two, [{ count: 4, total: 5, pages: 2, more: 'page(pg2)[..]', rows: [{ name: 'a' }, {}, {}, { name: 'd' }] }]);
  t.equal(appendPage(two!, 0, 'pg1', page(['c', 'd'])), undefined, 'the same page twice is not appended twice');
  const three = appendPage(two!, 0, 'pg2', page(['e']));
  t.match(three, [{ count: 5, pages: 3 }]);
  t.notOk('more' in three![0]!, 'the last page: no more');
  t.equal(appendPage(three!, 1, 'pg2', page(['x'])), undefined, 'no such block');
  t.equal(appendPage(two!, 0, 'pg2', { errors: [{ code: 'vendor_error', message: 'x' }] }), undefined, 'no rows');
});

t.test('waves saved by their row counts, cut back out of the teaching table', async (t) => {
  const row = (form: string) => ({ form, meaning: `${form} meaning` });
  const waves = [
    { revision: 1, seeds: ['brewery:Brewery'], rows: [row('e1'), row('m1')] },
    { revision: 1, seeds: ['brewery:Brewery'], rows: [], notice: 'already taught: e1' },
    { revision: 2, seeds: ['helpdesk:Ticket'], rows: [row('e2')] },
  ];
  const saved = savedWaves(waves);
  t.same(saved, [
    { revision: 1, seeds: ['brewery:Brewery'], rows: 2 },
    { revision: 1, seeds: ['brewery:Brewery'], rows: 0, notice: 'already taught: e1' },
    { revision: 2, seeds: ['helpdesk:Ticket'], rows: 1 },
  ]);
  t.same(splitWaves(saved, [row('e1'), row('m1'), row('e2')], 2), waves, 'the same waves again');
  t.same(
    splitWaves(saved, [row('e1'), row('m1'), row('e2'), row('e3')], 3),
    [{ revision: 3, seeds: ['(reopened)'], rows: [row('e1'), row('m1'), row('e2'), row('e3')] }],
    'the session learnt more elsewhere: one wave of all its rows',
  );
});
