/**
 * The parsing facade: program text in, AST or diagnostics out. Lexes the whole text, parses each
 * top-level statement on its own (so one bad line does not hide errors on others), builds the
 * AST and applies the program-level rules (continuations stand alone, a program is not empty).
 * Never throws: an unexpected internal failure becomes one `internal_error` diagnostic.
 */
import { EOF, type IRecognitionException, type IToken, type TokenType } from 'chevrotain';
import { boundErrors, MAX_SHOWN_ERRORS } from '../common/bound-errors.js';
import { svcError, type SvcError } from '../common/errors.js';
import { quote } from '../common/quote.js';
import type { Program, Statement } from './ast.js';
import { buildStatement, srcSpan } from './ast-builder.js';
import { lex, spanAt, tokenEnd, type LexedStatement } from './lexer.js';
import { MAX_PROGRAM_STATEMENTS, programTooLarge } from './limits.js';
import { statementParser, type ParseFailure } from './parser.js';
import { LineIndex } from './spans.js';
import * as T from './tokens.js';

/**
 * Parse a program. `program` is set only when there are no diagnostics. At most
 * `MAX_SHOWN_ERRORS` diagnostics come back, the first by position, then one `too_many_errors`
 * with the count of the rest; a program of more than `MAX_PROGRAM_STATEMENTS` statements gets
 * only `program_too_large`, before any statement is parsed.
 *
 * @example parseProgram('e1(city="Berlin")[name]').program?.statements[0]?.kind // 'expr'
 */
export function parseProgram(text: string): { program?: Program; diagnostics: SvcError[] } {
  try {
    return parse(text);
  } catch {
    return {
      diagnostics: [
        svcError('internal_error', 'the parser failed unexpectedly', {
          hint: 'this is a bug in svc, not in the program; report it with the program text',
        }),
      ],
    };
  }
}

function parse(text: string): { program?: Program; diagnostics: SvcError[] } {
  const lines = new LineIndex(text);
  const { statements, diagnostics, hidden } = lex(text, lines);
  if (statements.length > MAX_PROGRAM_STATEMENTS) return { diagnostics: [tooManyStatements(statements, lines)] };
  const out: Statement[] = [];
  const ctx = { lines, diagnostics };
  // Diagnostics of the statements before the current one: once as many as can be shown lie
  // there, later statements' errors are only counted, so they skip the costly wording.
  let before = 0;
  for (const st of statements) {
    const quiet = before >= MAX_SHOWN_ERRORS;
    before += st.errors;
    if (st.bad) continue;
    const n = diagnostics.length;
    statementParser.input = st.tokens;
    const cst = statementParser.statement();
    const err = statementParser.errors[0];
    if (err) diagnostics.push(syntaxError(err, st, lines, quiet));
    else {
      const s = buildStatement(cst, ctx);
      if (s) out.push(s);
    }
    before += diagnostics.length - n;
  }
  if (statements.length > 1) {
    for (const s of out) {
      if (s.kind !== 'page' && s.kind !== 'wait' && s.kind !== 'cancel') continue;
      const whole = quote(text.slice(s.span.start, s.span.end));
      diagnostics.push(
        svcError(
          'continuation_not_alone',
          `\`${s.kind}(${quote(s.handle.text)})\` must be the only statement of the program`,
          {
            span: spanAt(lines, s.span.start, s.span.end),
            hint: `send \`${whole}\` on its own as the whole program, and the other statements separately`,
          },
        ),
      );
    }
  }
  if (statements.length === 0 && diagnostics.length === 0) {
    diagnostics.push(
      svcError('empty_program', 'the program has no statement', {
        span: { line: 1, col: 1, endLine: 1, endCol: 1 },
        hint: 'write an expression such as e1(city="Berlin")[name]; blank lines and # comments do not count',
      }),
    );
  }
  if (diagnostics.length > 0) return { diagnostics: boundErrors(sortByPosition(diagnostics), hidden) };
  return { program: { statements: out, span: srcSpan(lines, 0, text.length) }, diagnostics: [] };
}

/** `program_too_large`, pointing at the first statement past the limit. */
function tooManyStatements(statements: LexedStatement[], lines: LineIndex): SvcError {
  const at = statements[MAX_PROGRAM_STATEMENTS]!.start;
  return programTooLarge(
    `the program has ${statements.length} statements; the limit is ${MAX_PROGRAM_STATEMENTS}`,
    spanAt(lines, at, at),
  );
}

function sortByPosition(ds: SvcError[]): SvcError[] {
  return ds
    .map((d, i) => ({ d, i }))
    .sort(
      (a, b) =>
        (a.d.span?.line ?? 0) - (b.d.span?.line ?? 0) || (a.d.span?.col ?? 0) - (b.d.span?.col ?? 0) || a.i - b.i,
    )
    .map((x) => x.d);
}

// ---- wording syntax errors -------------------------------------------------------------------

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

function shorten(s: string): string {
  return s.length > 30 ? s.slice(0, 27) + '...' : s;
}

function describeActual(tok: IToken | undefined, st: LexedStatement): string {
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
function describeExpected(types: TokenType[], inProjection: boolean): string {
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

/**
 * The diagnostic of a statement's syntax error. `quiet`: it will not be shown (enough errors come
 * before it), so it is counted with the position Chevrotain reported, without the costly wording.
 */
function syntaxError(e: IRecognitionException, st: LexedStatement, lines: LineIndex, quiet = false): SvcError {
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
  const hint = (h: string): SvcError => svcError('syntax_error', message, { span, hint: h });

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
