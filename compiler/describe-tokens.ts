/**
 * People's words for tokens in syntax errors: what was found (a name, a string, the end of the
 * line) and what the grammar expected instead (punctuation first, then "a value", closing
 * brackets last).
 */
import type { IToken, TokenType } from 'chevrotain';
import { quote } from '../common/quote.js';
import type { LexedStatement } from './statement-splitter.js';
import * as T from './tokens.js';

const VALUE_START: TokenType[] = [
  T.StringLit,
  T.Heredoc,
  T.NumberLit,
  T.True,
  T.False,
  T.Null,
  T.LBracket,
  T.LBrace,
  T.Identifier,
];
const ORDER: TokenType[] = [
  T.Equals,
  T.Colon,
  T.Dot,
  T.LParen,
  T.LBracket,
  T.Comma,
  T.RParen,
  T.RBracket,
  T.RBrace,
  T.Identifier,
  T.Qualified,
  T.StringLit,
  T.NumberLit,
  T.Heredoc,
  T.True,
  T.False,
  T.Null,
  T.LBrace,
];

function shorten(s: string): string {
  return s.length > 30 ? s.slice(0, 27) + '...' : s;
}

/** What a syntax error found: the token `tok`, or (when undefined) what ends statement `st`. */
export function describeActual(tok: IToken | undefined, st: LexedStatement): string {
  if (!tok) return st.end === 'line' ? 'end of the line' : st.end === 'semicolon' ? '`;`' : 'end of the program';
  switch (tok.tokenType) {
    case T.Identifier:
    case T.Qualified:
      return `name \`${quote(tok.image)}\``;
    case T.StringLit:
      return `string ${shorten(tok.image)}`;
    case T.NumberLit:
      return `number \`${quote(tok.image)}\``;
    case T.Heredoc:
      return 'heredoc';
    default:
      return `\`${tok.image}\``;
  }
}

const CLOSERS: TokenType[] = [T.RParen, T.RBracket, T.RBrace];

/** People's words for a set of token types: punctuation first, then "a value", closing brackets last. */
export function describeExpected(types: TokenType[], inProjection: boolean): string {
  let rest = types;
  const parts: string[] = [];
  const label = (t: TokenType): string =>
    t === T.Identifier && inProjection ? 'a field name' : typeof t.LABEL === 'string' ? t.LABEL : t.name;
  const sorted = (ts: TokenType[]): TokenType[] => [...ts].sort((a, b) => ORDER.indexOf(a) - ORDER.indexOf(b));
  if (VALUE_START.every((v) => types.includes(v))) rest = types.filter((t) => !VALUE_START.includes(t));
  parts.push(...sorted(rest.filter((t) => !CLOSERS.includes(t))).map(label));
  if (rest !== types) parts.push('a value (a string, number, true, false, null, [list], {object} or a binding name)');
  parts.push(...sorted(rest.filter((t) => CLOSERS.includes(t))).map(label));
  if (parts.length <= 1) return parts[0] ?? 'something else';
  return `${parts.slice(0, -1).join(', ')} or ${parts[parts.length - 1]}`;
}
