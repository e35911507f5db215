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
  const release = () => {
    active--;
    next();
  };
  return <T>(fn: () => Promise<T>) => {
    // A free slot and nobody waiting (a run's single call): start now, no queue entry or wrapper promise.
    if (active < n && queue.length === 0) {
      active++;
      let p: Promise<T>;
      try {
        p = fn();
      } catch (e) {
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- passed on as thrown, as a promise executor would
        p = Promise.reject(e);
      }
      return p.finally(release);
    }
    return new Promise<T>((resolve, reject) => {
      queue.push(() => {
        void fn().then(resolve, reject).finally(release);
      });
      next();
    });
  };
}
