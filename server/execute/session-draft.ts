/**
 * Copy-on-write session state, shared by both repositories. A stored version of a session is a
 * snapshot nobody changes: `get` hands it out, and `update` runs its change on a draft
 * (`SessionDraft`), which becomes the next snapshot only once the change returned (and, in a shared
 * store, once its compare-and-set landed). So a change that throws leaves the session as it was,
 * and a request holding a snapshot never sees another request's change half done.
 *
 * A draft copies what is cheap to copy at once (the runs and logical refs lists, the counters, the
 * write counts) and the rest when the change first reaches it: an entry of the pins, page handles,
 * plan tokens or operations is cloned on its first `get` (every entry on iteration), the symbol
 * table on the first read of `symbols`. The page handle and plan token maps tell which keys the
 * change reached, so a shared store compares and writes only those (redis-items.ts). A sealed
 * snapshot is read-only: its object, lists and counters are frozen, its maps refuse `set`,
 * `delete` and `clear`, its symbol table `expose`.
 */
import type { SymbolTable } from '../../compiler/symbols.js';
import type { OpDescriptor, PageEntry, PlanToken, SessionState } from './state.js';

/** Keys of a map a change reached (`get`, `set`, `delete`), or 'all' (it iterated or cleared the map). */
export type Reached = Set<string> | 'all';

/**
 * What a change reached of the page handles and plan tokens of its draft: a shared store, which
 * keeps them item by item, compares (and writes) only those.
 */
export interface ReachedParts {
  pages: Reached;
  tokens: Reached;
}

const READ_ONLY = 'a session snapshot is read-only: change it through SessionRepository.update';

/**
 * A Map that, in a draft, clones an entry of its base the first time the change reaches it, and
 * notes the keys reached; once sealed, a read-only map.
 */
export class DraftMap<V> extends Map<string, V> {
  /** Keys whose value is this map's own (cloned or set): the change reached them. */
  private readonly own = new Set<string>();
  private every = false;
  private sealed = false;

  constructor(
    base: ReadonlyMap<string, V>,
    private readonly copy: (v: V) => V,
  ) {
    super();
    for (const [k, v] of base) super.set(k, v);
  }

  override get(key: string): V | undefined {
    const v = super.get(key);
    if (this.sealed || v === undefined || this.own.has(key)) return v;
    const mine = this.copy(v);
    super.set(key, mine);
    this.own.add(key);
    return mine;
  }

  override set(key: string, value: V): this {
    if (this.sealed) throw new TypeError(READ_ONLY);
    this.own.add(key);
    return super.set(key, value);
  }

  override delete(key: string): boolean {
    if (this.sealed) throw new TypeError(READ_ONLY);
    this.own.add(key);
    return super.delete(key);
  }

  override clear(): void {
    if (this.sealed) throw new TypeError(READ_ONLY);
    this.every = true;
    super.clear();
  }

  override values(): MapIterator<V> {
    this.cloneAll();
    return super.values();
  }

  override entries(): MapIterator<[string, V]> {
    this.cloneAll();
    return super.entries();
  }

  override [Symbol.iterator](): MapIterator<[string, V]> {
    this.cloneAll();
    return super.entries();
  }

  override forEach(fn: (value: V, key: string, map: Map<string, V>) => void, thisArg?: unknown): void {
    this.cloneAll();
    super.forEach(fn, thisArg);
  }

  /** Make it read-only; returns the keys the change reached. */
  seal(): Reached {
    this.sealed = true;
    return this.every ? 'all' : this.own;
  }

  /** In a draft, before its entries are handed out all at once: each becomes this map's own. */
  private cloneAll(): void {
    if (this.sealed || this.every) return;
    this.every = true;
    for (const [k, v] of super.entries()) if (!this.own.has(k)) super.set(k, this.copy(v));
  }
}

const same = <V>(v: V) => v;
const flat = <V extends object>(v: V): V => ({ ...v });
const deep = <V>(v: V): V => structuredClone(v);

/** A map of a draft over `base` (a sealed map of a snapshot, or any map of a state sealed the first time). */
const draftMap = <V>(base: Map<string, V>, copy: (v: V) => V) => new DraftMap(base, copy);

/**
 * A change's working copy of a snapshot. `state` is what the change is given; `seal` turns it into
 * the next snapshot (and tells what the change reached). Never seal a draft twice.
 */
export class SessionDraft {
  readonly state: SessionState;
  private readonly maps: {
    pins: DraftMap<string>;
    pages: DraftMap<PageEntry>;
    tokens: DraftMap<PlanToken>;
    ops: DraftMap<OpDescriptor>;
  };
  private symbols: SymbolTable | undefined;

  constructor(readonly base: SessionState) {
    const maps = {
      pins: draftMap(base.pins, same),
      // A page entry holds nested state (values, cursor, buffered rows); a token is flat.
      pages: draftMap(base.pages, deep),
      tokens: draftMap(base.tokens, flat),
      ops: draftMap(base.ops, deep),
    };
    this.maps = maps;
    const state: SessionState = {
      ...base,
      ...maps,
      runs: base.runs.slice(),
      logical: base.logical.slice(),
      counters: { ...base.counters },
      entity_writes: { ...base.entity_writes },
    };
    // The symbol table is cloned only when the change reads it (most changes never do).
    Object.defineProperty(state, 'symbols', {
      get: () => (this.symbols ??= base.symbols.clone()),
      set: (v: SymbolTable) => (this.symbols = v),
      enumerable: true,
      configurable: true,
    });
    this.state = state;
  }

  /** The draft as the next snapshot, read-only from now on, and what the change reached. */
  seal(): { snapshot: SessionState; reached: ReachedParts } {
    const s = this.state;
    const symbols = this.symbols ?? this.base.symbols;
    Object.defineProperty(s, 'symbols', { value: symbols.freeze(), enumerable: true, writable: false });
    const sealMap = <V>(name: keyof SessionDraft['maps'], copy: (v: V) => V): Reached => {
      const m = s[name] as unknown as Map<string, V>;
      if (m === (this.maps[name] as unknown)) return (m as DraftMap<V>).seal();
      // The change put another map in its place: every entry may have changed.
      const own = draftMap(m, copy);
      (s as unknown as Record<string, unknown>)[name] = own;
      own.seal();
      return 'all';
    };
    sealMap<string>('pins', same);
    sealMap<OpDescriptor>('ops', deep);
    const reached: ReachedParts = {
      pages: sealMap<PageEntry>('pages', deep),
      tokens: sealMap<PlanToken>('tokens', flat),
    };
    for (const r of s.runs) Object.freeze(r);
    Object.freeze(s.runs);
    Object.freeze(s.logical);
    Object.freeze(s.counters);
    Object.freeze(s.entity_writes);
    return { snapshot: Object.freeze(s), reached };
  }
}

/** `s` (a state built by hand: a new session, one decoded from a store) as a read-only snapshot. */
export function snapshotOf(s: SessionState): SessionState {
  return new SessionDraft(s).seal().snapshot;
}

/** The snapshot `s` last used at `now`: a new snapshot sharing everything else (`s` stays as it was). */
export function usedAt(s: SessionState, now: number): SessionState {
  if (s.last_used === now) return s;
  return Object.freeze({ ...s, last_used: now });
}
