/**
 * The runtime's light abort signal (`Cancel`) behaves as an AbortSignal does where the runtime
 * reads one, and `cancelledBy` ties a run to either kind of signal.
 */
import t from 'tap';
import { RunAbort } from '../../runtime/call.js';
import { cancelledBy } from '../../runtime/cancel.js';
import { Cancel, type AbortListener, type CancelSignal } from '../../runtime/signal.js';
import { sleep } from '../../runtime/retry.js';
import { prng } from '../_helpers/prng.js';

/** What happens to a listener of each kind on `make()`'s signal, as a list of lines. */
function behaviour(make: () => { signal: CancelSignal; abort(reason: unknown): void }): string[] {
  const seen: string[] = [];
  const c = make();
  const fn = () => seen.push('fn');
  const obj = { handleEvent: () => seen.push('obj') };
  const removed = () => seen.push('removed');
  seen.push(`aborted before: ${c.signal.aborted}`);
  c.signal.addEventListener('abort', fn, { once: true });
  c.signal.addEventListener('abort', obj, { once: true });
  c.signal.addEventListener('abort', removed, { once: true });
  c.signal.removeEventListener('abort', removed);
  c.abort('first');
  c.abort('second');
  seen.push(`aborted after: ${c.signal.aborted}, reason ${String(c.signal.reason)}`);
  c.signal.addEventListener('abort', () => seen.push('late'));
  return seen;
}

t.test('Cancel answers as an AbortController and its signal do', async (t) => {
  const native = behaviour(() => new AbortController());
  const light = behaviour(() => {
    const c = new Cancel();
    return { signal: c, abort: (r) => c.abort(r) };
  });
  t.same(light, native, 'the same calls, in the same order, the same state');
  t.same(light, ['aborted before: false', 'fn', 'obj', 'aborted after: true, reason first']);
});

t.test('a listener that throws does not stop the others, and the abort rethrows its error', async (t) => {
  const c = new Cancel();
  const calls: string[] = [];
  const boom: AbortListener = () => {
    calls.push('boom');
    throw new Error('listener failed');
  };
  c.addEventListener('abort', boom);
  c.addEventListener('abort', () => calls.push('after'));
  t.throws(() => c.abort('why'), /listener failed/);
  t.same(calls, ['boom', 'after']);
  t.ok(c.aborted);
  t.doesNotThrow(() => c.abort('again'), 'a second abort calls nobody');
});

t.test('listeners are let go: removed ones, and all of them once aborted', async (t) => {
  const c = new Cancel();
  let n = 0;
  const l = () => n++;
  for (let i = 0; i < 1000; i++) {
    const each = () => n++;
    c.addEventListener('abort', each);
    c.removeEventListener('abort', each);
  }
  c.addEventListener('abort', l);
  c.addEventListener('abort', l);
  c.abort(undefined);
  t.equal(n, 1, 'a listener added twice is called once (as EventTarget does)');
});

t.test('a long-lived signal under churn: the same listeners, in the order added, as an AbortSignal', async (t) => {
  // The server's shutdown signal: every run adds a listener and removes it again, a few at a time.
  const run = (signal: CancelSignal, abort: () => void): number[] => {
    const called: number[] = [];
    const r = prng(11);
    const live: Array<() => void> = [];
    for (let i = 0; i < 3000; i++) {
      const each = () => called.push(i);
      signal.addEventListener('abort', each);
      live.push(each);
      // Remove some, oldest first or at random, keeping 0-40 live.
      while (live.length > 40 || (live.length && r() < 0.45)) {
        const at = r() < 0.5 ? 0 : Math.floor(r() * live.length);
        signal.removeEventListener('abort', live.splice(at, 1)[0]!);
      }
    }
    abort();
    return called;
  };
  const c = new Cancel();
  const native = new AbortController();
  const light = run(c, () => c.abort('stop'));
  t.same(
    light,
    run(native.signal, () => native.abort('stop')),
    'the same listeners called, in the same order',
  );
  t.ok(light.length > 0, 'some were still listening');
});

t.test('cancelledBy cancels on either signal, of either kind, and detaches', async (t) => {
  for (const kind of ['AbortSignal', 'Cancel'] as const) {
    const make = () => {
      if (kind === 'Cancel') {
        const c = new Cancel();
        return { signal: c as CancelSignal, abort: () => c.abort('x') };
      }
      const c = new AbortController();
      return { signal: c.signal as CancelSignal, abort: () => c.abort('x') };
    };
    for (const which of ['signal', 'stop'] as const) {
      const outer = make();
      const run = new Cancel();
      cancelledBy(run, { [which]: outer.signal });
      outer.abort();
      t.ok(run.aborted, `${kind} as ${which}: the run is cancelled`);
      t.ok(run.reason instanceof RunAbort && run.reason.code === 'cancelled', 'with a RunAbort("cancelled")');
    }
    const outer = make();
    const run = new Cancel();
    const detach = cancelledBy(run, { signal: outer.signal, stop: outer.signal });
    detach();
    outer.abort();
    t.notOk(run.aborted, `${kind}: a detached run is not cancelled`);
    const done = make();
    done.abort();
    const late = new Cancel();
    cancelledBy(late, { stop: done.signal });
    t.ok(late.aborted, `${kind}: a signal already aborted cancels at once`);
  }
});

t.test("retry's sleep ends early on a Cancel", async (t) => {
  const c = new Cancel();
  const slept = sleep(60_000, c);
  c.abort(new RunAbort('deadline_exceeded'));
  await t.rejects(slept, { code: 'deadline_exceeded' }, 'rejected with the reason');
  const aborted = new Cancel();
  aborted.abort(new Error('before'));
  await t.rejects(sleep(60_000, aborted), /before/);
});
