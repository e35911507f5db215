/**
 * The words discovery compares: lower-cased, split on camelCase and on anything but letters and
 * digits, stop words and one-letter words dropped, each reduced to a singular form (what a row's
 * `matched` shows) and a matching key (a light stemmer applied alike to intents and catalogs, so
 * `releases`/`release`, `branches`/`branch`, `starred`/`stars` and `statuses`/`status` meet).
 */

const STOP = new Set([
  'a',
  'an',
  'the',
  'of',
  'for',
  'and',
  'or',
  'to',
  'in',
  'on',
  'by',
  'with',
  'me',
  'my',
  'all',
  'list',
  'show',
  'find',
  'get',
  'what',
  'which',
  'is',
  'are',
  'who',
  'whom',
  'whose',
  'where',
  'when',
  'how',
  'do',
  'does',
  'can',
  'from',
  'at',
  'it',
  'its',
  'this',
  'that',
]);

/** One word of a text: the singular form shown to people and the key matched on. */
export interface Word {
  shown: string;
  key: string;
}

/** English singular of a lower-case word, good enough for resource names (`branches` -> branch). */
export function singularOf(w: string): string {
  if (w.length <= 3 || /\d$/.test(w)) return w;
  if (w.endsWith('ies') && w.length > 4) return w.slice(0, -3) + 'y';
  if (/(ss|us|is)$/.test(w)) return w;
  if (/(sses|xes|zes|ches|shes|uses)$/.test(w)) return w.slice(0, -2);
  if (w.endsWith('s')) return w.slice(0, -1);
  return w;
}

/** `starr` -> `star`: a doubled final consonant (not l, s or z) undone. */
const undouble = (w: string) => (/([^aeiouylsz])\1$/.test(w) ? w.slice(0, -1) : w);

/**
 * The matching key: the singular without an `-ed`/`-ing` ending (when at least three letters
 * stay) and without a final `e`, so inflections of one word share a key (`created`, `create`,
 * `creating` -> `creat`). Over-reduction only merges words on both sides alike.
 */
export function keyOf(w: string): string {
  let s = singularOf(w);
  if (s.length > 5 && s.endsWith('ed')) s = undouble(s.slice(0, -2));
  else if (s.length > 5 && s.endsWith('ing')) s = undouble(s.slice(0, -3));
  if (s.length > 3 && s.endsWith('e')) s = s.slice(0, -1);
  return s;
}

/** The words of `text`, each once (by key), in order. */
export function wordsOf(text: string): Word[] {
  const out: Word[] = [];
  const seen = new Set<string>();
  for (const w of text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)) {
    if (w.length < 2 || STOP.has(w)) continue;
    const key = keyOf(w);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ shown: singularOf(w), key });
  }
  return out;
}

/** The matching keys of `text`. */
export function keysOf(text: string): Set<string> {
  return new Set(wordsOf(text).map((w) => w.key));
}
