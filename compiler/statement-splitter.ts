/**
 * The lexer's post-pass: walks the token vector once, decodes literals, turns lexical problems
 * into diagnostics, drops newlines inside brackets and splits the tokens into top-level
 * statements (at newlines and `;`), so the parser can check each statement on its own.
 */
import type { ILexingError, IToken } from 'chevrotain';
import { MAX_SHOWN_ERRORS } from '../common/bound-errors.js';
import { svcError, type SvcError } from '../common/errors.js';
import { decodeNumber, decodeString, heredocError, type Diagnose } from './decode-literal.js';
import { spanAt, type LineIndex } from './spans.js';
import {
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
import { unexpectedCharacter } from './unexpected-character.js';

/** Deepest bracket nesting accepted; deeper input is a syntax error (and never overflows the stack). */
export const MAX_NESTING = 64;

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

/** Splits one token vector (and the lexical errors among it) into statements; used once per `lex`. */
export class StatementSplitter {
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
      this.fail(() => unexpectedCharacter(this.text, e.offset, e.length, this.lines));
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
          hint: unterminatedHint(tok.image),
        }),
      );
    } else if (type === SingleQuoted) {
      this.fail(() => unexpectedCharacter(this.text, start, 1, this.lines));
    }
    // A bad statement is never parsed: its tokens need not be kept.
    if (!this.bad) this.cur.push(tok);
  }
}

/**
 * `"Berlin)`: the string ran over the brackets that end its line; the hint puts the quote before
 * them (`"Berlin")`).
 */
function unterminatedHint(image: string): string {
  const body = image.replace(/[\s)\]},;]*$/, '');
  const fix = `${body}"${image.slice(body.length).trim()}`;
  const close = body.length > 1 && fix.length <= 60 ? `: ${fix}` : '';
  return `close the string with " before the end of the line${close}; for text spanning lines use a heredoc: <<EOT, a newline, the text, then a line holding EOT`;
}
