/**
 * The cross-replica part of the `replicas` benchmark: background operations started on one svc
 * replica and polled on the other. Sessions are opened on the replicas in turn; every session
 * starts OPS_PER_SESSION `wait=false` runs of a short read, in turn on each replica, all at once;
 * each operation is then polled with `wait(oN)` on the replica that did NOT start it (at once,
 * then every POLL_MS; over connections of their own, so a poll does not wait behind the starts)
 * until it ends. JSON answers, so that `_meta.svc.code` =
 * `operation_not_on_replica` (a poll that reached the replica not running it) can be counted.
 */
import type { Pool } from 'undici';

export const OPS_PROGRAM = 'e1(limit=25)';
const ROWS = 25;
const POLL_MS = 50;
/** An operation still running after this long counts as an error (a one-request run takes ms). */
const GIVE_UP_MS = 60_000;

export interface OpsRound {
  sessions: number;
  ops: number;
  /** Opening the sessions (sequential). */
  openMs: number;
  /** The first start to the last operation seen ended. */
  ms: number;
  polls: number;
  /** Polls answered `_meta.svc.code` = `operation_not_on_replica`. */
  notOnReplica: number;
  /** Operations whose first poll found them still running. */
  runningAtFirstPoll: number;
  errors: string[];
}

interface JsonAnswer {
  status: number;
  body: {
    rows?: unknown[];
    text?: string;
    _meta?: { svc?: { code?: string; status?: string; op?: { n?: string; s?: string; l?: string } } };
  };
  raw: string;
}

async function post(pool: Pool, path: string, body: string, type = 'text/plain'): Promise<JsonAnswer> {
  const res = await pool.request({
    method: 'POST',
    path,
    headers: { 'content-type': type, accept: 'application/json' },
    body,
  });
  const raw = await res.body.text();
  let parsed: JsonAnswer['body'] = {};
  try {
    parsed = JSON.parse(raw) as JsonAnswer['body'];
  } catch {
    /* reported by the caller through the status or the missing fields */
  }
  return { status: res.statusCode, body: parsed, raw };
}

async function openSession(pool: Pool): Promise<string> {
  const a = await post(pool, '/execute', JSON.stringify({ entry_id: 'brewery' }), 'application/json');
  const b = a.body as { prompt_hash?: string; session?: string };
  if (a.status !== 201 || !b.prompt_hash || !b.session)
    throw new Error(`POST /execute answered ${a.status}: ${a.raw.slice(0, 200)}`);
  return `/execute/${b.prompt_hash}/${b.session}`;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const brief = (a: JsonAnswer) => a.body._meta?.svc?.op?.l ?? a.body.text?.split('\n')[0] ?? a.raw.slice(0, 160);

/** Start one operation on `starter`, poll it on `poller` to its end; problems go to `r.errors`. */
async function operation(starter: Pool, poller: Pool, session: string, r: OpsRound, tag: string): Promise<void> {
  const fail = (why: string) => void r.errors.push(`${tag}: ${why}`);
  try {
    const start = await post(starter, `${session}?wait=false`, OPS_PROGRAM);
    const handle = start.body._meta?.svc?.op?.n;
    if (start.status !== 202 || !handle)
      return fail(`start answered ${start.status} ${start.body._meta?.svc?.code ?? ''}: ${brief(start)}`);
    const t0 = performance.now();
    for (let first = true; ; first = false) {
      if (!first) await sleep(POLL_MS);
      const a = await post(poller, session, `wait(${handle})`);
      r.polls++;
      const svc = a.body._meta?.svc;
      if (svc?.code === 'operation_not_on_replica') r.notOnReplica++;
      if (a.status < 200 || a.status > 299) return fail(`wait(${handle}) answered ${a.status}: ${brief(a)}`);
      if (svc?.op?.n !== handle) return fail(`wait(${handle}) answered about ${svc?.op?.n}: ${brief(a)}`);
      if (svc.op.s === 'running') {
        if (first) r.runningAtFirstPoll++;
        if (performance.now() - t0 > GIVE_UP_MS) return fail(`${handle} still running after ${GIVE_UP_MS} ms`);
        continue;
      }
      if (svc.op.s !== 'succeeded') return fail(`${handle} ended ${svc.op.s} (${svc.code ?? 'no code'}): ${brief(a)}`);
      if (a.body.rows?.length !== ROWS)
        return fail(`${handle} succeeded with ${a.body.rows?.length ?? 'no'} rows, want ${ROWS}: ${brief(a)}`);
      return;
    }
  } catch (e) {
    fail(`request failed: ${(e as Error).message}`);
  }
}

/**
 * One round on two replicas: `sessions` sessions opened in turn on A and B, then `perSession`
 * operations each, all at once, operation k of session i started on replica (i + k) mod 2 and
 * polled on the other.
 */
export async function crossReplicaOps(
  /** Connections to A and B for opening sessions and starting operations. */
  starts: [Pool, Pool],
  /** Other connections to A and B for the polls (a poll does not queue behind the starts). */
  polls: [Pool, Pool],
  sessions: number,
  perSession: number,
): Promise<OpsRound> {
  const r: OpsRound = {
    sessions,
    ops: sessions * perSession,
    openMs: 0,
    ms: 0,
    polls: 0,
    notOnReplica: 0,
    runningAtFirstPoll: 0,
    errors: [],
  };
  const o0 = performance.now();
  const paths: string[] = [];
  for (let i = 0; i < sessions; i++) paths.push(await openSession(starts[i % 2]!));
  r.openMs = performance.now() - o0;
  const t0 = performance.now();
  await Promise.all(
    paths.flatMap((p, i) =>
      Array.from({ length: perSession }, (_, k) => {
        const s = (i + k) % 2;
        return operation(starts[s]!, polls[1 - s]!, p, r, `session ${i} op ${k} (started on ${'AB'[s]})`);
      }),
    ),
  );
  r.ms = performance.now() - t0;
  return r;
}

/** Distinct error messages (handles and numbers blurred) with their counts, most frequent first. */
export function errorKinds(errors: string[]): string[] {
  const counts = new Map<string, number>();
  for (const e of errors) {
    const k = e.replace(/^session \d+ op \d+ /, '').replace(/\bo\d+\b/g, 'oN');
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${n}× ${k}`);
}
