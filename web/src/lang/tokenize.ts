/**
 * A line-at-a-time tokenizer of the program language, written against the small part of
 * CodeMirror's `StringStream` it needs (so it runs, and is tested, without the editor). It follows
 * `compiler/tokens.ts` token for token (see `tokens.ts` here); an open heredoc (`<<EOT` ... `EOT`)
 * carries over lines in the state.
 */
import {
  CONTINUATIONS,
  HANDLE,
  HEREDOC_TAG,
  KEYWORDS,
  PATTERNS,
  QUALIFIED,
  SYMBOL,
  type TokenClass,
} from './tokens.js';

/** What the tokenizer reads: CodeMirror's StringStream satisfies it. */
export interface Stream {
  pos: number;
  string: string;
  eol(): boolean;
  peek(): string | undefined;
  next(): string | void;
  match(pattern: string | RegExp, consume?: boolean): unknown;
  skipToEnd(): void;
}

/** Carried from one line to the next: the tag of an open heredoc. */
export interface LexState {
  heredoc: string | null;
}

export const startState = (): LexState => ({ heredoc: null });
export const copyState = (s: LexState): LexState => ({ ...s });

/** A token's class and, for names, what the name is (for highlighting only). */
export interface Token {
  cls: TokenClass;
  /** For `name`: a symbol (`e1`), a handle (`pg2`), a continuation head, or an argument name before `=`. */
  role?: 'symbol' | 'handle' | 'continuation' | 'argument';
}

const sticky = (re: RegExp) => new RegExp('^(?:' + re.source + ')');
const NAME = sticky(PATTERNS.Identifier);
const NUMBER = sticky(PATTERNS.NumberLit);
const STRING = sticky(PATTERNS.StringLit);
const UNTERMINATED = sticky(PATTERNS.UnterminatedString);
const SINGLE = sticky(PATTERNS.SingleQuoted);
const BLANK = sticky(PATTERNS.WhiteSpace);
const QUALIFIED_AT = sticky(QUALIFIED);
const TAG = sticky(HEREDOC_TAG);

/** True when `line` closes a heredoc of `tag` (grammar.md "Heredocs", rule 3); the tag's end offset. */
export function closingAt(line: string, tag: string): number {
  const lead = line.length - line.trimStart().length;
  if (!line.startsWith(tag, lead)) return -1;
  const after = lead + tag.length;
  const c = line[after];
  if (c === ')' || c === ',' || c === '}') return after;
  return /^[ \t\r]*$/.test(line.slice(after)) ? after : -1;
}

/** Reads one token from `stream` (which is past any blank the caller skipped). */
export function readToken(stream: Stream, state: LexState): Token {
  if (state.heredoc !== null) return heredocBody(stream, state);
  if (stream.match(BLANK)) return { cls: 'skip' };
  const c = stream.peek();
  if (c === '#') {
    stream.skipToEnd();
    return { cls: 'comment' };
  }
  if (c === '<' && stream.match('<<')) return heredocOpener(stream, state);
  if (c === '"') return quoted(stream);
  if (c === "'" && stream.match(SINGLE)) return { cls: 'invalid' };
  if (stream.match(NUMBER)) return { cls: 'number' };
  if (stream.match(QUALIFIED_AT)) return { cls: 'qualified' };
  const m = stream.match(NAME) as RegExpMatchArray | null;
  if (m) return nameToken(m[0], stream);
  const ch = stream.next() ?? '';
  if ('()[]{}'.includes(ch)) return { cls: 'bracket' };
  if (';=,.:'.includes(ch)) return { cls: 'punctuation' };
  return { cls: 'invalid' };
}

function nameToken(word: string, stream: Stream): Token {
  if (KEYWORDS.includes(word)) return { cls: 'keyword' };
  if (SYMBOL.test(word)) return { cls: 'name', role: 'symbol' };
  if (HANDLE.test(word)) return { cls: 'name', role: 'handle' };
  if (CONTINUATIONS.includes(word) && stream.match(/^\s*\(/, false)) return { cls: 'name', role: 'continuation' };
  if (stream.match(/^[ \t]*=/, false)) return { cls: 'name', role: 'argument' };
  return { cls: 'name' };
}

/** A string; the removed `"""` opener (through its closing `"""` on the same line) is an error. */
function quoted(stream: Stream): Token {
  if (stream.match('"""')) {
    stream.match(/^.*?"""/);
    return { cls: 'invalid' };
  }
  if (stream.match(STRING)) return { cls: 'string' };
  stream.match(UNTERMINATED);
  return { cls: 'invalid' };
}

/** After `<<`: a tag at the end of the line opens a heredoc; `<<<` is the removed legacy opener. */
function heredocOpener(stream: Stream, state: LexState): Token {
  stream.match('<');
  const tag = stream.match(TAG) as RegExpMatchArray | null;
  if (tag && stream.eol()) state.heredoc = tag[0];
  return { cls: 'heredoc' };
}

/** A line inside a heredoc: the body, or the closing tag (what follows it is program text again). */
function heredocBody(stream: Stream, state: LexState): Token {
  const tag = state.heredoc!;
  const end = stream.pos === 0 ? closingAt(stream.string, tag) : -1;
  if (end < 0) {
    stream.skipToEnd();
    return { cls: 'heredoc' };
  }
  stream.pos = end;
  state.heredoc = null;
  return { cls: 'heredoc' };
}

/** A token with its offsets in the whole text. */
export interface Span {
  from: number;
  to: number;
  cls: TokenClass;
  role?: Token['role'];
}

/**
 * Tokenizes a whole text line by line, as the editor does, joining the pieces of one heredoc (its
 * opener, body lines and closing tag) into one span: the spans the compiler's lexer makes.
 */
export function tokenizeText(text: string): Span[] {
  const out: Span[] = [];
  const state = startState();
  let offset = 0;
  for (const line of text.split('\n')) {
    const stream = new LineStream(line);
    while (!stream.eol()) {
      const start = stream.pos;
      const inHeredoc = state.heredoc !== null;
      const tok = readToken(stream, state);
      if (stream.pos === start) stream.next();
      const last = out[out.length - 1];
      if (inHeredoc && last?.cls === 'heredoc') last.to = offset + stream.pos;
      else if (tok.cls !== 'skip')
        out.push({
          from: offset + start,
          to: offset + stream.pos,
          cls: tok.cls,
          ...(tok.role ? { role: tok.role } : {}),
        });
    }
    offset += line.length + 1;
  }
  const last = out[out.length - 1];
  // An unterminated heredoc runs to the end of the text.
  if (state.heredoc !== null && last?.cls === 'heredoc') last.to = text.length;
  return out;
}

/** A StringStream for one line, for use outside the editor. */
export class LineStream implements Stream {
  pos = 0;
  constructor(readonly string: string) {}
  eol(): boolean {
    return this.pos >= this.string.length;
  }
  peek(): string | undefined {
    return this.string.charAt(this.pos) || undefined;
  }
  next(): string | void {
    if (this.pos < this.string.length) return this.string.charAt(this.pos++);
  }
  match(pattern: string | RegExp, consume = true): unknown {
    if (typeof pattern === 'string') {
      if (!this.string.startsWith(pattern, this.pos)) return null;
      if (consume) this.pos += pattern.length;
      return true;
    }
    const m = pattern.exec(this.string.slice(this.pos));
    if (!m || m.index > 0) return null;
    if (consume) this.pos += m[0].length;
    return m;
  }
  skipToEnd(): void {
    this.pos = this.string.length;
  }
}
