/**
 * The scanner of the fast path (`fast-parse.ts`): one pass over a program's text that finds the
 * tokens and the top-level statements of a program without a lexical problem, with no token
 * objects: kinds and offsets go into reused typed arrays. It follows the Chevrotain lexer of
 * `lexer.ts` (the token order of `tokens.ts`: first match wins, a keyword gives way to a longer
 * name; the same custom matchers) and the statement rules of `statement-splitter.ts` (a newline or
 * `;` outside brackets ends a statement; a newline inside them is dropped). At anything that
 * path would report (a character no token starts with, an unterminated or single-quoted string,
 * `"""`, a malformed heredoc, brackets nested too deep, a `;` inside brackets) it gives up, and
 * the program goes through that path, which words the diagnostic.
 */
import { MAX_NESTING } from './statement-splitter.js';
import { matchHeredoc, matchQualified, NumberLit, StringLit, type HeredocPayload } from './tokens.js';

/** Token kinds (numbers in `kinds`). */
export const IDENT = 1;
export const QUALIFIED = 2;
export const TRUE = 3;
export const FALSE = 4;
export const NULL = 5;
export const STRING = 6;
export const HEREDOC = 7;
export const NUMBER = 8;
export const EQUALS = 9;
export const COMMA = 10;
export const DOT = 11;
export const COLON = 12;
export const LPAREN = 13;
export const RPAREN = 14;
export const LBRACKET = 15;
export const RBRACKET = 16;
export const LBRACE = 17;
export const RBRACE = 18;

/** Single-character tokens by character code; -1 for the newline and `;`, which end statements. */
const SINGLE = new Int8Array(128);
for (const [ch, k] of [
  ['=', EQUALS],
  [',', COMMA],
  ['.', DOT],
  [':', COLON],
  ['(', LPAREN],
  [')', RPAREN],
  ['[', LBRACKET],
  [']', RBRACKET],
  ['{', LBRACE],
  ['}', RBRACE],
  ['\n', -1],
  [';', -1],
] as const)
  SINGLE[ch.charCodeAt(0)] = k;

const sticky = (re: RegExp): RegExp => new RegExp(re.source, 'y');
const STRING_RE = sticky(StringLit.PATTERN as RegExp);
const NUMBER_RE = sticky(NumberLit.PATTERN as RegExp);

/** The tokens found (reused from text to text): kind, start and end offsets. */
export let kinds = new Uint8Array(1024);
export let starts = new Int32Array(1024);
export let ends = new Int32Array(1024);
/** The decoded body of each heredoc token, by token index. */
export const heredocs: string[] = [];
/** Token index just past each statement's last token, in order. */
export let stops = new Int32Array(64);

const isNameChar = (c: number): boolean =>
  (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95;

/** `true`, `false` or `null` written as a whole name; else an identifier. */
function nameKind(text: string, i: number, len: number): number {
  if (len === 4) {
    if (text.startsWith('true', i)) return TRUE;
    if (text.startsWith('null', i)) return NULL;
  } else if (len === 5 && text.startsWith('false', i)) return FALSE;
  return IDENT;
}

/** Twice the room for tokens. */
function grow(): void {
  const [k, s, e] = [
    new Uint8Array(kinds.length * 2),
    new Int32Array(kinds.length * 2),
    new Int32Array(kinds.length * 2),
  ];
  k.set(kinds);
  s.set(starts);
  e.set(ends);
  [kinds, starts, ends] = [k, s, e];
}

/** Record that a statement ends before token `count`. */
function endStatement(statements: number, count: number): void {
  if (statements >= stops.length) {
    const s = new Int32Array(stops.length * 2);
    s.set(stops);
    stops = s;
  }
  stops[statements] = count;
}

/** Length of the match of sticky `re` at `offset`, or -1. */
function matchAt(re: RegExp, text: string, offset: number): number {
  re.lastIndex = offset;
  return re.test(text) ? re.lastIndex - offset : -1;
}

/**
 * Scan `text`: the number of statements (their tokens in `kinds`/`starts`/`ends`, their ends in
 * `stops`), or -1 when the text holds something only the Chevrotain path reports.
 */
export function scan(text: string): number {
  const n = text.length;
  let count = 0;
  let statements = 0;
  let first = 0;
  let depth = 0;
  let i = 0;
  // The arrays in locals (reloaded after growing): the loop stores into them for every token.
  let [ks, ss, es] = [kinds, starts, ends];
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 32 || c === 9 || c === 13) {
      i++;
      continue;
    }
    if (c === 35) {
      // A comment, up to the end of its line.
      const nl = text.indexOf('\n', i);
      i = nl < 0 ? n : nl;
      continue;
    }
    let kind = c < 128 ? SINGLE[c]! : 0;
    let len = 1;
    if (kind === -1) {
      // A newline or `;`: the end of a statement outside brackets; a newline inside them is dropped.
      if (depth === 0) {
        if (count > first) {
          endStatement(statements++, count);
          first = count;
        }
      } else if (c === 59) return -1;
      i++;
      continue;
    }
    if (kind === LPAREN || kind === LBRACKET || kind === LBRACE) {
      if (++depth > MAX_NESTING) return -1;
    } else if (kind === RPAREN || kind === RBRACKET || kind === RBRACE) {
      if (depth > 0) depth--;
    } else if ((c >= 65 && c <= 90) || c === 95 || (c >= 97 && c <= 122)) {
      let j = i + 1;
      while (j < n && isNameChar(text.charCodeAt(j))) j++;
      // `api:Entity` needs a `:` (or a `-` of the api) right after the name's run of characters.
      const after = text.charCodeAt(j);
      const q = c >= 97 && (after === 58 || after === 45) ? matchQualified(text, i) : null;
      kind = q ? QUALIFIED : nameKind(text, i, j - i);
      len = q ? q[0].length : j - i;
    } else if (c === 34) {
      if (text.startsWith('"""', i)) return -1;
      kind = STRING;
      len = matchAt(STRING_RE, text, i);
    } else if (c === 60) {
      const m = matchHeredoc(text, i);
      const payload = m?.payload as HeredocPayload | undefined;
      if (!m || !payload?.ok) return -1;
      kind = HEREDOC;
      len = m[0].length;
      heredocs[count] = payload.value;
    } else if (c === 45 || (c >= 48 && c <= 57)) {
      kind = NUMBER;
      len = matchAt(NUMBER_RE, text, i);
    }
    if (kind <= 0 || len <= 0) return -1;
    if (count >= ks.length) {
      grow();
      [ks, ss, es] = [kinds, starts, ends];
    }
    ks[count] = kind;
    ss[count] = i;
    es[count] = i + len;
    count++;
    i += len;
  }
  if (count > first) endStatement(statements++, count);
  return statements;
}

/** Let go of what the last scan kept (arrays grown for a long text, heredoc bodies). */
export function forgetScan(): void {
  heredocs.length = 0;
  if (kinds.length > 1 << 16) {
    kinds = new Uint8Array(1024);
    starts = new Int32Array(1024);
    ends = new Int32Array(1024);
  }
  if (stops.length > 1 << 12) stops = new Int32Array(64);
}
