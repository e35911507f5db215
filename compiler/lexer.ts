/**
 * Tokenizing program text: one shared Chevrotain lexer, then a post-pass that decodes literals,
 * turns lexical problems into diagnostics, drops newlines inside brackets and splits the token
 * vector into top-level statements (at newlines and `;`), so the parser can check each statement
 * on its own and report the errors of every line.
 */
import { Lexer, type ILexingError, type IToken } from 'chevrotain';
import { MAX_SHOWN_ERRORS } from '../common/bound-errors.js';
import { svcError, type Span, type SvcError } from '../common/errors.js';
import { quote } from '../common/quote.js';
import { type LineIndex } from './spans.js';
import {
  allTokens,
  forgetLexedText,
  Heredoc,
  LBrace,
  LBracket,
  LegacyQuotes,
  LParen,
  Newline,
  NumberLit,
  RBrace,
  RBracket,
  RParen,
  Semicolon,
  SingleQuoted,
  StringLit,
  UnterminatedString,
  type HeredocPayload,
} from './tokens.js';

/** Deepest bracket nesting accepted; deeper input is a syntax error (and never overflows the stack). */
export const MAX_NESTING = 64;

/** The decoded value a `NumberLit` token carries as its payload (set by `lex`). */
export type NumberPayload = { kind: 'integer' | 'decimal'; value: number };

export interface LexedStatement {
  /** The statement's tokens, without newlines and separators. */
  tokens: IToken[];
  /** True when a lexical error lies inside the statement: it is reported already and not parsed. */
  bad: boolean;
  /** What ends the statement: a newline, a `;`, or the end of the input. */
  end: 'line' | 'semicolon' | 'input';
  /** Offset of its first token or lexical error. */
  start: number;
  /** Lexical errors inside it (the diagnostics built, and those only counted). */
  errors: number;
}

export interface LexResult {
  statements: LexedStatement[];
  /** The first diagnostics by position (at most `MAX_SHOWN_ERRORS` + 1 of them are built)... */
  diagnostics: SvcError[];
  /** ... and how many more there are, counted but never built. */
  hidden: number;
}

const lexer = new Lexer(allTokens, {
  positionTracking: 'onlyOffset',
  lineTerminatorsPattern: /\n/g,
  lineTerminatorCharacters: ['\n'],
  ensureOptimizations: true,
});

/** The 0-based offset just past a token. */
export function tokenEnd(t: IToken): number {
  return t.startOffset + t.image.length;
}

/** A diagnostic span for the 0-based offsets `[start, end)`. */
export function spanAt(lines: LineIndex, start: number, end: number): Span {
  const a = lines.pos(start);
  const b = end <= start ? a : lines.pos(end);
  return { line: a.line, col: a.col, endLine: b.line, endCol: end <= start ? a.col : b.col };
}

const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', n: '\n', t: '\t', r: '\r', b: '\b', f: '\f' };
const HEX4 = /^[0-9a-fA-F]{4}$/;

/** Builds a diagnostic only when it may be shown (see `Splitter.fail`). */
type Diagnose = () => SvcError;

/** The value of a string token (quotes removed, escapes decoded), or its `bad_escape` diagnostic. */
function decodeString(image: string, start: number, lines: LineIndex): string | Diagnose {
  const body = image.slice(1, -1);
  if (body.indexOf('\\') < 0) return body;
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const e = body[i + 1] ?? '';
    const simple = ESCAPES[e];
    if (simple !== undefined) {
      out += simple;
      i++;
    } else if (e === 'u' && HEX4.test(body.slice(i + 2, i + 6))) {
      out += String.fromCharCode(parseInt(body.slice(i + 2, i + 6), 16));
      i += 5;
    } else {
      const at = start + 1 + i;
      const len = e === 'u' ? 2 + /^[0-9a-fA-F]{0,3}/.exec(body.slice(i + 2))![0].length : 2;
      const text = body.slice(i, i + len);
      return () =>
        svcError(
          'bad_escape',
          e === 'u' ? `escape \`${text}\` needs four hex digits` : `unknown escape \`${text}\` in a string`,
          {
            span: spanAt(lines, at, at + len),
            hint:
              e === 'u'
                ? 'write \\u followed by exactly four hex digits, e.g. \\u00e9'
                : 'the escapes are \\" \\\\ \\/ \\n \\t \\r \\b \\f and \\uXXXX; write a literal backslash as \\\\',
          },
        );
    }
  }
  return out;
}

const INTEGER = /^-?\d+$/;
const DECIMAL = /^-?\d+\.\d+(?:[eE][+-]?\d+)?$/;

