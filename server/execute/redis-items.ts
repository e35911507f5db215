/**
 * The page handles (pgN), plan tokens (pcN), runs and counters of a session in Redis, kept apart
 * from its core text and written as deltas (key layout: redis-scripts.ts). A change runs on the
 * held decoded state in place (redis-cache.ts): `begin` starts noting what it touches, `delta`
 * turns that into the ops of one compare-and-set, `commit` makes them the held version, `undo`
 * puts the held version back (a lost compare-and-set, a change that threw). `replay` applies the
 * journal of writes made elsewhere to a held version, `loaded` decodes a session read in full.
 *
 * An op is three arguments of the write script, and a journal entry is a write's ops joined by
 * newlines (JSON.stringify never writes one): `p`/`k` name JSON (set a page handle / plan token),
 * `p-`/`k-` name '' (delete one), `r` '' JSON (append a run), `rt` n '' (keep the last n runs).
 * Items are compared by their JSON text; run records by reference (a run record is never changed
 * once listed). Page handles and tokens are held in the order of their numbers (pg1, pg2, ...),
 * which is the order they were minted in.
 */
import { decodeCore, encodeCore } from './session-codec.js';
import type { Held, ItemTexts } from './redis-cache.js';
import { TrackedMap } from './redis-tracked.js';
import type { Counter, PageEntry, PlanToken, RunRecord, SessionState } from './state.js';

/** What a change started from: enough to find what it changed, and to undo it. */
export interface Change {
  counters: Record<Counter, number>;
  runs: RunRecord[];
  /** The run records before the change (the array `runs` may be changed in place). */
  before: RunRecord[];
  pages: TrackedMap<PageEntry>;
  tokens: TrackedMap<PlanToken>;
  /** The keys of each map the change noted, once it ended. */
  noted?: { pages: Set<string> | 'all'; tokens: Set<string> | 'all' };
  /** Ends `pending` of the held entry. */
  settle: () => void;
}

/** What a change did, as the write script takes it. */
export interface Delta {
  /** The core's stored text after the change. */
  core: string;
  coreChanged: boolean;
  countersMoved: boolean;
  /** Ops (triples of arguments). */
  ops: string[];
  /** Item texts compared in full (every entry noted, or the map replaced): they replace the held ones. */
  pages?: Map<string, string>;
  tokens?: Map<string, string>;
}

const COUNTERS: Counter[] = ['pc', 'pg', 'o'];

/** The core's stored text: last used lives in its own hash field, so the JSON holds 0. */
export function storedCore(s: SessionState): string {
  return encodeCore({ ...s, last_used: 0 });
}

/** A change of `h` begins: its maps note what they give out, and `h` is pending until settled. */
export function begin(h: Held): Change {
  const s = h.state;
  let settle = () => {};
  h.pending = new Promise<void>((r) => (settle = r));
  const pages = (s.pages = tracked(s.pages));
  const tokens = (s.tokens = tracked(s.tokens));
  pages.track();
  tokens.track();
  return { counters: { ...s.counters }, runs: s.runs, before: s.runs.slice(), pages, tokens, settle };
}

/** What the change did to `h`. */
export function delta(h: Held, c: Change): Delta {
  const s = h.state;
  const core = storedCore(s);
  const noted = notedBy(c);
  const ops: string[] = [];
  const pages = mapOps('p', s.pages, c.pages, noted.pages, h.items.pages, ops);
  const tokens = mapOps('k', s.tokens, c.tokens, noted.tokens, h.items.tokens, ops);
  runOps(c.before, s.runs, ops);
  return {
    core,
    coreChanged: core !== h.text,
    countersMoved: COUNTERS.some((n) => s.counters[n] !== c.counters[n]),
    ops,
    ...(pages ? { pages } : {}),
    ...(tokens ? { tokens } : {}),
  };
}

/** True when the change changed nothing that is stored. */
export function unchanged(d: Delta): boolean {
  return !d.coreChanged && !d.countersMoved && d.ops.length === 0;
}

