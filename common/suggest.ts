/** Levenshtein distance, small and allocation-light; used for "did you mean" hints. */
export function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  if (a.length === 0) return b.length;
  if (b.length === 0) return a.length;
  let prev = new Array<number>(b.length + 1);
  let cur = new Array<number>(b.length + 1);
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
    }
    [prev, cur] = [cur, prev];
  }
  return prev[b.length]!;
}

/** Longest word that is compared by edit distance (longer words are only matched as a part of a candidate). */
export const SUGGEST_MAX_LENGTH = 64;

/**
 * Candidates close to `word` (case-insensitive edit distance within about a third of its length,
 * or containing it), nearest first. Empty when nothing is close. Linear in the candidates' length:
 * the edit distance is computed only for words up to `SUGGEST_MAX_LENGTH` and candidates whose
 * length is within reach.
 */
export function nearest(word: string, candidates: Iterable<string>, max = 3): string[] {
  const w = word.toLowerCase();
  const limit = Math.max(1, Math.ceil(w.length / 3));
  const scored: Array<[string, number]> = [];
  for (const c of candidates) {
    const lc = c.toLowerCase();
    // A candidate holding the word is that many insertions away.
    if (lc.startsWith(w) || (w.length >= 3 && lc.includes(w))) {
      scored.push([c, lc.length - w.length]);
      continue;
    }
    if (w.length > SUGGEST_MAX_LENGTH || Math.abs(lc.length - w.length) > limit) continue;
    const d = editDistance(w, lc);
    if (d <= limit) scored.push([c, d]);
  }
  scored.sort((x, y) => x[1] - y[1] || x[0].localeCompare(y[0]));
  return scored.slice(0, max).map(([c]) => c);
}

/** How a hint writes its candidates. */
export interface SuggestOptions {
  /**
   * How one candidate is written (default: in backticks, `` `x` ``). Decorate it here, e.g.
   * `` (c) => `\`${c}\` (shop:Order)` ``; the search still compares the bare candidate.
   */
  show?: (candidate: string) => string;
  /** Most close candidates named (default 3). */
  max?: number;
}

/** What a hint lists when no candidate is close. */
export interface HintOptions extends SuggestOptions {
  /** Label of the list (default `known`): "known: `a`, `b`". */
  known?: string;
  /** Most candidates listed (default 12); the rest are counted: ", ... (N in all)". */
  limit?: number;
  /** The hint when there is no candidate at all (default "none is declared"). */
  none?: string;
}

const backticked = (c: string): string => `\`${c}\``;

/**
 * The one "did you mean" sentence of svc: "did you mean `x`?" when one candidate is close to
 * `word`, "did you mean one of: `a`, `b`?" (nearest first) when several are, undefined when
 * none is. Candidates are compared bare and written with `show`.
 * @example didYouMean('e9', ['e1', 'e2'], { show: (c) => `\`${c}\` (${label(c)})` }) // did you mean one of: `e1` (brewery:Brewery), `e2` (brewery:Beer)?
 */
export function didYouMean(word: string, candidates: Iterable<string>, opts: SuggestOptions = {}): string | undefined {
  const near = nearest(word, new Set(candidates), opts.max ?? 3);
  const show = opts.show ?? backticked;
  if (near.length === 1) return `did you mean ${show(near[0]!)}?`;
  if (near.length > 1) return `did you mean one of: ${near.map(show).join(', ')}?`;
  return undefined;
}

/** The candidates as a list, for when none is close: "known: `a`, `b`, ... (N in all)", or `none`. */
export function knownList(candidates: Iterable<string>, opts: HintOptions = {}): string {
  const all = [...new Set(candidates)];
  if (all.length === 0) return opts.none ?? 'none is declared';
  const limit = opts.limit ?? 12;
  const show = opts.show ?? backticked;
  const shown = all
    .slice(0, limit)
    .map((c) => show(c))
    .join(', ');
  return `${opts.known ?? 'known'}: ${shown}${all.length > limit ? `, ... (${all.length} in all)` : ''}`;
}

/** A hint sentence: `didYouMean`, or `knownList` when nothing is close. */
export function suggestHint(word: string, candidates: Iterable<string>, opts: HintOptions = {}): string {
  const list = [...candidates];
  return didYouMean(word, list, opts) ?? knownList(list, opts);
}
