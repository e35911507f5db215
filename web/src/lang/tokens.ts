/**
 * The token classes of the program language, as the playground highlights them. They mirror the
 * Chevrotain token definitions of `compiler/tokens.ts` (grammar.md "Lexical structure"):
 * `test/web/tokens.test.ts` holds the two in step (same token names, same keywords and
 * punctuation, same patterns, and the same tokens over sample programs). Pure: no DOM, no editor.
 */

/** What a Chevrotain token is drawn as; `skip` is blank space the editor leaves unstyled. */
export type TokenClass =
  | 'skip'
  | 'comment'
  | 'punctuation'
  | 'bracket'
  | 'heredoc'
  | 'string'
  | 'number'
  | 'keyword'
  | 'qualified'
  | 'name'
  | 'invalid';

/** Every token of `compiler/tokens.ts` `allTokens`, by its Chevrotain name. */
export const TOKEN_CLASSES: Readonly<Record<string, TokenClass>> = {
  WhiteSpace: 'skip',
  Comment: 'comment',
  Newline: 'skip',
  Semicolon: 'punctuation',
  Heredoc: 'heredoc',
  LegacyQuotes: 'invalid',
  StringLit: 'string',
  UnterminatedString: 'invalid',
  SingleQuoted: 'invalid',
  NumberLit: 'number',
  Qualified: 'qualified',
  True: 'keyword',
  False: 'keyword',
  Null: 'keyword',
  Identifier: 'name',
  Equals: 'punctuation',
  Comma: 'punctuation',
  Dot: 'punctuation',
  Colon: 'punctuation',
  LParen: 'bracket',
  RParen: 'bracket',
  LBracket: 'bracket',
  RBracket: 'bracket',
  LBrace: 'bracket',
  RBrace: 'bracket',
};

/** Whole-word keywords (Chevrotain tokens with `longer_alt: Identifier`). */
export const KEYWORDS: readonly string[] = ['true', 'false', 'null'];

/** Head names of a continuation statement (lexed as names; the parser gives them their meaning). */
export const CONTINUATIONS: readonly string[] = ['page', 'wait', 'cancel'];

/** Single-character tokens with a string pattern. */
export const PUNCTUATION: readonly string[] = [';', '=', ',', '.', ':', '(', ')', '[', ']', '{', '}'];

/** The patterns the tokenizer shares with the compiler (compared by source in the test). */
export const PATTERNS = {
  Identifier: /[A-Za-z_][A-Za-z0-9_]*/,
  NumberLit: /-?\d(?:[eE][+-]|[0-9A-Za-z_.])*/,
  StringLit: /"(?:[^"\\\r\n]|\\[^\r\n])*"/,
  UnterminatedString: /"(?:[^"\\\r\n]|\\[^\r\n])*\\?/,
  SingleQuoted: /'[^'\r\n]*'?/,
  Comment: /#[^\n]*/,
  WhiteSpace: /[ \t\r]+/,
} as const;

/** A qualified name `api:Entity`, one token. */
export const QUALIFIED = /[a-z][a-z0-9_-]*:[A-Za-z_][A-Za-z0-9_]*/;

/** A heredoc tag, as written after `<<`. */
export const HEREDOC_TAG = /[A-Za-z_][A-Za-z0-9_]*/;

/** Symbols of a session (`e3`, `m12`, `r2`) and handles minted by the host (`pg3`, `o2`, `pc1`). */
export const SYMBOL = /^[emr]\d+$/;
export const HANDLE = /^(?:pg|o|pc)\d+$/;
