/**
 * "Did you mean" fixes of a compile error, as edits of the program text: the suggestions of the
 * hint (`` did you mean `city`? ``, `` did you mean one of: `e1` (...), `e2` (...)? ``,
 * `did you mean status="closed"?`) and the token at the error's line:col that each replaces. Pure.
 */
import { PATTERNS, QUALIFIED } from './tokens.js';

/** One clickable fix: replace `from..to` of the text with `insert`. */
export interface Fix {
  label: string;
  from: number;
  to: number;
  insert: string;
}

/** The suggestions of a hint, nearest first; none when the hint suggests nothing. */
export function suggestions(hint: string): string[] {
  const m = /did you mean (?:one of: )?(.*?)\?(?:\s|$)/.exec(hint);
  if (!m) return [];
  const quoted = [...m[1]!.matchAll(/`([^`]+)`/g)].map((x) => x[1]!);
  if (quoted.length) return quoted;
  const bare = m[1]!.trim();
  return bare && !bare.includes(' ') ? [bare] : [];
}

const at = (re: RegExp) => new RegExp('^(?:' + re.source + ')');
const QUALIFIED_AT = at(QUALIFIED);
const NAME_AT = at(PATTERNS.Identifier);
const STRING_AT = at(PATTERNS.StringLit);
const NUMBER_AT = at(PATTERNS.NumberLit);

/** Offset range of the token starting at `offset` (a qualified name, name, string or number; else one character). */
export function tokenRange(text: string, offset: number): { from: number; to: number } {
  const rest = text.slice(offset);
  for (const re of [QUALIFIED_AT, NAME_AT, STRING_AT, NUMBER_AT]) {
    const m = re.exec(rest);
    if (m) return { from: offset, to: offset + m[0].length };
  }
  return { from: offset, to: Math.min(text.length, offset + 1) };
}

/** Offset of 1-based `line`:`col` in `text` (clamped to the text). */
export function offsetOf(text: string, line: number, col: number): number {
  let off = 0;
  for (let l = 1; l < line; l++) {
    const nl = text.indexOf('\n', off);
    if (nl < 0) return text.length;
    off = nl + 1;
  }
  return Math.min(text.length, off + Math.max(0, col - 1));
}

/**
 * The fixes of one error: each suggestion replaces the token at line:col. A suggestion written
 * `name=value` replaces only the value when the error points at a value (an enum value, say).
 */
export function fixesOf(text: string, err: { hint?: string; line?: number; col?: number }): Fix[] {
  if (!err.hint || err.line === undefined || err.col === undefined) return [];
  const range = tokenRange(text, offsetOf(text, err.line, err.col));
  const current = text.slice(range.from, range.to);
  return suggestions(err.hint).map((s) => {
    const assign = /^([A-Za-z_][A-Za-z0-9_]*)=(.+)$/.exec(s);
    const insert = assign && assign[1] !== current ? assign[2]! : s;
    return { label: s, from: range.from, to: range.to, insert };
  });
}
