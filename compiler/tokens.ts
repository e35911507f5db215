/**
 * Token definitions of the program language (see grammar.md, "Lexical structure").
 *
 * Order matters: Chevrotain tries patterns in array order and takes the first match, so
 * `Qualified` precedes `Identifier`, the keywords use `longer_alt`, and the heredoc and legacy
 * openers precede `StringLit`. Some tokens only exist to carry a lexical error (an unterminated
 * string, a malformed heredoc) to the lexer's post-pass (`statement-splitter.ts`), which turns them
 * into diagnostics; the parser never sees a statement holding one.
 */
import type { CustomPatternMatcherReturn, TokenType } from 'chevrotain';
import { createToken, Lexer } from './chevrotain.js';

/** What a `<<` or `"""` token carries: the decoded body, or the lexical error it stands for. */
export type HeredocPayload =
  | { ok: true; value: string; tag: string }
  | {
      ok: false;
      code: 'heredoc_missing_tag' | 'unterminated_heredoc' | 'legacy_heredoc' | 'syntax_error';
      openerLength: number;
      tag?: string;
    };

const TAG_START = /[A-Za-z_]/;
const TAG_CHAR = /[A-Za-z0-9_]/;

function result(image: string, payload: HeredocPayload): CustomPatternMatcherReturn {
  const m = [image] as unknown as CustomPatternMatcherReturn;
  m.payload = payload;
  return m;
}

/** Length of `tag` at `at` when the line holding `at` closes the heredoc (trimmed line = tag, or tag glued to `)`, `,`, `}`). */
function closeAt(text: string, lineStart: number, tag: string): number {
  let i = lineStart;
  while (text.charCodeAt(i) === 32 || text.charCodeAt(i) === 9) i++;
  if (!text.startsWith(tag, i)) return -1;
  const after = i + tag.length;
  const c = text.charCodeAt(after);
  // `)` `,` `}` glued to the tag close it and are left to the parser.
  if (c === 41 || c === 44 || c === 125) return after;
  let j = after;
  while (j < text.length && (text.charCodeAt(j) === 32 || text.charCodeAt(j) === 9 || text.charCodeAt(j) === 13)) j++;
  return j === text.length || text.charCodeAt(j) === 10 ? after : -1;
}

/**
 * Every line of a text that can close a heredoc, by the tag it closes: line start offsets in
 * order. A closing line's tag is the word its content starts with, so one pass over the text finds
 * them all, and each opener looks its closing line up instead of scanning the rest of the text
 * (which made many unclosed openers quadratic).
 */
class ClosingLines {
  private readonly byTag = new Map<string, number[]>();

  constructor(readonly text: string) {
    let ls = 0;
    while (ls <= text.length) {
      let i = ls;
      while (text.charCodeAt(i) === 32 || text.charCodeAt(i) === 9) i++;
      let j = i;
      if (j < text.length && TAG_START.test(text[j]!)) {
        j++;
        while (j < text.length && TAG_CHAR.test(text[j]!)) j++;
        const tag = text.slice(i, j);
        if (closeAt(text, ls, tag) >= 0) {
          const starts = this.byTag.get(tag);
          if (starts) starts.push(ls);
          else this.byTag.set(tag, [ls]);
        }
      }
      const nl = text.indexOf('\n', j);
      if (nl < 0) break;
      ls = nl + 1;
    }
  }

  /** Start of the first line at or after `from` that closes `tag`, or -1. */
  first(tag: string, from: number): number {
    const starts = this.byTag.get(tag);
    if (!starts) return -1;
    let lo = 0;
    let hi = starts.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid]! < from) lo = mid + 1;
      else hi = mid;
    }
    return lo < starts.length ? starts[lo]! : -1;
  }
}

/** The index of the text being lexed (built on the first heredoc opener, reused for the rest of it). */
let closing: ClosingLines | undefined;

function closingLines(text: string): ClosingLines {
  if (closing?.text !== text) closing = new ClosingLines(text);
  return closing;
}

/** Drop what the matchers remember of the last text lexed (so it does not keep that text alive). */
export function forgetLexedText(): void {
  closing = undefined;
  qualifiedMiss = undefined;
}

/**
 * Find the closing line of `tag` from `bodyStart` on. Returns the offset just past the closing
 * tag and the body (lines joined with "\n", a trailing "\r" of each line dropped), or undefined
 * when no line closes the heredoc.
 */
