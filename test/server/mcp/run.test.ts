/**
 * svc_run (SPEC "MCP tools" svc_run rules, Events): the arguments it refuses (each with what to
 * send instead, and nothing spent), the progress it pushes while it awaits a run
 * (`notifications/svc/op` with `line`, `n` and `c` on the accept line; `notifications/progress`
 * when the client sent a progressToken, and only then), and cancellation by the client (the run
 * ends cancelled, the vendor sees no further call). Slow runs are a scriptable fault vendor behind
 * the brewery catalog (`GET /beers`, offset pagination): its pages are slow, or held until the
 * test releases them, so "still running" never depends on timing.
 */
import t, { type Test } from 'tap';
import { call, runProgram, startStack, type Stack } from '../../_helpers/server.js';
import { connectMcp, errorCode, openLogical, svcMeta, textOf, type McpConn } from '../../_helpers/mcp.js';
import { startFaultVendor, type FaultVendor, type Reply } from '../../_helpers/fault-vendor.js';
import { keyOf, rawMcp, rawSession, rowsOf, sc, sleep, until } from './_shared.js';

const BEER = { api: 'brewery', entity: 'Beer' };
const PROGRAM = 'e1(limit=2000)[id]';

function beer(id: number): Record<string, unknown> {
  return { id, breweryId: 'b-1', name: `Beer ${id}`, style: 'IPA', abv: 5, ibu: 30, available: true };
}

/** A vendor of `n` beers whose pages take `delayMs`, or wait for `gate` from the second page on. */
async function slowVendor(t: Test, n: number, delayMs: number, gate?: Promise<void>): Promise<FaultVendor> {
  const all = Array.from({ length: n }, (_, i) => beer(i + 1));
  const v = await startFaultVendor({
    'GET /beers': async (req): Promise<Reply> => {
      const from = Number(req.query.get('_start') ?? 0);
      const size = Number(req.query.get('_limit') ?? 25);
      if (gate && from > 0) await gate;
      return {
        json: all.slice(from, from + size),
        headers: { 'x-total-count': String(all.length) },
        delayMs,
      };
    },
    'POST /beers': { json: beer(999), delayMs },
  });
  t.teardown(() => v.close());
  return v;
}

/** Dry-run PROGRAM (an unbounded list: it needs review) and return its pcN. */
async function dryRun(t: Test, c: McpConn, ref: string, program = PROGRAM): Promise<string> {
  const d = await c.tool('svc', { logical_session_ref: ref, program });
  t.notOk(d.isError, textOf(d));
  const pc = svcMeta(d).run_ref as string;
  t.match(pc, /^pc\d+$/, 'a pcN to run');
  return pc;
}

t.test('svc_run refuses program, wait, cancel, force, execute, plan_commit_ref, page_handle', async (t) => {
  const stack = await startStack(t);
  const c = await connectMcp(t, stack.url);
  const { ref } = await openLogical(c, [BEER], 'refusals');
  const pc = await dryRun(t, c, ref, 'm2(breweryId="b-1", name="Refused Ale", style="IPA", abv=5)');
  const count = async () => ((await (await fetch(`${stack.vendorUrl}/beers`)).json()) as unknown[]).length;
  const before = await count();
  const hints: Record<string, RegExp> = {
    program: /send programs to svc/,
    wait: /awaits/,
    cancel: /cancel the MCP request/,
    force: /pcN/,
    execute: /always executes/,
    plan_commit_ref: /pcN as run_ref/,
    page_handle: /as run_ref/,
  };
  const values: Record<string, unknown> = {
    program: 'e1[name]',
    wait: true,
    cancel: 'o1',
    force: true,
    execute: true,
    plan_commit_ref: pc,
    page_handle: `${ref}_pg1`,
  };
  for (const [key, hint] of Object.entries(hints)) {
    const r = await c.tool('svc_run', { logical_session_ref: ref, run_ref: pc, [key]: values[key] });
    t.equal(r.isError, true, `${key}: isError`);
    t.equal(errorCode(r), 'bad_arguments', `${key}: bad_arguments`);
    const e = (sc(r).errors as Array<{ message: string; hint: string }>)[0]!;
    t.match(e.message, new RegExp(`\`${key}\``), `${key}: the message names it`);
    t.match(e.hint, hint, `${key}: the hint says what to send instead`);
  }
  // Without run_ref at all, a rejected key is still answered with its hint first.
  const alone = await c.tool('svc_run', { logical_session_ref: ref, program: 'e1' });
  t.equal(errorCode(alone), 'bad_arguments');
  t.match(textOf(alone), /send programs to svc/);
  const two = await c.tool('svc_run', { logical_session_ref: ref, run_ref: pc, wait: true, force: true });
  t.equal((sc(two).errors as unknown[]).length, 2, 'every refused key is named');

  t.equal(await count(), before, 'nothing reached the vendor');
  const ok = await c.tool('svc_run', { logical_session_ref: ref, run_ref: pc });
  t.notOk(ok.isError, `the pcN was not spent by the refusals: ${textOf(ok).slice(0, 200)}`);
  t.equal(await count(), before + 1);
});

