/**
 * The program language for CodeMirror: a StreamLanguage over the tokenizer of `lang/tokenize.ts`
 * (kept in step with the compiler's tokens by test/web/tokens.test.ts). Highlighting uses
 * `classHighlighter` (`tok-*` classes styled in styles/program.css), so no colours live in script.
 */
import { StreamLanguage, syntaxHighlighting, type StringStream } from '@codemirror/language';
import { classHighlighter } from '@lezer/highlight';
import { copyState, readToken, startState, type LexState, type Token } from '../lang/tokenize.js';

/** The highlighting tag of a token (names of @lezer/highlight `tags`). */
export function tagOf(tok: Token, text: string): string | null {
  switch (tok.cls) {
    case 'skip':
      return null;
    case 'comment':
      return 'comment';
    case 'punctuation':
      return 'punctuation';
    case 'bracket':
      return 'bracket';
    case 'heredoc':
      return 'string.special';
    case 'string':
      return 'string';
    case 'number':
      return 'number';
    case 'keyword':
      return text === 'null' ? 'atom' : 'bool';
    case 'qualified':
      return 'typeName';
    case 'invalid':
      return 'invalid';
    case 'name':
      return nameTag(tok, text);
  }
}

function nameTag(tok: Token, text: string): string {
  switch (tok.role) {
    case 'symbol':
      return text.startsWith('e') ? 'typeName' : text.startsWith('m') ? 'macroName' : 'labelName';
    case 'handle':
      return 'atom';
    case 'continuation':
      return 'keyword';
    case 'argument':
      return 'propertyName';
    default:
      return 'variableName';
  }
}

const parser = StreamLanguage.define<LexState>({
  name: 'svc',
  startState,
  copyState,
  token(stream: StringStream, state: LexState): string | null {
    const start = stream.pos;
    const tok = readToken(stream, state);
    if (stream.pos === start) stream.next();
    return tagOf(tok, stream.current());
  },
  languageData: { commentTokens: { line: '#' }, closeBrackets: { brackets: ['(', '[', '{', '"'] } },
});

/** The language and its highlighting. */
export const svcLanguage = [parser, syntaxHighlighting(classHighlighter)];