function scanBody(text: string, bodyStart: number, tag: string): { end: number; value: string } | undefined {
  const ls = closingLines(text).first(tag, bodyStart);
  if (ls < 0) return undefined;
  const end = closeAt(text, ls, tag);
  const value = ls === bodyStart ? '' : text.slice(bodyStart, ls - 1).replace(/\r(?=\n|$)/g, '');
  return { end, value };
}

/** Offset just past a newline (`\n` or `\r\n`) at `i`, or -1. */
function newlineAt(text: string, i: number): number {
  if (text.charCodeAt(i) === 10) return i + 1;
  if (text.charCodeAt(i) === 13 && text.charCodeAt(i + 1) === 10) return i + 2;
  return -1;
}

/** Matches every form that starts with `<<`: a heredoc, or one of its malformed variants. */
function matchHeredoc(text: string, offset: number): CustomPatternMatcherReturn | null {
  if (text.charCodeAt(offset) !== 60 || text.charCodeAt(offset + 1) !== 60) return null;
  const legacy = text.charCodeAt(offset + 2) === 60;
  let i = offset + (legacy ? 3 : 2);
  const tagStart = i;
  if (i < text.length && TAG_START.test(text[i]!)) {
    i++;
    while (i < text.length && TAG_CHAR.test(text[i]!)) i++;
  }
  const tag = text.slice(tagStart, i);
  const bodyStart = newlineAt(text, i);
  if (legacy) {
    // Swallow a whole `<<<TAG ... TAG` block when it is one, so its body does not cascade into more errors.
    const body = tag && bodyStart >= 0 ? scanBody(text, bodyStart, tag) : undefined;
    return result(text.slice(offset, body ? body.end : offset + 3), {
      ok: false,
      code: 'legacy_heredoc',
      openerLength: 3,
    });
  }
  if (!tag) {
    // `<<` followed by blanks and a newline (or the end), or by anything that is not a tag.
    return result('<<', { ok: false, code: 'heredoc_missing_tag', openerLength: 2 });
  }
  const openerLength = i - offset;
  if (bodyStart < 0) {
    const code = i >= text.length ? 'unterminated_heredoc' : 'syntax_error';
    return result(text.slice(offset, i), { ok: false, code, openerLength, tag });
  }
  const body = scanBody(text, bodyStart, tag);
  if (!body) return result(text.slice(offset), { ok: false, code: 'unterminated_heredoc', openerLength, tag });
  return result(text.slice(offset, body.end), { ok: true, value: body.value, tag });
}

const isLower = (c: number) => c >= 97 && c <= 122;
const isDigit = (c: number) => c >= 48 && c <= 57;
const isNameStart = (c: number) => isLower(c) || (c >= 65 && c <= 90) || c === 95;
const isNameChar = (c: number) => isNameStart(c) || isDigit(c);
const isApiChar = (c: number) => isLower(c) || isDigit(c) || c === 95 || c === 45;

/**
 * Where a qualified name last failed to match: every start inside the same run of api
 * characters fails the same way (the run, and what follows it, are the same), so a run such as
 * `a-a-a-...` is scanned once, not once per name in it.
 */
let qualifiedMiss: { text: string; from: number; to: number } | undefined;

/** `[a-z][a-z0-9_-]*:[A-Za-z_][A-Za-z0-9_]*`, in time linear over the whole text. */
function matchQualified(text: string, offset: number): CustomPatternMatcherReturn | null {
  if (!isLower(text.charCodeAt(offset))) return null;
  const miss = qualifiedMiss;
  if (miss && miss.text === text && offset >= miss.from && offset <= miss.to) return null;
  let i = offset + 1;
  while (i < text.length && isApiChar(text.charCodeAt(i))) i++;
  if (text.charCodeAt(i) === 58 && isNameStart(text.charCodeAt(i + 1))) {
    let j = i + 2;
    while (j < text.length && isNameChar(text.charCodeAt(j))) j++;
    return [text.slice(offset, j)] as unknown as CustomPatternMatcherReturn;
  }
  qualifiedMiss = { text, from: offset, to: i };
  return null;
}

/** Matches the legacy `"""` opener, swallowing through its closing `"""` when there is one. */
function matchLegacyQuotes(text: string, offset: number): CustomPatternMatcherReturn | null {
  if (!text.startsWith('"""', offset)) return null;
  const close = text.indexOf('"""', offset + 3);
  const end = close < 0 ? offset + 3 : close + 3;
  return result(text.slice(offset, end), { ok: false, code: 'legacy_heredoc', openerLength: 3 });
}

