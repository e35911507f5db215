/**
 * mulberry32: a small seeded pseudo-random generator for fuzz and property tests, so every run
 * sees the same inputs and a failure names a seed that reproduces it.
 * @example const r = prng(7); r(); // a number in [0, 1)
 */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}
