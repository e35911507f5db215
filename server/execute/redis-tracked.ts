/**
 * A Map that notes which of its keys a change may have touched, so the Redis repository writes the
 * page handles and plan tokens a change touched, item by item, instead of the whole session. While
 * tracking, every key reached through `get`, `set` or `delete` is noted (an entry reached by `get`
 * may be changed in place: `e.used = true`, `token.consumed_at = now`); iterating its values or
 * entries (or `clear`) notes every key. `has`, `size` and `keys()` note nothing: they cannot change
 * an entry. Outside a change (`track` not called) it is a plain Map.
 */
export class TrackedMap<V> extends Map<string, V> {
  /** Keys noted since `track`; undefined when not tracking. */
  private noted: Set<string> | undefined;
  /** Every key may have changed (values iterated, or the map cleared). */
  private every = false;

  /** Start noting keys (a change begins). */
  track(): void {
    this.noted = new Set();
    this.every = false;
  }

  /** Stop noting: the keys noted, or 'all' when every key may have changed. */
  untrack(): Set<string> | 'all' {
    const out = this.every ? 'all' : (this.noted ?? new Set<string>());
    this.noted = undefined;
    this.every = false;
    return out;
  }

  override get(key: string): V | undefined {
    this.noted?.add(key);
    return super.get(key);
  }

  override set(key: string, value: V): this {
    this.noted?.add(key);
    return super.set(key, value);
  }

  override delete(key: string): boolean {
    this.noted?.add(key);
    return super.delete(key);
  }

  override clear(): void {
    this.all();
    super.clear();
  }

  override values(): MapIterator<V> {
    this.all();
    return super.values();
  }

  override entries(): MapIterator<[string, V]> {
    this.all();
    return super.entries();
  }

  override [Symbol.iterator](): MapIterator<[string, V]> {
    this.all();
    return super.entries();
  }

  override forEach(fn: (value: V, key: string, map: Map<string, V>) => void, thisArg?: unknown): void {
    this.all();
    super.forEach(fn, thisArg);
  }

  private all(): void {
    if (this.noted) this.every = true;
  }
}