t.test('svc_run pushes notifications/svc/op and, with a progress token, notifications/progress', async (t) => {
  const v = await slowVendor(t, 350, 400);
  const stack = await startStack(t, { vendorUrl: v.url });
  const c = await connectMcp(t, stack.url);
  const { ref } = await openLogical(c, [BEER], 'progress');
  const dry = await c.tool('svc', { logical_session_ref: ref, program: PROGRAM });
  const pc = svcMeta(dry).run_ref as string;
  const commit = svcMeta(dry).commit_id as string;
  t.equal(v.requests.length, 0, 'the dry-run called nothing');

  const progress: Array<{ progress: number; message?: string; total?: number }> = [];
  const r = await c.tool(
    'svc_run',
    { logical_session_ref: ref, run_ref: pc },
    { onprogress: (p) => progress.push(p as never) },
  );
  t.notOk(r.isError, textOf(r).slice(0, 300));
  t.equal(sc(r).count, 350, 'the whole list');
  t.ok(v.hits('/beers').length >= 4, `the run took ${v.hits('/beers').length} slow pages`);

  const ops = c.notifications.filter((n) => n.method === 'notifications/svc/op').map((n) => n.params!);
  t.ok(ops.length >= 3, `accept, running and terminal lines (${ops.length})`);
  const [first, ...rest] = ops;
  t.match(first!.line, /^\+ o1 started/, 'the first line is the accept line');
  t.equal(first!.n, 'o1', 'n is the operation handle');
  t.equal(first!.c, commit, 'c on the accept line is the commit id of the dry-run');
  for (const o of rest) {
    t.equal(o.n, 'o1', `n on ${o.line}`);
    t.notOk('c' in o, `no c after the accept line: ${o.line}`);
    t.same(Object.keys(o).sort(), ['line', 'n'], 'only line and n');
  }
  t.match(ops.at(-1)!.line, /^! o1 succeeded/, 'the last line is the terminal one');
  t.ok(
    ops.some((o) => /^~ o1 running: .*\d+ rows?/.test(o.line)),
    'running lines in between',
  );
  t.equal(sc(r).status, ops.at(-1)!.line, 'the answer carries the terminal line');

  t.equal(progress.length, ops.length, 'one progress notification per line');
  t.same(
    progress.map((p) => p.message),
    ops.map((o) => o.line),
    'progress messages are the lines',
  );
  t.same(
    progress.map((p) => p.progress),
    progress.map((_, i) => i + 1),
    'progress counts up from 1',
  );
  t.notOk(
    c.notifications.some((n) => n.method === 'notifications/progress'),
    'progress went to the caller, not the fallback',
  );

  // A second run without onprogress: svc/op lines again, no progress notification.
  const before = c.notifications.length;
  const pc2 = await dryRun(t, c, ref);
  const r2 = await c.tool('svc_run', { logical_session_ref: ref, run_ref: pc2 });
  t.notOk(r2.isError);
  const later = c.notifications.slice(before);
  t.ok(later.filter((n) => n.method === 'notifications/svc/op').length >= 2, 'svc/op lines without a token');
  t.match(later.find((n) => n.method === 'notifications/svc/op')!.params!.line, /^\+ o2 started/, 'the next handle');
  t.equal(progress.length, ops.length, 'no progress notification reached the first caller either');
});

/** The JSON-RPC messages of an SSE answer. */
function sseMessages(text: string): Array<Record<string, any>> {
  return text
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => JSON.parse(l.slice(6)) as Record<string, any>);
}

