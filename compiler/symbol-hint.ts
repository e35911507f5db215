/**
 * Hints for a name that is not a symbol of the session. An agent often writes what it read in the
 * teaching table's meaning column instead of the symbol: an entity by its name (`Beer`, `beers`,
 * `brewery:Beers`) or a capability by its wire name (`createBeer`, `listBreweries`). Those are
 * matched first and answered with the one symbol to write ("did you mean `e2` (brewery:Beer)?");
 * entities of a loaded catalog the session has not exposed are named by their qualified name,
 * which always works. Other names get the nearest symbols.
 */
import { nearest, knownList } from '../common/suggest.js';
import type { Call } from './ast.js';
import { callWith, showable } from './fix-text.js';
import { LIMIT_ARG } from './resolve-options.js';
import type { AnySymbol } from './symbols.js';
import type { ResolveState } from './resolve-state.js';
import { defaultReads } from './symbols.js';
import { WRITE_KINDS } from '../pack/cgs.js';

/** Candidate words and how each is shown: several words may show the same symbol. */
type Candidates = Map<string, string>;

function symbolLabel(s: AnySymbol): string {
  if (s.kind === 'entity') return `\`${s.sym}\` (${s.api}:${s.entity})`;
  if (s.kind === 'capability') return `\`${s.sym}\` (${s.api}:${s.capability})`;
  return `\`${s.sym}\` (${s.entity}.${s.relation})`;
}

/**
 * Whether a capability is left out of hints: for a read-only caller, every one that writes (its
 * plan would be refused); for others, none.
 */
function writeHidden(st: ResolveState): (api: string, capability: string) => boolean {
  if (!st.opts.readsOnly) return () => false;
  const registry = st.opts.registry;
  return (api, capability) => {
    const kind = registry.capability(api, capability)?.kind;
    return kind === undefined || WRITE_KINDS.has(kind);
  };
}

/** The session's symbols a hint may name (a read-only caller's: no capability that writes). */
function shownSymbols(st: ResolveState): AnySymbol[] {
  const all = st.opts.symbols?.all() ?? [];
  if (!st.opts.readsOnly) return all;
  const hidden = writeHidden(st);
  return all.filter((s) => s.kind !== 'capability' || !hidden(s.api, s.capability));
}

/** Words that name something in the session or the loaded catalogs, each with what to write instead. */
function candidates(st: ResolveState, onlyApi?: string): Candidates {
  const out: Candidates = new Map();
  const add = (word: string, show: string) => {
    if (!out.has(word)) out.set(word, show);
  };
  const hidden = writeHidden(st);
  for (const s of shownSymbols(st)) {
    const label = symbolLabel(s);
    if (onlyApi !== undefined && s.api !== onlyApi) continue;
    if (s.kind === 'entity') {
      add(`${s.api}:${s.entity}`, label);
      const reads = defaultReads(st.opts.registry, s.api, s.entity);
      for (const c of [reads.query, reads.get, reads.search]) if (c) add(`${s.api}:${c.name}`, label);
    } else if (s.kind === 'capability') add(`${s.api}:${s.capability}`, label);
  }
  for (const entry of st.opts.registry.list()) {
    const api = entry.entry_id;
    if (onlyApi !== undefined && api !== onlyApi) continue;
    for (const e of entry.cgs.entities) add(`${api}:${e.name}`, `\`${api}:${e.name}\``);
    for (const c of entry.cgs.capabilities) if (!hidden(api, c.name)) add(`${api}:${c.name}`, `\`${api}:${c.name}\``);
  }
  return out;
}

/** Lower case, and without a plural ending: `Beers` and `beer` both give `beer`. */
function norm(word: string): string {
  const w = word.toLowerCase();
  return w.endsWith('ies') ? w.slice(0, -3) + 'y' : w.endsWith('s') && !w.endsWith('ss') ? w.slice(0, -1) : w;
}

/** The part after `api:` (the whole word when it has none). */
const local = (word: string): string => word.slice(word.indexOf(':') + 1);

/**
 * "did you mean X?" for `word` among `cands`: an entity or capability named exactly (in any case,
 * singular or plural) wins alone; else the nearest, at most three distinct suggestions.
 */
function suggest(word: string, cands: Candidates, extra: Iterable<[string, string]> = []): string | undefined {
  const exact = [...cands].filter(([w]) => norm(local(w)) === norm(local(word)));
  const shown = [...new Set(exact.map(([, show]) => show))];
  if (shown.length === 1) return `did you mean ${shown[0]}?`;
  const all = new Map([...extra, ...cands]);
  const qualifiedWord = word.includes(':');
  // An unqualified word is compared with the symbols and the local names (`Beer`, `createBeer`).
  const keys = new Map<string, string>();
  for (const [w, show] of all) keys.set(qualifiedWord ? w : local(w), keys.get(qualifiedWord ? w : local(w)) ?? show);
  const near = [...new Set(nearest(word, keys.keys(), 12).map((k) => keys.get(k)!))].slice(0, 3);
  if (near.length === 1) return `did you mean ${near[0]}?`;
  if (near.length > 1) return `did you mean one of: ${near.join(', ')}?`;
  return undefined;
}

/** The hint for an unqualified name that is neither a binding nor a symbol of the session. */
export function unknownNameHint(st: ResolveState, word: string): string {
  const syms = shownSymbols(st);
  const extra: Array<[string, string]> = [
    ...syms.map((s): [string, string] => [s.sym, symbolLabel(s)]),
    ...[...st.bindings.keys()].map((b): [string, string] => [b, `\`${b}\``]),
  ];
  return (
    suggest(word, candidates(st), extra) ??
    knownList(
      syms.map((s) => s.sym),
      {
        show: (c) => symbolLabel(syms.find((s) => s.sym === c)!),
        known: 'symbols of this session',
        limit: 8,
        none: 'this session has no symbols yet: open a context with api:Entity seeds, or write qualified names such as brewery:Beer',
      },
    )
  );
}

/** The hint for `api:what` when the catalog `api` has no entity or capability `what`. */
export function unknownQualifiedHint(st: ResolveState, api: string, what: string): string {
  // The name of another catalog's entity or capability: the right catalog.
  const elsewhere = [...candidates(st)].filter(([w]) => !w.startsWith(`${api}:`) && norm(local(w)) === norm(what));
  if (elsewhere.length === 1) return `\`${what}\` is in another catalog: did you mean ${elsewhere[0]![1]}?`;
  const cands = candidates(st, api);
  return suggest(`${api}:${what}`, cands) ?? knownList(cands.keys(), { known: 'names', limit: 12 });
}

/**
 * The call an agent most likely meant when it wrote `call` with a wrong head: the first entity
 * of the session whose list or search takes every argument name, e.g. `e1(city="Berlin")` for
 * `p1(city="Berlin")`. Undefined when no entity fits or the call has no named argument.
 */
export function entityCallFor(st: ResolveState, call: Call): string | undefined {
  const names = (call.args ?? []).map((a) => a.name?.text).filter((n) => n !== LIMIT_ARG);
  if (names.length === 0 || names.some((n) => n === undefined)) return undefined;
  for (const s of st.opts.symbols?.all() ?? []) {
    if (s.kind !== 'entity') continue;
    const reads = defaultReads(st.opts.registry, s.api, s.entity);
    const takes = [reads.query, reads.search].some((c) => c && names.every((n) => c.params.some((p) => p.name === n)));
    if (takes) {
      const fix = callWith(st.lines.text, call, [], s.sym);
      return showable(fix) ? fix : undefined;
    }
  }
  return undefined;
}
