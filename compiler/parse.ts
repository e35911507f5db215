/**
 * The parsing facade: program text in, AST or diagnostics out. Lexes the whole text, parses each
 * top-level statement on its own (so one bad line does not hide errors on others), builds the
 * AST and applies the program-level rules (continuations stand alone, a program is not empty).
 * Syntax errors are worded in `syntax-error.ts`. Never throws: an unexpected internal failure
 * becomes one `internal_error` diagnostic.
 */
import { boundErrors, MAX_SHOWN_ERRORS } from '../common/bound-errors.js';
import { svcError, type SvcError } from '../common/errors.js';
import { quote } from '../common/quote.js';
import type { Program, Statement } from './ast.js';
import { buildStatement } from './ast-builder.js';
import { lex } from './lexer.js';
import { MAX_PROGRAM_STATEMENTS, programTooLarge } from './limits.js';
import { statementParser } from './parser.js';
import { LineIndex, spanAt, srcSpan } from './spans.js';
import type { LexedStatement } from './statement-splitter.js';
import { syntaxError } from './syntax-error.js';

/**
 * Parse a program. `program` is set only when there are no diagnostics. At most
 * `MAX_SHOWN_ERRORS` diagnostics come back, the first by position, then one `too_many_errors`
 * with the count of the rest; a program of more than `MAX_PROGRAM_STATEMENTS` statements gets
 * only `program_too_large`, before any statement is parsed.
 *
 * `lines`, when given, is the line index of `text` (compileProgram shares one with resolution).
 *
 * @example parseProgram('e1(city="Berlin")[name]').program?.statements[0]?.kind // 'expr'
 */
export function parseProgram(text: string, lines?: LineIndex): { program?: Program; diagnostics: SvcError[] } {
  try {
    return parse(text, lines ?? new LineIndex(text));
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

/** Lex, split, parse each statement, build the AST; every diagnostic is made here. */
function parse(text: string, lines: LineIndex): { program?: Program; diagnostics: SvcError[] } {
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