export const WhiteSpace = createToken({ name: 'WhiteSpace', pattern: /[ \t\r]+/, group: Lexer.SKIPPED });
export const Comment = createToken({ name: 'Comment', pattern: /#[^\n]*/, group: Lexer.SKIPPED });
export const Newline = createToken({ name: 'Newline', pattern: /\n/, line_breaks: true, label: 'end of line' });
export const Semicolon = createToken({ name: 'Semicolon', pattern: ';', label: '`;`' });

export const Heredoc = createToken({
  name: 'Heredoc',
  pattern: { exec: matchHeredoc },
  line_breaks: true,
  start_chars_hint: ['<'],
  label: 'a heredoc',
});
export const LegacyQuotes = createToken({
  name: 'LegacyQuotes',
  pattern: { exec: matchLegacyQuotes },
  line_breaks: true,
  start_chars_hint: ['"'],
  label: '`"""`',
});
export const StringLit = createToken({ name: 'StringLit', pattern: /"(?:[^"\\\r\n]|\\[^\r\n])*"/, label: 'a string' });
/** A string that reaches the end of its line: only ever reported as `unterminated_string`. */
export const UnterminatedString = createToken({
  name: 'UnterminatedString',
  pattern: /"(?:[^"\\\r\n]|\\[^\r\n])*\\?/,
  label: 'a string',
});
/**
 * Any digit run with the letters, dots and exponent signs glued to it, so `12abc` or `1.` is one
 * token that `decode-literal.ts` classifies as an integer, a decimal or a `bad_number`. (No valid program
 * has a dot right after a number: values are followed by `,` or a closing bracket.)
 */
/** `'text'`: only ever reported as `unexpected_character`, with a hint to use double quotes. */
export const SingleQuoted = createToken({
  name: 'SingleQuoted',
  pattern: /'[^'\r\n]*'?/,
  label: 'a single-quoted string',
});
export const NumberLit = createToken({
  name: 'NumberLit',
  pattern: /-?\d(?:[eE][+-]|[0-9A-Za-z_.])*/,
  label: 'a number',
});

export const Identifier = createToken({ name: 'Identifier', pattern: /[A-Za-z_][A-Za-z0-9_]*/, label: 'a name' });
export const Qualified = createToken({
  name: 'Qualified',
  pattern: { exec: matchQualified },
  start_chars_hint: [...'abcdefghijklmnopqrstuvwxyz'],
  label: 'a qualified name `api:Entity`',
});
export const True = createToken({ name: 'True', pattern: /true/, longer_alt: Identifier, label: '`true`' });
export const False = createToken({ name: 'False', pattern: /false/, longer_alt: Identifier, label: '`false`' });
export const Null = createToken({ name: 'Null', pattern: /null/, longer_alt: Identifier, label: '`null`' });

export const Equals = createToken({ name: 'Equals', pattern: '=', label: '`=`' });
export const Comma = createToken({ name: 'Comma', pattern: ',', label: '`,`' });
export const Dot = createToken({ name: 'Dot', pattern: '.', label: '`.`' });
export const Colon = createToken({ name: 'Colon', pattern: ':', label: '`:`' });
export const LParen = createToken({ name: 'LParen', pattern: '(', label: '`(`' });
export const RParen = createToken({ name: 'RParen', pattern: ')', label: '`)`' });
export const LBracket = createToken({ name: 'LBracket', pattern: '[', label: '`[`' });
export const RBracket = createToken({ name: 'RBracket', pattern: ']', label: '`]`' });
export const LBrace = createToken({ name: 'LBrace', pattern: '{', label: '`{`' });
export const RBrace = createToken({ name: 'RBrace', pattern: '}', label: '`}`' });

/** Lexer order (first match wins). */
export const allTokens: TokenType[] = [
  WhiteSpace,
  Comment,
  Newline,
  Semicolon,
  Heredoc,
  LegacyQuotes,
  StringLit,
  UnterminatedString,
  SingleQuoted,
  NumberLit,
  Qualified,
  True,
  False,
  Null,
  Identifier,
  Equals,
  Comma,
  Dot,
  Colon,
  LParen,
  RParen,
  LBracket,
  RBracket,
  LBrace,
  RBrace,
];
