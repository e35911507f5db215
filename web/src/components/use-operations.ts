/**
 * Background operations of a session (`wait=false`): each followed on its SSE stream
 * (`snapshot`, `progress`, `terminal`), then asked once with `wait(oN)` for its rows and run id.
 * Cancel sends `cancel(oN)`. Streams end when the session view goes away.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Answer } from '../api/client.js';
import { follow } from '../api/sse.js';
import * as svc from '../api/svc.js';
import type { ExecAnswer, OpMeta } from '../api/types.js';

export interface Operation {
  n: string;
  program: string;
  line: string;
  state: OpMeta['s'];
  done?: number;
  total?: number;
  runId?: string;
  /** The `wait(oN)` answer once the operation ended. */
  answer?: Answer<ExecAnswer>;
  streamError?: string;
}

/** Steps done and in all, from a progress line (`~ o1 running: 1/2 steps, ...`). */
export function progressOf(line: string): { done?: number; total?: number } {
  const m = /(\d+)\/(\d+) steps?/.exec(line);
  return m ? { done: Number(m[1]), total: Number(m[2]) } : {};
}

const STATE_OF: Record<string, OpMeta['s']> = { '!': 'succeeded', x: 'cancelled', '?': 'failed' };

export function useOperations(session: svc.SessionRef) {
  const [ops, setOps] = useState<Operation[]>([]);
  const aborts = useRef(new Map<string, AbortController>());

  useEffect(
    () => () => {
      for (const a of aborts.current.values()) a.abort();
      aborts.current.clear();
    },
    [session],
  );

  const patch = (n: string, p: Partial<Operation>) => setOps((all) => all.map((o) => (o.n === n ? { ...o, ...p } : o)));

  const finish = async (n: string) => {
    const a = await svc.runProgram(session, `wait(${n})`);
    const op = a.body._meta?.svc?.op;
    patch(n, {
      answer: a,
      ...(op ? { line: op.l, ...progressOf(op.l), state: op.s, ...(op.r ? { runId: op.r } : {}) } : {}),
    });
  };

  /** Follows a started operation (the 202 answer's `_meta.svc.op`). */
  const track = (op: OpMeta, program: string) => {
    setOps((all) => [
      { n: op.n, program, line: op.l, state: op.s, ...progressOf(op.l) },
      ...all.filter((o) => o.n !== op.n),
    ]);
    const ctl = new AbortController();
    aborts.current.set(op.n, ctl);
    let ended = false;
    follow(
      svc.streamPath(session, op.n),
      (e) => {
        const sign = e.data.trim()[0] ?? '';
        patch(op.n, { line: e.data, ...progressOf(e.data), ...(STATE_OF[sign] ? { state: STATE_OF[sign] } : {}) });
        if (e.event === 'terminal') ended = true;
      },
      ctl.signal,
    )
      .then((status) => {
        if (status >= 400) patch(op.n, { streamError: `the stream answered ${status}` });
        return finish(op.n);
      })
      .catch((e: unknown) => {
        if (!ctl.signal.aborted) patch(op.n, { streamError: String(e) });
        if (!ended && !ctl.signal.aborted) void finish(op.n);
      })
      .finally(() => aborts.current.delete(op.n));
  };

  const cancel = async (n: string) => {
    const a = await svc.runProgram(session, `cancel(${n})`);
    const op = a.body._meta?.svc?.op;
    if (op) patch(n, { line: op.l, ...progressOf(op.l), state: op.s, ...(op.r ? { runId: op.r } : {}), answer: a });
  };

  return { ops, track, cancel };
}
