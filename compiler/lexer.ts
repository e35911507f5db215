/**
 * Tokenizing program text: one shared Chevrotain lexer, then the statement splitter's post-pass
 * (`statement-splitter.ts`) that decodes literals, turns lexical problems into diagnostics, drops
 * newlines inside brackets and splits the token vector into top-level statements (at newlines and
 * `;`), so the parser can check each statement on its own and report the errors of every line.
 */
import { Lexer } from './chevrotain.js';
import { type LineIndex } from './spans.js';
import { StatementSplitter, type LexResult } from './statement-splitter.js';
import { allTokens, forgetLexedText } from './tokens.js';

export type { NumberPayload } from './decode-literal.js';
export { spanAt, tokenEnd } from './spans.js';
export { MAX_NESTING, type LexedStatement, type LexResult } from './statement-splitter.js';

const lexer = new Lexer(allTokens, {
  positionTracking: 'onlyOffset',
  lineTerminatorsPattern: /\n/g,
  lineTerminatorCharacters: ['\n'],
  ensureOptimizations: true,
});

/**
 * Tokenize `text` into statements. Never throws on user input; every lexical problem is a
 * diagnostic and marks its statement `bad`.
 */
export function lex(text: string, lines: LineIndex): LexResult {
  try {
    const { tokens, errors } = lexer.tokenize(text);
    return new StatementSplitter(text, lines, errors).run(tokens);
  } finally {
    forgetLexedText();
  }
}
