/**
 * A set of objects for a hot path where members come and go all the time (the answers in
 * progress): an array, each member holding its own slot index, removed by moving the last member
 * into its slot. Not a `Set`: under steady adds and deletes V8 rebuilds a Set's hash table every
 * few dozen adds, and the table it leaves keeps pointing at the new one and at the members it held
 * then (our reading of V8's design). Once one such table is in the old generation, every table
 * after it, with the members each held, outlives the young generation and is promoted: on the
 * `hotpath` read, 3.1-3.6 KB promoted per read instead of 0.6, and twice the scavenge time, in
 * most server processes (docs/benchmarks.md, `hotpath`, 2026-11-25, late morning). An array
 * leaves nothing behind that points forward.
 */
export class SlotSet<T extends object> {
  private readonly members: T[] = [];
  /** The property each member keeps its slot in (one symbol per set: a member may be in several). */
  private readonly slot = Symbol('slot');

  get size(): number {
    return this.members.length;
  }

  add(m: T): void {
    if (this.has(m)) return;
    (m as Record<symbol, number | undefined>)[this.slot] = this.members.length;
    this.members.push(m);
  }

  has(m: T): boolean {
    // A member's slot is cleared when it is deleted.
    return (m as Record<symbol, number | undefined>)[this.slot] !== undefined;
  }

  /** Remove `m`; false when it was not a member. */
  delete(m: T): boolean {
    if (!this.has(m)) return false;
    const held = m as Record<symbol, number | undefined>;
    const i = held[this.slot]!;
    const last = this.members.pop()!;
    if (last !== m) {
      this.members[i] = last;
      (last as Record<symbol, number | undefined>)[this.slot] = i;
    }
    held[this.slot] = undefined;
    return true;
  }

  /** The members now (a copy: the set may change while the caller goes through them). */
  values(): T[] {
    return this.members.slice();
  }
}