/** The value of a number token, or its `bad_number` diagnostic. */
function decodeNumber(image: string, start: number, lines: LineIndex): NumberPayload | Diagnose {
  if (INTEGER.test(image)) {
    const value = Number(image);
    if (Number.isSafeInteger(value)) return { kind: 'integer', value: value === 0 ? 0 : value };
    return () =>
      svcError('bad_number', `integer \`${quote(image)}\` is out of range`, {
        span: spanAt(lines, start, start + image.length),
        hint:
          'integers must lie between -9007199254740991 and 9007199254740991; pass a larger number as a string, e.g. "' +
          quote(image) +
          '"',
      });
  }
  if (DECIMAL.test(image)) {
    const value = Number(image);
    if (Number.isFinite(value)) return { kind: 'decimal', value };
    return () =>
      svcError('bad_number', `decimal \`${quote(image)}\` is out of range`, {
        span: spanAt(lines, start, start + image.length),
        hint: 'use a smaller exponent, or pass the number as a string',
      });
  }
  return () =>
    svcError('bad_number', `\`${quote(image)}\` is not a number`, {
      span: spanAt(lines, start, start + image.length),
      hint:
        'integers are written like 42 or -7, decimals like 2.5 or 1.5e-3 (digits on both sides of the dot); quote text that starts with a digit, e.g. "' +
        quote(image) +
        '"',
    });
}

const HEREDOC_FORM = 'write <<EOT, a newline, the text, then a line holding EOT';

/** The diagnostic for a malformed heredoc token. */
function heredocError(p: Extract<HeredocPayload, { ok: false }>, start: number, lines: LineIndex): SvcError {
  const span = spanAt(lines, start, start + p.openerLength);
  switch (p.code) {
    case 'legacy_heredoc':
      return svcError('legacy_heredoc', 'the three-character heredoc opener was removed', { span, hint: HEREDOC_FORM });
    case 'heredoc_missing_tag':
      return svcError('heredoc_missing_tag', 'the heredoc opener `<<` has no tag', {
        span,
        hint: `put the tag right after \`<<\` with no space: ${HEREDOC_FORM}`,
      });
    case 'unterminated_heredoc':
      return svcError('unterminated_heredoc', `the heredoc \`<<${quote(p.tag ?? '')}\` is never closed`, {
        span,
        hint: `end the text with a line holding only ${p.tag ? quote(p.tag) : 'the tag'} (it may be followed directly by \`)\`, \`,\` or \`}\`)`,
      });
    case 'syntax_error':
      return svcError('syntax_error', `the heredoc opener \`<<${quote(p.tag ?? '')}\` must end its line`, {
        span,
        hint: `start the text on the next line: ${HEREDOC_FORM}; nothing, not even a space, may follow the tag on the opener line`,
      });
  }
}

const CHAR_HINTS: Record<string, string> = {
  "'": 'strings use double quotes, e.g. "Berlin"',
  '\u201c': 'use plain double quotes " instead of typographic quotes',
  '\u201d': 'use plain double quotes " instead of typographic quotes',
  '<': 'there are no comparison operators; filters are arguments, e.g. e1(city="Berlin"); a multi-line string starts with <<TAG',
  '>': 'there are no comparison operators; filters are arguments, e.g. e1(city="Berlin")',
  '!': 'there are no operators; filters are arguments, e.g. e1(city="Berlin")',
  '&': 'there are no operators; give several arguments separated by commas, e.g. e1(city="Berlin", kind="micro")',
  '|': 'there are no operators; give several arguments separated by commas, e.g. e1(city="Berlin", kind="micro")',
  '-': 'a minus sign must be followed by a digit; names may not contain `-` (except the api part of `api:Entity`)',
  '/': 'comments start with #',
  $: 'names are plain: write the name without $',
  '@': 'names are plain: write the name without @',
};

function unexpected(text: string, start: number, length: number, lines: LineIndex): SvcError {
  const chars = text.slice(start, start + length);
  const shown = chars.length > 20 ? chars.slice(0, 20) + '...' : chars;
  return svcError('unexpected_character', `unexpected character${chars.length > 1 ? 's' : ''} \`${shown}\``, {
    span: spanAt(lines, start, start + length),
    hint:
      CHAR_HINTS[chars[0]!] ??
      'names are letters, digits and `_`, strings are double-quoted, and # starts a comment; remove or quote the character',
  });
}

/**
 * Tokenize `text` into statements. Never throws on user input; every lexical problem is a
 * diagnostic and marks its statement `bad`.
 */
