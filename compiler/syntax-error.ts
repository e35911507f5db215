/**
 * Wording a statement's syntax error: finds where the statement really goes wrong (the
 * grammar's content assist, not only Chevrotain's first complaint), which bracket is still open
 * there, and writes the message and hint an agent can fix its program from.
 */
import type { IRecognitionException, IToken, TokenType } from 'chevrotain';
import { EOF } from './chevrotain.js';
import { svcError, type SvcError } from '../common/errors.js';
import { describeActual, describeExpected } from './describe-tokens.js';
import { statementParser, type ParseFailure } from './parser.js';
import { spanAt, tokenEnd, type LineIndex } from './spans.js';
import type { LexedStatement } from './statement-splitter.js';
import { syntaxFix } from './syntax-fixes.js';
import * as T from './tokens.js';

const CLOSER = new Map<TokenType, TokenType>([
  [T.LParen, T.RParen],
  [T.LBracket, T.RBracket],
  [T.LBrace, T.RBrace],
]);
/** Longest prefix the content-assist walk is asked about; beyond it the parser's own expectation is used. */
const ASSIST_LIMIT = 400;

/** Token types that may follow `tokens[0..n)` according to the grammar. */
function nextTypes(tokens: IToken[], n: number): TokenType[] {
  const seen = new Set<TokenType>();
  for (const p of statementParser.computeContentAssist('statement', tokens.slice(0, n))) seen.add(p.nextTokenType);
  return [...seen];
}

function failureOf(e: IRecognitionException): ParseFailure {
  try {
    return JSON.parse(e.message) as ParseFailure;
  } catch {
    return { kind: 'leftover' };
  }
}

function byName(name: string): TokenType | undefined {
  return T.allTokens.find((t) => t.name === name);
}

/** Where the statement really goes wrong and what could have come there instead. */
function locate(e: IRecognitionException, toks: IToken[]): { at: number; expected: TokenType[] } {
  let at = e.token.tokenType === EOF ? toks.length : toks.indexOf(e.token);
  if (at < 0) at = toks.length;
  const failure = failureOf(e);
  const fallback = (): TokenType[] => {
    if (failure.kind === 'mismatch') return failure.expected.map(byName).filter((t): t is TokenType => !!t);
    if (failure.kind === 'alternatives')
      return [...new Set(failure.paths.map((p) => byName(p[0] ?? '')).filter((t): t is TokenType => !!t))];
    return [];
  };
  if (at > ASSIST_LIMIT) return { at, expected: fallback() };
  let expected = nextTypes(toks, at);
  // With two tokens of lookahead the parser may stop one token early; move to the token that breaks the grammar.
  for (
    let k = 0;
    failure.kind !== 'leftover' && k < 2 && at < toks.length && expected.includes(toks[at]!.tokenType);
    k++
  ) {
    at++;
    expected = nextTypes(toks, at);
  }
  return { at, expected: expected.length > 0 ? expected : fallback() };
}

/** The innermost bracket still open before `toks[at]`, and what kind of list it opens. */
function openBracket(toks: IToken[], at: number): { tok: IToken; what: string } | undefined {
  const stack: number[] = [];
  for (let i = 0; i < at; i++) {
    const t = toks[i]!.tokenType;
    if (CLOSER.has(t)) stack.push(i);
    else if ((t === T.RParen || t === T.RBracket || t === T.RBrace) && stack.length > 0) stack.pop();
  }
  const i = stack[stack.length - 1];
  if (i === undefined) return undefined;
  const tok = toks[i]!;
  const t = tok.tokenType;
  const prev = toks[i - 1]?.tokenType;
  const valuePosition =
    prev === T.Equals || prev === T.LParen || prev === T.Comma || prev === T.LBracket || prev === T.Colon;
  const what = t === T.LParen ? 'argument list' : t === T.LBrace ? 'object' : valuePosition ? 'list' : 'projection';
  return { tok, what };
}

/**
 * The diagnostic of a statement's syntax error. `quiet`: it will not be shown (enough errors come
 * before it), so it is counted with the position Chevrotain reported, without the costly wording.
 */
export function syntaxError(e: IRecognitionException, st: LexedStatement, lines: LineIndex, quiet = false): SvcError {
  try {
    if (!quiet) return wordSyntaxError(e, st, lines);
  } catch {
    // Wording is best effort; the position Chevrotain reported is always available.
  }
  const tok = e.token.tokenType === EOF ? undefined : e.token;
  const start = tok ? tok.startOffset : st.tokens.length > 0 ? tokenEnd(st.tokens[st.tokens.length - 1]!) : 0;
  return svcError('syntax_error', `unexpected ${describeActual(tok, st)}`, {
    span: spanAt(lines, start, tok ? tokenEnd(tok) : start),
    hint: 'check this statement against the grammar: name(arg=value, ...)[field, ...]',
  });
}

function wordSyntaxError(e: IRecognitionException, st: LexedStatement, lines: LineIndex): SvcError {
  const toks = st.tokens;
  const { at, expected } = locate(e, toks);
  const tok = toks[at];
  const last = toks[toks.length - 1];
  const start = tok ? tok.startOffset : last ? tokenEnd(last) : 0;
  const span = spanAt(lines, start, tok ? tokenEnd(tok) : start);
  const actual = describeActual(tok, st);
  const open = openBracket(toks, at);
  let message = `unexpected ${actual}${open ? ` in the ${open.what}` : ''}`;
  // A fix written out from the statement's own tokens beats the grammar's list of what may come.
  const fix = syntaxFix({ text: lines.text, toks, at, open, leftover: failureOf(e).kind === 'leftover' });
  const hint = (h: string): SvcError => svcError('syntax_error', message, { span, hint: fix ?? h });

  if (at === 0) {
    return hint(
      'a statement starts with a name, e.g. e1(city="Berlin")[name] or brewery:Beer, or binds one: b = e1(city="Berlin")',
    );
  }
  if (failureOf(e).kind === 'leftover' && tok) {
    const tt = tok.tokenType;
    if (tt === T.RParen || tt === T.RBracket || tt === T.RBrace) {
      message = `unexpected ${actual} with no matching opening bracket`;
      return hint('remove it, or add the opening bracket it closes');
    }
    if (tt === T.Equals) {
      message = 'unexpected `=` after an expression';
      return hint(
        '`=` binds a plain name: write name = expression, e.g. b = e1(city="Berlin"); arguments go inside the parentheses: e1(city="Berlin")',
      );
    }
    message = `unexpected ${actual} after the end of the statement`;
    return hint(
      `expected ${describeExpected(expected, false)}, or the end of the statement; put each statement on its own line or separate statements with \`;\``,
    );
  }
  const prev = toks[at - 1]?.tokenType;
  if (tok?.tokenType === T.Colon && prev === T.Identifier && open?.what === 'argument list') {
    return hint('arguments are written name=value, e.g. city="Berlin"');
  }
  let h = `expected ${describeExpected(expected, open?.what === 'projection')}`;
  if (open) {
    const closer = CLOSER.get(open.tok.tokenType)!;
    const where = lines.pos(open.tok.startOffset);
    if (expected.includes(closer)) h += ` to close the ${open.what} opened at ${where.line}:${where.col}`;
  }
  return hint(h);
}
