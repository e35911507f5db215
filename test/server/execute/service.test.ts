/**
 * The execute core used without any surface, as MCP and the terminal will use it: typed outcomes
 * with a kind and no protocol status, an awaited run that reports progress and stops on its
 * signal, operations followed through `watch`, and hints that speak in program forms.
 */
import t from 'tap';
import { join } from 'node:path';
import { startDemoVendor } from '../../../cli/demo-vendor.js';
import { SvcFailure } from '../../../common/errors.js';
import { loadCatalogDir } from '../../../pack/load.js';
import type { ProgressEvent } from '../../../runtime/progress.js';
import { MemoryArtifactStore } from '../../../runtime/artifacts/index.js';
import { MemorySessionRepository } from '../../../server/execute/memory-repository.js';
import type { OpEvent } from '../../../server/execute/operations.js';
import { ExecuteService } from '../../../server/execute/service.js';
import { SESSION_HOLDS } from '../../../server/execute/state.js';

const vendor = await startDemoVendor();
t.teardown(() => vendor.close());
const { registry } = await loadCatalogDir(join(import.meta.dirname, '..', '..', '..', 'fixtures', 'packed'), {
  backendOverrides: { brewery: vendor.url, helpdesk: vendor.url },
});
const artifacts = new MemoryArtifactStore({ retentionSecs: 60, gcIntervalSecs: 60 });
t.teardown(() => artifacts.close());
const sessions = new MemorySessionRepository();
const service = new ExecuteService({
  registry: () => registry,
  sessions,
  artifacts,
  runtime: { progressIntervalMs: 0 },
});
t.teardown(() => service.cancelAll(100));

async function session() {
  const opened = await service.open({ entry_id: 'brewery', seeds: ['Brewery', 'Beer'] }, 'acme');
  t.equal(opened.kind, 'created');
  t.notOk('status' in opened, 'an outcome has no protocol status');
  return (await service.find({ prompt_hash: opened.extra.prompt_hash, session: opened.extra.session }, 'acme')).session;
}

const run = { mode: 'live' as const, wait: true, force: false };

t.test('an awaited run reports its progress to the caller', async (t) => {
  const s = await session();
  const events: ProgressEvent[] = [];
  const o = await service.program(s, {
    ...run,
    program: 'b = e1(country="DE")[id]\nb.beers[name]',
    onProgress: (e) => events.push(e),
  });
  t.equal(o.kind, 'result');
  t.same(o.errors, []);
  t.ok(o.results[0]!.rows.length > 0, 'rows');
  t.equal(events[0]?.kind, 'start', 'a start event first');
  t.equal(events[events.length - 1]?.kind, 'end', 'an end event last');
  t.ok(
    events.some((e) => e.kind === 'step' && e.phase === 'done'),
    'step events between',
  );
});

t.test('an awaited run stops when its signal aborts', async (t) => {
  const s = await session();
  const ac = new AbortController();
  ac.abort();
  const o = await service.program(s, { ...run, program: 'e1[name]', signal: ac.signal });
  t.equal(o.meta.status, 'cancelled');
  t.equal(o.errors[0]?.code, 'cancelled');
});

t.test('operations are followed through watch; wait and cancel are reports', async (t) => {
  const s = await session();
  const started = await service.program(s, { ...run, wait: false, program: 'e2(limit=50)[name]' });
  t.equal(started.kind, 'started');
  const h = (started.meta.op as { n: string }).n;
  const w = await service.watch(s, h);
  const seen: OpEvent[] = [];
  if (!w.terminal)
    await new Promise<void>((resolve) => {
      w.subscribe((e) => {
        seen.push(e);
        if (e.kind === 'terminal') resolve();
      });
    });
  const end = await service.program(s, { ...run, program: `wait(${h})` });
  t.equal(end.kind, 'report', 'wait answers a report');
  t.equal((end.meta.op as { '~': string })['~'], '!');
  if (!w.terminal)
    t.match(
      seen[seen.length - 1],
      { kind: 'terminal', line: new RegExp(`^! ${h} succeeded`) },
      'the subscriber got the terminal line',
    );
});

t.test('hints speak in program forms, never routes or query parameters', async (t) => {
  const s = await session();
  const write = 'm1(name="Core Brewing", city="Ghent", country="BE")';
  const refused = await service.program(s, { ...run, program: write }).catch((e: unknown) => e);
  t.ok(refused instanceof SvcFailure);
  const hint = (refused as SvcFailure).errors[0]!.hint!;
  t.equal((refused as SvcFailure).errors[0]!.code, 'review_required');
  t.match(hint, /dry-run it, then run the same program with the pcN/);
  t.notMatch(hint, /mode=|plan_commit_ref|POST|\/execute/);
  const other = await service
    .find({ prompt_hash: s.prompt_hash, session: s.session }, 'globex')
    .catch((e: unknown) => e);
  t.equal((other as SvcFailure).errors[0]!.code, 'forbidden');
  t.notMatch((other as SvcFailure).errors[0]!.hint!, /POST|\/execute/);
});

t.test('a session lists its last runs, the oldest dropped first past the cap', async (t) => {
  const s = await session();
  const ids: string[] = [];
  for (let i = 0; i < SESSION_HOLDS.maxRuns + 3; i++) {
    const o = await service.program(s, { ...run, program: 'e1[id]' });
    t.same(o.errors, [], `run ${i}`);
    ids.push(String(o.meta.run_id));
  }
  const runs = (await service.find(s, 'acme')).session.runs;
  t.equal(runs.length, SESSION_HOLDS.maxRuns, 'as many as the session holds');
  t.same(
    runs.map((r) => r.run_id),
    ids.slice(3),
    'the newest, in the order they ran',
  );
});
