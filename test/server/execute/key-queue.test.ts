/** The per-key task queue: one key's tasks run one at a time in order, other keys' run alongside. */
import t from 'tap';
import { KeyQueue } from '../../../server/execute/key-queue.js';
import { sleep } from '../../_helpers/until.js';

t.test('tasks of one key run one after another, in order; other keys do not wait', async (t) => {
  const q = new KeyQueue();
  const log: string[] = [];
  const task = (name: string, ms: number) => async () => {
    log.push(`${name}+`);
    await sleep(ms);
    log.push(`${name}-`);
    return name;
  };
  const all = Promise.all([q.run('a', task('a1', 20)), q.run('a', task('a2', 1)), q.run('b', task('b1', 5))]);
  t.equal(q.size, 2, 'two keys busy');
  t.same(await all, ['a1', 'a2', 'b1'], 'each caller gets its own result');
  t.same(log, ['a1+', 'b1+', 'b1-', 'a1-', 'a2+', 'a2-'], 'a2 waits for a1, b1 does not');
  await sleep(0);
  t.equal(q.size, 0, 'nothing is kept once a key is idle');
});

t.test('a failed task rejects its caller only; the next one still runs', async (t) => {
  const q = new KeyQueue();
  const failed = q.run('a', async () => {
    throw new Error('boom');
  });
  const next = q.run('a', async () => 'ran');
  await t.rejects(failed, { message: 'boom' });
  t.equal(await next, 'ran');
});
