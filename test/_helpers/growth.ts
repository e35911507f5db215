/**
 * Test helper for growth bounds without wall-clock thresholds: the median time of a few runs at
 * two sizes, and their ratio. Linear work gives about 4 for sizes n and 4n, quadratic about 16.
 * No time is compared with a number of ms: a fast machine and a slow one give the same ratio.
 *
 * Time is the CPU time of this process (user + system, all its threads), not wall time: on a
 * machine busy with other processes the wall time of a run swings by a factor of several while
 * its CPU time hardly moves. (What runs in this process counts: for a request to a server in the
 * same process that is the client's and the server's work, and no time spent waiting.)
 * The heap is collected before each timed sample (when the runtime lets us), so garbage left by
 * one run is not charged to the next.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('typeof gc === "function" ? gc : undefined') as (() => void) | undefined;

/**
 * A sample lasts at least this long: a call too fast to time on its own is timed `calls` times in
 * a row. It only sets how precise a sample is; no result is compared with it.
 */
const SAMPLE_MS = 20;

/** CPU time of this process in ms. */
function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** CPU ms of one sample: `calls` calls of `fn` in a row, after a collection. */
async function sample(fn: () => unknown, calls: number): Promise<number> {
  gc?.();
  const t0 = cpuMs();
  for (let i = 0; i < calls; i++) await fn();
  return cpuMs() - t0;
}

/** Calls per sample so that one sample of `fn` lasts at least SAMPLE_MS (doubling; at most 4096). */
async function callsPerSample(fn: () => unknown): Promise<number> {
  let calls = 1;
  while (calls < 4096 && (await sample(fn, calls)) < SAMPLE_MS) calls *= 2;
  return calls;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Median CPU time in ms of one call of `fn`, over `runs` samples (after one warm-up call). */
export async function medianMs(fn: () => unknown, runs = 5): Promise<number> {
  await fn();
  const calls = await callsPerSample(fn);
  const times: number[] = [];
  for (let i = 0; i < runs; i++) times.push((await sample(fn, calls)) / calls);
  return median(times);
}

/**
 * time(big) / time(small) per call, medians of `runs` samples. Both sizes are timed with the same
 * number of calls per sample (enough for `small` to last a few ms, so timer resolution does not
 * decide the ratio), and their samples alternate, so a machine that slows down part way slows
 * both series alike. Other work can still slow one series down: when the ratio is `bound` or more,
 * it is measured again (up to `attempts` times in all) and the lowest ratio counts. Noise does not
 * repeat; quadratic growth does.
 */
export async function growth(
  small: () => unknown,
  big: () => unknown,
  opts: { runs?: number; bound?: number; attempts?: number } = {},
): Promise<{ small: number; big: number; ratio: number }> {
  const { runs = 5, bound = 9, attempts = 3 } = opts;
  await small();
  await big();
  const calls = await callsPerSample(small);
  let best: { small: number; big: number; ratio: number } | undefined;
  for (let i = 0; i < attempts && (!best || best.ratio >= bound); i++) {
    const s: number[] = [];
    const b: number[] = [];
    for (let r = 0; r < runs; r++) {
      s.push((await sample(small, calls)) / calls);
      b.push((await sample(big, calls)) / calls);
    }
    const m = { small: median(s), big: median(b) };
    const ratio = m.big / m.small;
    if (!best || ratio < best.ratio) best = { ...m, ratio };
  }
  return best!;
}
