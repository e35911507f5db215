/** Waiting in tests without wall-clock assertions: a sleep, and a bounded poll. */

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Poll `probe` until it yields a value (bounded: `tries` x `every` ms); throws naming `what`. */
export async function until<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  tries = 400,
  every = 25,
): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    await sleep(every);
  }
  throw new Error(`gave up waiting for ${what}`);
}
