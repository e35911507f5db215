/**
 * Test helper for growth bounds without wall-clock thresholds: the median time of a few runs at
 * two sizes, and their ratio. Linear work gives about 4 for sizes n and 4n, quadratic about 16.
 * The heap is collected before each timed run (when the runtime lets us), so garbage left by one
 * run is not charged to the next.
 */
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('typeof gc === "function" ? gc : undefined') as (() => void) | undefined;

/** Median wall time in ms of `runs` calls of `fn` (after one warm-up call). */
export async function medianMs(fn: () => unknown, runs = 5): Promise<number> {
  await fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    gc?.();
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

/**
 * time(big) / time(small), medians of `runs`; small timings are floored at 1 ms so timer noise
 * cannot blow the ratio up. A machine busy with other work can slow one series down: when the
 * ratio is `bound` or more, it is measured again (up to `attempts` times in all) and the lowest
 * ratio counts. Noise does not repeat; quadratic growth does.
 */
export async function growth(small: () => unknown, big: () => unknown, opts: { runs?: number; bound?: number; attempts?: number } = {}): Promise<{ small: number; big: number; ratio: number }> {
  const { runs = 5, bound = 9, attempts = 3 } = opts;
  let best: { small: number; big: number; ratio: number } | undefined;
  for (let i = 0; i < attempts && (!best || best.ratio >= bound); i++) {
    const s = await medianMs(small, runs);
    const b = await medianMs(big, runs);
    const ratio = b / Math.max(s, 1);
    if (!best || ratio < best.ratio) best = { small: s, big: b, ratio };
  }
  return best!;
}