export function lex(text: string, lines: LineIndex): LexResult {
  try {
    const { tokens, errors } = lexer.tokenize(text);
    return new Splitter(text, lines, errors).run(tokens);
  } finally {
    forgetLexedText();
  }
}

class Splitter {
  readonly statements: LexedStatement[] = [];
  readonly diagnostics: SvcError[] = [];
  /** Diagnostics past the first `MAX_SHOWN_ERRORS` + 1: counted, not built. */
  private hidden = 0;
  private cur: IToken[] = [];
  /** Offset where the current statement starts (its first token or lexical error), -1 before. */
  private start = -1;
  /** Lexical errors in the current statement. */
  private errorCount = 0;
  private bad = false;
  private depth = 0;
  private tooDeep = false;
  /** Set after an unterminated string: its line ends the statement even inside brackets. */
  private breakAtNewline = false;
  private errIdx = 0;

  constructor(
    private readonly text: string,
    private readonly lines: LineIndex,
    private readonly errors: ILexingError[],
  ) {}

  run(tokens: IToken[]): LexResult {
    for (const tok of tokens) {
      this.takeErrorsBefore(tok.startOffset);
      const type = tok.tokenType;
      if (type === Newline) {
        if (this.depth === 0 || this.breakAtNewline) this.flush('line');
      } else if (type === Semicolon && this.depth === 0) {
        this.flush('semicolon');
      } else {
        this.token(tok);
      }
    }
    this.takeErrorsBefore(Infinity);
    this.flush('input');
    return { statements: this.statements, diagnostics: this.diagnostics, hidden: this.hidden };
  }

  /**
   * Mark the statement bad and record its diagnostic. Lexical diagnostics come in text order, so
   * once one more than can be shown is built, the rest are only counted.
   */
  private fail(diagnose: Diagnose): void {
    if (this.diagnostics.length <= MAX_SHOWN_ERRORS) this.diagnostics.push(diagnose());
    else this.hidden++;
    this.errorCount++;
    this.bad = true;
  }

  private takeErrorsBefore(offset: number): void {
    while (this.errIdx < this.errors.length && this.errors[this.errIdx]!.offset < offset) {
      const e = this.errors[this.errIdx++]!;
      if (this.start < 0) this.start = e.offset;
      this.fail(() => unexpected(this.text, e.offset, e.length, this.lines));
    }
  }

  private flush(end: LexedStatement['end']): void {
    if (this.start >= 0)
      this.statements.push({
        tokens: this.bad ? [] : this.cur,
        bad: this.bad,
        end,
        start: this.start,
        errors: this.errorCount,
      });
    this.cur = [];
    this.start = -1;
    this.errorCount = 0;
    this.bad = false;
    this.depth = 0;
    this.tooDeep = false;
    this.breakAtNewline = false;
  }

  private token(tok: IToken): void {
    const type = tok.tokenType;
    const start = tok.startOffset;
    if (this.start < 0) this.start = start;
    if (type === LParen || type === LBracket || type === LBrace) {
      if (++this.depth > MAX_NESTING && !this.tooDeep) {
        this.tooDeep = true;
        this.fail(() =>
          svcError('syntax_error', `brackets are nested more than ${MAX_NESTING} deep`, {
            span: spanAt(this.lines, start, start + 1),
            hint: 'flatten the value; programs this deep are never needed',
          }),
        );
      }
    } else if (type === RParen || type === RBracket || type === RBrace) {
      if (this.depth > 0) this.depth--;
    } else if (type === StringLit) {
      const v = decodeString(tok.image, start, this.lines);
      if (typeof v === 'string') tok.payload = v;
      else this.fail(v);
    } else if (type === NumberLit) {
      const v = decodeNumber(tok.image, start, this.lines);
      if (typeof v === 'function') this.fail(v);
      else tok.payload = v;
    } else if (type === Heredoc || type === LegacyQuotes) {
      const p = tok.payload as HeredocPayload;
      if (!p.ok) this.fail(() => heredocError(p, start, this.lines));
    } else if (type === UnterminatedString) {
      this.breakAtNewline = true;
      this.fail(() =>
        svcError('unterminated_string', 'this string has no closing quote on its line', {
          span: spanAt(this.lines, start, start + tok.image.length),
          hint: 'close the string with " before the end of the line; for text spanning lines use a heredoc: <<EOT, a newline, the text, then a line holding EOT',
        }),
      );
    } else if (type === SingleQuoted) {
      this.fail(() => unexpected(this.text, start, 1, this.lines));
    }
    // A bad statement is never parsed: its tokens need not be kept.
    if (!this.bad) this.cur.push(tok);
  }
}