/** The write of `d` succeeded: it is the held version now. */
export function commit(h: Held, c: Change, d: Delta): void {
  const s = h.state;
  h.version = String(Number(h.version) + 1);
  h.text = d.core;
  const { ops } = d;
  for (let i = 0; i < ops.length; i += 3) {
    const op = ops[i]!;
    const texts =
      op[0] === 'p' ? (d.pages ? undefined : h.items.pages) : op[0] === 'k' && !d.tokens ? h.items.tokens : undefined;
    if (!texts) continue;
    if (op.length === 1) texts.set(ops[i + 1]!, ops[i + 2]!);
    else texts.delete(ops[i + 1]!);
  }
  if (d.pages) h.items.pages = d.pages;
  if (d.tokens) h.items.tokens = d.tokens;
  s.pages = tracked(s.pages);
  s.tokens = tracked(s.tokens);
  end(h, c);
}

/** Put the held version back after a change that is not written (`core`: its text after the change, when known). */
export function undo(h: Held, c: Change, core = storedCore(h.state)): void {
  const s = h.state;
  const noted = notedBy(c);
  undoMap(c.pages, noted.pages, h.items.pages);
  undoMap(c.tokens, noted.tokens, h.items.tokens);
  s.pages = c.pages;
  s.tokens = c.tokens;
  c.runs.splice(0, c.runs.length, ...c.before);
  s.runs = c.runs;
  s.counters = { ...c.counters };
  if (core !== h.text) Object.assign(s, decodeCore(h.text), { last_used: s.last_used });
  end(h, c);
}

/**
 * Bring `h` from version `from` (it holds `from` or a later one of its own writes, before `v`) up
 * to `v`: `entries` are the journal entries of the versions after `from`, `core` the core text when
 * it changed after `from` ('' when not), `counters` those of `v`.
 */
export function replay(h: Held, from: number, v: string, core: string, counters: string[], entries: string[]): void {
  const s = h.state;
  for (const entry of entries.slice(Number(h.version) - from)) {
    const a = entry === '' ? [] : entry.split('\n');
    for (let i = 0; i + 2 < a.length; i += 3) applyOp(s, h.items, a[i]!, a[i + 1]!, a[i + 2]!);
  }
  if (core) {
    Object.assign(s, decodeCore(core), { last_used: s.last_used });
    h.text = core;
  }
  s.counters = countersOf(counters);
  h.version = v;
}

/** A session read in full: its core, counters, page handles and tokens (name, JSON, ...) and runs. */
export function loaded(
  v: string,
  core: string,
  counters: string[],
  pages: string[],
  tokens: string[],
  runs: string[],
): Held {
  const items: ItemTexts = { pages: byNumber(pages), tokens: byNumber(tokens) };
  const state: SessionState = {
    ...decodeCore(core),
    pages: parsed<PageEntry>(items.pages),
    tokens: parsed<PlanToken>(items.tokens),
    runs: runs.map((r) => JSON.parse(r) as RunRecord),
    counters: countersOf(counters),
  };
  return { version: v, text: core, state, items, at: 0, touched: 0 };
}

/** The held form of a session just created at version `v` (it has no items yet); `s` becomes its state. */
export function created(s: SessionState, v: string, core: string): Held {
  s.pages = tracked(s.pages);
  s.tokens = tracked(s.tokens);
  return { version: v, text: core, state: s, items: { pages: new Map(), tokens: new Map() }, at: 0, touched: 0 };
}

/** `m` as a TrackedMap (a map a change replaced becomes one again). */
function tracked<V>(m: Map<string, V>): TrackedMap<V> {
  return m instanceof TrackedMap ? (m as TrackedMap<V>) : new TrackedMap(m);
}

/** The keys each map noted during the change (they stop noting). */
function notedBy(c: Change): NonNullable<Change['noted']> {
  return (c.noted ??= { pages: c.pages.untrack(), tokens: c.tokens.untrack() });
}

/** The change ends (`unchanged`: the held version stands as it is); `h` is no longer pending. */
export function end(h: Held, c: Change): void {
  notedBy(c);
  delete h.pending;
  c.settle();
}

/**
 * Ops of one map (tag `p` or `k`). Returns the item texts after the change when it compared every
 * entry (they replace the held ones), undefined when it compared the noted ones only.
 */
