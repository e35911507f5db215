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

/** A hint sentence: "did you mean `x`?", "did you mean one of: ...", or the known names when nothing is close. */
export function suggestHint(word: string, candidates: readonly string[]): string {
  const near = nearest(word, candidates);
  if (near.length === 1) return `did you mean \`${near[0]}\`?`;
  if (near.length > 1) return `did you mean one of: ${near.map((c) => `\`${c}\``).join(', ')}?`;
  if (candidates.length === 0) return 'none is declared';
  const shown = candidates.slice(0, 12).map((c) => `\`${c}\``).join(', ');
  return `known: ${shown}${candidates.length > 12 ? `, ... (${candidates.length} in all)` : ''}`;
}
