/**
 * The page handles (pgN), plan tokens (pcN), runs and counters of a session in Redis, kept apart
 * from its core text and written as deltas (key layout: redis-scripts.ts). A change runs on a
 * draft of the held snapshot (session-draft.ts); `delta` turns what it reached into the ops of one
 * compare-and-set, and `committed` makes the sealed draft the held version once that landed.
 * `replayed` applies the journal of writes made elsewhere to a held version, `loaded` decodes a
 * session read in full. Held versions are never changed: each of these makes a new one.
 *
 * An op is three arguments of the write script, and a journal entry is a write's ops joined by
 * newlines (JSON.stringify never writes one): `p`/`k` name JSON (set a page handle / plan token),
 * `p-`/`k-` name '' (delete one), `r` '' JSON (append a run), `rt` n '' (keep the last n runs).
 * Items are compared by their JSON text; run records by reference (a run record is frozen once
 * listed, and shared by the versions that list it). Page handles and tokens are held in the
 * order of their numbers (pg1, pg2, ...), which is the order they were minted in.
 */
import { decodeCore, encodeCore } from './session-codec.js';
import type { Held, ItemTexts } from './redis-cache.js';
import { SessionDraft, snapshotOf, type Reached, type ReachedParts } from './session-draft.js';
import type { Counter, PageEntry, PlanToken, RunRecord, SessionState } from './state.js';

/** What a change did, as the write script takes it. */
export interface Delta {
  /** The core's stored text after the change. */
  core: string;
  coreChanged: boolean;
  countersMoved: boolean;
  /** Ops (triples of arguments). */
  ops: string[];
  /** The item texts after the change. */
  items: ItemTexts;
}

const COUNTERS: Counter[] = ['pc', 'pg', 'o'];

/** The core's stored text: last used lives in its own hash field, so the JSON holds 0. */
export function storedCore(s: SessionState): string {
  return encodeCore({ ...s, last_used: 0 });
}

/** What turned held version `base` into snapshot `next`, a change that reached `reached` of it. */
export function delta(base: Held, next: SessionState, reached: ReachedParts): Delta {
  const core = storedCore(next);
  const ops: string[] = [];
  const pages = mapOps('p', next.pages, reached.pages, base.items.pages, ops);
  const tokens = mapOps('k', next.tokens, reached.tokens, base.items.tokens, ops);
  runOps(base.state.runs, next.runs, ops);
  return {
    core,
    coreChanged: core !== base.text,
    countersMoved: COUNTERS.some((n) => next.counters[n] !== base.state.counters[n]),
    ops,
    items: { pages, tokens },
  };
}

/** True when the change changed nothing that is stored. */
export function unchanged(d: Delta): boolean {
  return !d.coreChanged && !d.countersMoved && d.ops.length === 0;
}

/** The version after `base` that the write of `d` stored: `next` is its snapshot. */
export function committed(base: Held, next: SessionState, d: Delta): Held {
  return { version: String(Number(base.version) + 1), text: d.core, state: next, items: d.items, at: 0, touched: 0 };
}

/**
 * `h` (version `from`) brought up to `v`: `entries` are the journal entries of the versions after
 * `from`, `core` the core text when it changed after `from` ('' when not), `counters` those of `v`.
 */
export function replayed(h: Held, v: string, core: string, counters: string[], entries: string[]): Held {
  const draft = new SessionDraft(h.state);
  const s = draft.state;
  const pages = new Map(h.items.pages);
  const tokens = new Map(h.items.tokens);
  for (const entry of entries) {
    const a = entry === '' ? [] : entry.split('\n');
    for (let i = 0; i + 2 < a.length; i += 3) applyOp(s, { pages, tokens }, a[i]!, a[i + 1]!, a[i + 2]!);
  }
  if (core) Object.assign(s, decodeCore(core), { last_used: s.last_used });
  s.counters = countersOf(counters);
  const state = draft.seal().snapshot;
  return { version: v, text: core || h.text, state, items: { pages, tokens }, at: 0, touched: 0 };
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
  const items = { pages: byNumber(pages), tokens: byNumber(tokens) };
  const state = snapshotOf({
    ...decodeCore(core),
    pages: parsed<PageEntry>(items.pages),
    tokens: parsed<PlanToken>(items.tokens),
    runs: runs.map((r) => JSON.parse(r) as RunRecord),
    counters: countersOf(counters),
  });
  return { version: v, text: core, state, items, at: 0, touched: 0 };
}

/** The held form of snapshot `s`, a session just created at version `v` (it has no items yet). */
export function created(s: SessionState, v: string, core: string): Held {
  return { version: v, text: core, state: s, items: { pages: new Map(), tokens: new Map() }, at: 0, touched: 0 };
}

/**
 * Ops of one map (tag `p` or `k`), comparing the entries the change reached (every entry when it
 * reached them all) with their held texts. Returns the texts after the change (`texts` itself
 * when nothing changed).
 */
function mapOps<V>(
  tag: string,
  now: ReadonlyMap<string, V>,
  reached: Reached,
  texts: ReadonlyMap<string, string>,
  ops: string[],
): ReadonlyMap<string, string> {
  const start = ops.length;
  if (reached !== 'all') {
    const next = new Map(texts);
    for (const k of reached) {
      const v = now.get(k);
      if (v === undefined) {
        if (next.delete(k)) ops.push(`${tag}-`, k, '');
        continue;
      }
      const text = JSON.stringify(v);
      if (text === texts.get(k)) continue;
      ops.push(tag, k, text);
      next.set(k, text);
    }
    // A reached key set again keeps its place in `next`; a new one is last, as in `now`.
    return ops.length === start ? texts : next;
  }
  const next = new Map<string, string>();
  for (const [k, v] of now) {
    const text = JSON.stringify(v);
    next.set(k, text);
    if (text !== texts.get(k)) ops.push(tag, k, text);
  }
  for (const k of texts.keys()) if (!next.has(k)) ops.push(`${tag}-`, k, '');
  return ops.length === start ? texts : next;
}

/** Ops of the runs: the appended ones and a trim, or all of them again when they changed otherwise. */
function runOps(before: readonly RunRecord[], after: readonly RunRecord[], ops: string[]): void {
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

function applyOp(
  s: SessionState,
  items: { pages: Map<string, string>; tokens: Map<string, string> },
  op: string,
  name: string,
  text: string,
): void {
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

/** `[name, JSON, name, JSON, ...]` as a map in the order of the names' numbers. */
function byNumber(flat: string[]): Map<string, string> {
  const pairs: Array<[string, string]> = [];
  for (let i = 0; i + 1 < flat.length; i += 2) pairs.push([flat[i]!, flat[i + 1]!]);
  const n = (k: string) => Number(/\d+$/.exec(k)?.[0] ?? Infinity);
  pairs.sort(([a], [b]) => n(a) - n(b) || (a < b ? -1 : a > b ? 1 : 0));
  return new Map(pairs);
}

function parsed<V>(texts: ReadonlyMap<string, string>): Map<string, V> {
  const m = new Map<string, V>();
  for (const [k, t] of texts) m.set(k, JSON.parse(t) as V);
  return m;
}

function countersOf(c: string[]): Record<Counter, number> {
  return { pc: Number(c[0]), pg: Number(c[1]), o: Number(c[2]) };
}
