/**
 * Tasks queued per key: tasks of one key run one after another in arrival order, tasks of different
 * keys run concurrently. The Redis repository queues its updates of one session in this process
 * so they do not race each other's compare-and-set; only other processes' writes still conflict.
 */
export class KeyQueue {
  /** Key -> the promise of its last queued task (removed once the key has nothing queued). */
  private readonly tails = new Map<string, Promise<unknown>>();

  /** Run `task` after every task queued for `key` before it has settled. */
  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const before = this.tails.get(key);
    const mine = before ? before.then(task, task) : task();
    const tail = mine.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return mine;
  }

  /** Resolves once every task queued so far (and any queued meanwhile) has settled. */
  async idle(): Promise<void> {
    while (this.tails.size) await Promise.all(this.tails.values());
  }

  /** Keys with queued or running tasks. */
  get size(): number {
    return this.tails.size;
  }
}