t.test('on the wire: progress only for a request with a progressToken, and the answer comes last', async (t) => {
  const v = await slowVendor(t, 220, 150);
  const stack = await startStack(t, { vendorUrl: v.url });
  const c = await connectMcp(t, stack.url);
  const { ref } = await openLogical(c, [BEER], 'wire');
  const { headers } = await rawSession(stack.url);
  // The raw connection is another transport session: it opens its own ref.
  const open = await rawMcp(
    stack.url,
    JSON.stringify({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'svc_context', arguments: { intent: 'wire', seeds: [BEER] } },
    }),
    headers,
  );
  const wireRef = open.message!.result._meta.svc.logical_session_ref as string;
  t.not(wireRef, ref);
  const runWith = async (id: number, meta?: Record<string, unknown>) => {
    const dry = await rawMcp(
      stack.url,
      JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'svc', arguments: { logical_session_ref: wireRef, program: PROGRAM } },
      }),
      headers,
    );
    const pc = dry.message!.result._meta.svc.run_ref as string;
    const a = await rawMcp(
      stack.url,
      JSON.stringify({
        jsonrpc: '2.0',
        id: id + 1,
        method: 'tools/call',
        params: {
          name: 'svc_run',
          arguments: { logical_session_ref: wireRef, run_ref: pc },
          ...(meta ? { _meta: meta } : {}),
        },
      }),
      headers,
    );
    t.equal(a.status, 200);
    t.match(a.headers.get('content-type'), /text\/event-stream/, 'an SSE answer');
    return sseMessages(a.text);
  };
  const withToken = await runWith(10, { progressToken: 'tok-1' });
  const progress = withToken.filter((m) => m.method === 'notifications/progress');
  const ops = withToken.filter((m) => m.method === 'notifications/svc/op');
  t.ok(ops.length >= 2, 'svc/op lines');
  t.equal(progress.length, ops.length, 'a progress notification per line');
  t.ok(
    progress.every((p) => p.params.progressToken === 'tok-1'),
    'each names the progress token',
  );
  t.equal(withToken.at(-1)!.id, 11, 'the answer is the last message');
  t.notOk(withToken.at(-1)!.result.isError);

  const without = await runWith(20);
  t.equal(without.filter((m) => m.method === 'notifications/progress').length, 0, 'no token, no progress');
  t.ok(without.filter((m) => m.method === 'notifications/svc/op').length >= 2, 'svc/op lines still');
  t.equal(without.at(-1)!.id, 21);
  await c.close();
});

/** A gate the test opens. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((r) => {
    open = r;
  });
  return { wait, open };
}

/** The terminal sign of `o1` polled over HTTP (`wait(o1)` on the execute session). */
async function httpWait(stack: Stack, ref: string, handle: string) {
  const key = await keyOf(stack, ref);
  const a = await runProgram(stack.url, `/execute/${key.prompt_hash}/${key.session}`, `wait(${handle})`, '', {
    accept: 'application/json',
  });
  return { status: a.status, op: (a.body._meta?.svc?.op ?? {}) as Record<string, string>, body: a.body };
}

t.test('client cancellation cancels the run: it ends cancelled and the vendor sees no further call', async (t) => {
  const g = gate();
  const v = await slowVendor(t, 500, 0, g.wait);
  const stack = await startStack(t, { vendorUrl: v.url });
  const c = await connectMcp(t, stack.url);
  const { ref } = await openLogical(c, [BEER], 'cancel');
  const pc = await dryRun(t, c, ref);

  const ac = new AbortController();
  const pending = c.tool('svc_run', { logical_session_ref: ref, run_ref: pc }, { signal: ac.signal });
  const settled = pending.then(
    (r) => ({ ok: true as const, r }),
    (e: unknown) => ({ ok: false as const, e }),
  );
  await until('the second page to be asked for', () => v.hits('/beers').length >= 2);
  const running = await httpWait(stack, ref, 'o1');
  t.equal(running.status, 200);
  t.match(running.op['~'], /^[~=]$/, 'the operation runs');
  t.equal(stack.app.service.background.runningCount, 1, 'one operation runs on the server');

  ac.abort('the user stopped it');
  const out = await settled;
  t.notOk(out.ok, 'the call ends with the abort on the client');

  const ended = await until('o1 to end', async () => {
    const w = await httpWait(stack, ref, 'o1');
    return ['!', 'x', '?'].includes(w.op['~'] ?? '') ? w : undefined;
  });
  t.equal(ended.op['~'], 'x', 'the operation ended cancelled (x)');
  t.equal(ended.body._meta.svc.status, 'cancelled');
  t.match(ended.op.l, /^x o1 cancelled/, 'its terminal line says so');
  await until('no operation to run', () => stack.app.service.background.runningCount === 0);

  const calls = v.hits('/beers').length;
  g.open();
  await sleep(300);
  t.equal(v.hits('/beers').length, calls, 'no vendor call after the cancel');
  t.equal(calls, 2, 'the first page and the held second one only');

  const lines = c.notifications.filter((n) => n.method === 'notifications/svc/op').map((n) => n.params!.line as string);
  t.match(lines[0], /^\+ o1 started/, 'the accept line was pushed');

  // The logical session goes on: a new run works (the gate is open now).
  const again = await c.tool('svc_run', { logical_session_ref: ref, run_ref: await dryRun(t, c, ref) });
  t.notOk(again.isError, textOf(again).slice(0, 200));
  t.equal(sc(again).count, 500);
  t.equal(rowsOf(again).length, 25);
  const health = await call(stack.url, '/v1/health');
  t.equal(health.body.operations.running, 0, 'nothing runs any more');
});

