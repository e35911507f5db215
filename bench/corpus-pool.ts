/**
 * A small pool of `import-corpus-worker.js` child processes: each takes one document at a time,
 * with a time limit (`timeoutMs` for every started 10 MiB of the document: Microsoft Graph's 45 MiB
 * gets five times a small document's) and a heap cap (`--max-old-space-size`). A worker over its time is killed and
 * one that dies (out of memory, say) is replaced; either way its document is a failure with the
 * reason (`timeout`, `crash`) and the pool goes on with the next document.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { DocAnswer, DocJob, DocOutcome } from './import-corpus-worker.js';

export interface PoolOptions {
  workers: number;
  /** The time limit of a document, per started 10 MiB of it. */
  timeoutMs: number;
  /** The heap cap of each worker, MiB. */
  memoryMb: number;
}

interface Slot {
  child: ChildProcess;
  /** Settles when the worker has loaded its modules (its `ready` message) or has died. */
  ready: Promise<void>;
  /** The last lines the worker wrote to stderr (a crash's reason). */
  stderr: string;
}

const TAIL = 2000;

function spawn(memoryMb: number): Slot {
  const child = fork(join(import.meta.dirname, 'import-corpus-worker.js'), [], {
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    execArgv: [`--max-old-space-size=${memoryMb}`],
  });
  const ready = new Promise<void>((resolve) => {
    const settle = () => {
      child.off('message', onReady);
      resolve();
    };
    const onReady = (m: { type?: string }) => m.type === 'ready' && settle();
    child.on('message', onReady);
    child.once('exit', settle);
  });
  const slot: Slot = { child, ready, stderr: '' };
  // A send to a worker that just died fails; its exit is what runJob reports.
  child.on('error', () => {});
  child.stderr!.on('data', (b: Buffer) => (slot.stderr = (slot.stderr + b.toString()).slice(-TAIL)));
  return slot;
}

/** The last meaningful line of a dead worker's stderr (V8 says `heap out of memory`). */
function crashLine(slot: Slot, code: number | null, signal: string | null): string {
  const lines = slot.stderr.split('\n').filter((l) => l.trim() && !/^\s+at |^<--- |^\s*\d+: 0x/.test(l));
  const oom = lines.find((l) => /out of memory/i.test(l));
  const why = oom ?? lines[lines.length - 1] ?? '';
  return `the worker died (${signal ?? `exit ${code}`})${why ? `: ${why.trim().slice(0, 200)}` : ''}`;
}

/**
 * Run one job in `slot`: its outcome, or a failure when it times out or the worker dies. The time
 * limit starts once the worker is ready (its start-up is not the document's).
 */
async function runJob(slot: Slot, job: DocJob, timeoutMs: number): Promise<{ outcome: DocOutcome; dead: boolean }> {
  const times = { read: 0, import: 0, pack: 0 };
  await slot.ready;
  if (slot.child.exitCode !== null || slot.child.signalCode !== null) {
    const message = crashLine(slot, slot.child.exitCode, slot.child.signalCode);
    return { outcome: { ok: false, code: 'crash', message, times, kept: [], skipped: [] }, dead: true };
  }
  return new Promise((resolve) => {
    const started = Date.now();
    const done = (outcome: DocOutcome, dead: boolean) => {
      clearTimeout(timer);
      slot.child.off('message', onMessage);
      slot.child.off('exit', onExit);
      resolve({ outcome, dead });
    };
    const onMessage = (m: DocAnswer) => {
      if (m.type === 'result' && m.id === job.id) done(m.outcome, false);
    };
    const onExit = (code: number | null, signal: string | null) => {
      const ms = Date.now() - started;
      done(
        {
          ok: false,
          code: 'crash',
          message: crashLine(slot, code, signal),
          times: { ...times, read: ms },
          kept: [],
          skipped: [],
        },
        true,
      );
    };
    const timer = setTimeout(() => {
      slot.child.off('exit', onExit);
      slot.child.kill('SIGKILL');
      const message = `no answer within ${timeoutMs / 1000} s (the worker was killed)`;
      done({ ok: false, code: 'timeout', message, times: { ...times, read: timeoutMs }, kept: [], skipped: [] }, true);
    }, timeoutMs);
    slot.child.on('message', onMessage);
    slot.child.once('exit', onExit);
    slot.stderr = '';
    slot.child.send(job);
  });
}

const TEN_MIB = 10 * 1024 * 1024;

/** `perTenMib` for every started 10 MiB of `file` (at least once). */
export function timeLimit(file: string, perTenMib: number): number {
  return perTenMib * Math.max(1, Math.ceil(statSync(file).size / TEN_MIB));
}

/**
 * Every job through `opts.workers` workers, in order of `jobs` as workers free up; `each` is
 * called with every outcome as it arrives. A timed-out or crashed document's `times.read` holds
 * the time it was given.
 */
export async function runPool(
  jobs: DocJob[],
  opts: PoolOptions,
  each: (job: DocJob, outcome: DocOutcome) => void,
): Promise<void> {
  let next = 0;
  const lane = async () => {
    let slot = spawn(opts.memoryMb);
    try {
      while (next < jobs.length) {
        const job = jobs[next++]!;
        const { outcome, dead } = await runJob(slot, job, timeLimit(job.file, opts.timeoutMs));
        each(job, outcome);
        if (dead) slot = spawn(opts.memoryMb);
      }
    } finally {
      slot.child.kill('SIGKILL');
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, opts.workers) }, lane));
}
