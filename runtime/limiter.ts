/** A concurrency limiter: at most `n` async tasks in flight, the rest wait in FIFO order. */
export type Limiter = <T>(fn: () => Promise<T>) => Promise<T>;

/** At most `n` tasks at once, FIFO. */
export function limiter(n: number): Limiter {
  let active = 0;
  const queue: Array<() => void> = [];
  const next = () => {
    if (active >= n) return;
    const go = queue.shift();
    if (go) {
      active++;
      go();
    }
  };
  return <T>(fn: () => Promise<T>) =>
    new Promise<T>((resolve, reject) => {
      queue.push(() => {
        void fn()
          .then(resolve, reject)
          .finally(() => {
            active--;
            next();
          });
      });
      next();
    });
}