t.test('closing the connection mid-run cancels it too', async (t) => {
  const g = gate();
  const v = await slowVendor(t, 500, 0, g.wait);
  const stack = await startStack(t, { vendorUrl: v.url });
  const c = await connectMcp(t, stack.url);
  const { ref } = await openLogical(c, [BEER], 'close');
  const pc = await dryRun(t, c, ref);
  const pending = c.tool('svc_run', { logical_session_ref: ref, run_ref: pc }).catch((e: unknown) => e);
  await until('the second page to be asked for', () => v.hits('/beers').length >= 2);
  await c.close();
  await pending;
  const ended = await until('o1 to end', async () => {
    const w = await httpWait(stack, ref, 'o1');
    return ['!', 'x', '?'].includes(w.op['~'] ?? '') ? w : undefined;
  });
  t.equal(ended.op['~'], 'x', 'cancelled when its client went away');
  const calls = v.hits('/beers').length;
  g.open();
  await sleep(300);
  t.equal(v.hits('/beers').length, calls, 'no vendor call after it');
});

t.test('at the per-session cap a second svc_run is refused with a hint an MCP client can follow', async (t) => {
  const g = gate();
  const v = await slowVendor(t, 300, 0, g.wait);
  const stack = await startStack(t, { vendorUrl: v.url, limits: { maxRunningOpsPerSession: 1 } });
  const c = await connectMcp(t, stack.url);
  const { ref } = await openLogical(c, [BEER], 'cap');
  const pc1 = await dryRun(t, c, ref);
  const pc2 = await dryRun(t, c, ref);
  const first = c.tool('svc_run', { logical_session_ref: ref, run_ref: pc1 });
  await until('the first run to hold the vendor', () => v.hits('/beers').length >= 2);
  const second = await c.tool('svc_run', { logical_session_ref: ref, run_ref: pc2 });
  t.equal(second.isError, true, 'refused while the first runs');
  t.equal(errorCode(second), 'too_many_operations');
  const hint = (sc(second).errors as Array<{ hint: string }>)[0]!.hint;
  t.notMatch(hint, /wait\(o\d+\)|cancel\(o\d+\)/, `no wait(oN)/cancel(oN), which MCP refuses: ${hint}`);
  t.match(hint, /svc_run/, 'the hint speaks of svc_run');
  g.open();
  const done = await first;
  t.notOk(done.isError, 'the first run ends');
  const later = await c.tool('svc_run', { logical_session_ref: ref, run_ref: pc2 });
  t.notOk(later.isError, `the refused pcN was not spent: ${textOf(later).slice(0, 200)}`);
  t.equal(sc(later).count, 300);
});

t.test('cancelling a fused clean read stops its vendor calls', async (t) => {
  const g = gate();
  const v = await slowVendor(t, 300, 0, g.wait);
  const stack = await startStack(t, { vendorUrl: v.url });
  const c = await connectMcp(t, stack.url);
  const { ref } = await openLogical(c, [BEER], 'cancel read');
  const ac = new AbortController();
  // limit=300 is a clean read (no review): svc runs it at once, page after page.
  const pending = c.tool('svc', { logical_session_ref: ref, program: 'e1(limit=300)[id]' }, { signal: ac.signal }).then(
    () => 'answered',
    () => 'aborted',
  );
  await until('the second page to be asked for', () => v.hits('/beers').length >= 2);
  ac.abort();
  t.equal(await pending, 'aborted');
  const calls = v.hits('/beers').length;
  await sleep(100);
  g.open();
  await sleep(300);
  t.equal(v.hits('/beers').length, calls, 'no vendor call after the cancel');
  const key = await keyOf(stack, ref);
  const runs = await call(stack.url, `/execute/${key.prompt_hash}/${key.session}/runs`);
  t.equal(runs.status, 200);
  t.same(
    (runs.body.runs as Array<{ status: string }>).map((r) => r.status),
    ['cancelled'],
    'the run was stored as cancelled',
  );
});