function mapOps<V>(
  tag: string,
  now: Map<string, V>,
  tracked: TrackedMap<V>,
  noted: Set<string> | 'all',
  texts: Map<string, string>,
  ops: string[],
): Map<string, string> | undefined {
  if (noted !== 'all' && now === tracked) {
    for (const k of noted) {
      const v = now.get(k);
      if (v === undefined) {
        if (texts.has(k)) ops.push(`${tag}-`, k, '');
        continue;
      }
      const text = JSON.stringify(v);
      if (text !== texts.get(k)) ops.push(tag, k, text);
    }
    return undefined;
  }
  // Every entry may have changed (or the map was replaced): compare them all.
  const next = new Map<string, string>();
  for (const [k, v] of now) {
    const text = JSON.stringify(v);
    next.set(k, text);
    if (text !== texts.get(k)) ops.push(tag, k, text);
  }
  for (const k of texts.keys()) if (!next.has(k)) ops.push(`${tag}-`, k, '');
  return next;
}

/** Ops of the runs: the appended ones and a trim, or all of them again when they changed otherwise. */
function runOps(before: RunRecord[], after: RunRecord[], ops: string[]): void {
  if (after.length === before.length && after.every((r, i) => r === before[i])) return;
  let cut = after.length ? before.indexOf(after[0]!) : before.length;
  if (cut < 0) cut = before.length;
  const kept = before.length - cut;
  let i = 0;
  while (i < kept && after[i] === before[cut + i]) i++;
  if (i < kept) {
    ops.push('rt', '0', '');
    for (const r of after) ops.push('r', '', JSON.stringify(r));
    return;
  }
  for (const r of after.slice(kept)) ops.push('r', '', JSON.stringify(r));
  if (cut > 0) ops.push('rt', String(after.length), '');
}

function applyOp(s: SessionState, items: ItemTexts, op: string, name: string, text: string): void {
  switch (op) {
    case 'p':
      items.pages.set(name, text);
      s.pages.set(name, JSON.parse(text) as PageEntry);
      break;
    case 'p-':
      items.pages.delete(name);
      s.pages.delete(name);
      break;
    case 'k':
      items.tokens.set(name, text);
      s.tokens.set(name, JSON.parse(text) as PlanToken);
      break;
    case 'k-':
      items.tokens.delete(name);
      s.tokens.delete(name);
      break;
    case 'r':
      s.runs.push(JSON.parse(text) as RunRecord);
      break;
    case 'rt':
      s.runs.splice(0, Math.max(0, s.runs.length - Number(name)));
      break;
  }
}

/** Put back the entries of a map a change noted, in the held order (texts: the held version). */
function undoMap<V>(map: TrackedMap<V>, noted: Set<string> | 'all', texts: Map<string, string>): void {
  if (noted !== 'all' && noted.size === 0) return;
  const entries = [...texts].map(([k, t]): [string, V] => [
    k,
    noted === 'all' || noted.has(k) ? (JSON.parse(t) as V) : map.get(k)!,
  ]);
  map.clear();
  for (const [k, v] of entries) map.set(k, v);
}

/** `[name, JSON, name, JSON, ...]` as a map in the order of the names' numbers. */
function byNumber(flat: string[]): Map<string, string> {
  const pairs: Array<[string, string]> = [];
  for (let i = 0; i + 1 < flat.length; i += 2) pairs.push([flat[i]!, flat[i + 1]!]);
  const n = (k: string) => Number(/\d+$/.exec(k)?.[0] ?? Infinity);
  pairs.sort(([a], [b]) => n(a) - n(b) || (a < b ? -1 : a > b ? 1 : 0));
  return new Map(pairs);
}

function parsed<V>(texts: Map<string, string>): TrackedMap<V> {
  const m = new TrackedMap<V>();
  for (const [k, t] of texts) m.set(k, JSON.parse(t) as V);
  return m;
}

function countersOf(c: string[]): Record<Counter, number> {
  return { pc: Number(c[0]), pg: Number(c[1]), o: Number(c[2]) };
}
