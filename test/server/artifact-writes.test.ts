import t from 'tap';
import { MemoryArtifactStore, type ArtifactStore } from '../../runtime/artifacts/index.js';
import { call, codeOf, openSession, runProgram, startStack } from '../_helpers/server.js';

/**
 * A memory store whose writes wait for a gate: a slow backend (a real store cannot be made slow
 * on demand). `fail` makes the waiting writes fail instead.
 */
function gatedStore() {
  const inner = new MemoryArtifactStore({ retentionSecs: 3600, gcIntervalSecs: 3600 });
  let settle!: (e?: Error) => void;
  const gate = new Promise<void>((resolve, reject) => {
    settle = (e) => (e ? reject(e) : resolve());
  });
  gate.catch(() => {});
  let started = 0;
  const store: ArtifactStore = {
    put: async (s) => inner.put(s),
    write: async (id, json) => {
      started++;
      await gate;
      await inner.write(id, json);
    },
    get: (id) => inner.get(id),
    delete: (id) => inner.delete(id),
    gc: (now) => inner.gc(now),
    close: () => inner.close(),
    stats: () => inner.stats(),
  };
  return { store, release: () => settle(), fail: (e: Error) => settle(e), started: () => started };
}

t.test('a clean read is answered before its artifact is written; reading the artifact waits for it', async (t) => {
  const g = gatedStore();
  const stack = await startStack(t, { artifacts: g.store });
  const { path } = await openSession(stack.url, { entry_id: 'brewery' });
  const read = await runProgram(stack.url, path, 'e1(limit=3)[id,name]');
  t.equal(read.status, 200, 'answered while the write waits');
  const runId = read.body._meta.svc.run_id as string;
  t.match(runId, /^pr[0-9a-f]{64}$/);
  t.equal(g.started(), 1, 'the write has started');
  const health = await call(stack.url, '/v1/health');
  t.equal(health.body.artifacts.pending_writes, 1, '/v1/health shows the write in flight');
  let art: Awaited<ReturnType<typeof call>> | undefined;
  const reading = call(stack.url, `${path}/artifacts/${runId}`).then((a) => (art = a));
  await new Promise((r) => setTimeout(r, 50));
  t.equal(art, undefined, 'GET .../artifacts/<id> waits for the write');
  g.release();
  await reading;
  t.equal(art!.status, 200);
  t.same(
    art!.body.steps[0].rows.map((r: { id: string }) => r.id),
    read.body.rows.map((r: { id: string }) => r.id),
    'and answers the stored run',
  );
  const after = await call(stack.url, '/v1/health');
  t.match(after.body.artifacts, { kind: 'memory', count: 1, pending_writes: 0, failed_writes: 0 });
});

t.test(
  'a failed artifact write after the answer is counted in /v1/health; the run then reads as unknown',
  async (t) => {
    const g = gatedStore();
    const stack = await startStack(t, { artifacts: g.store });
    const { path } = await openSession(stack.url, { entry_id: 'brewery' });
    const read = await runProgram(stack.url, path, 'e1(limit=2)[name]');
    t.equal(read.status, 200, 'the read is answered (its rows are its result)');
    t.equal(read.body.warnings, undefined, 'without a warning: the write had not failed yet');
    g.fail(new Error('disk full'));
    const art = await call(stack.url, `${path}/artifacts/${read.body._meta.svc.run_id}`);
    t.equal(art.status, 404);
    t.equal(codeOf(art), 'unknown_run');
    const health = await call(stack.url, '/v1/health');
    t.equal(health.body.artifacts.failed_writes, 1, '/v1/health counts the failed write');
    t.equal(health.body.artifacts.pending_writes, 0);
  },
);
