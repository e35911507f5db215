/**
 * The fast path of parsing: most programs are well formed, and for them this builds the AST
 * straight from the text, with no Chevrotain token, CST or visitor (those were two thirds of the
 * compile time of a long program). `fast-scan.ts` finds the tokens and statements; a
 * recursive-descent parser of the grammar (grammar.md, as in `parser.ts`) builds each statement
 * with the same nodes, spans and key order as `ast-builder.ts`. It takes only programs that parse
 * and build without a diagnostic: on anything else (a lexical problem, a syntax error, a reserved
 * binding name, a continuation, a bad literal, a malformed object key, too many statements) it
 * gives up and returns undefined, and `parse.ts` runs the Chevrotain path on the whole program,
 * which words every diagnostic. The grammar is LL(2) and unambiguous, so a program this parser
 * accepts is one the Chevrotain path accepts, with the same tree (`test/compiler/fast-parse.test.ts`
 * holds the two paths equal on generated programs).
 */
import type { Arg, Call, Chain, Name, NestedItem, Program, Projection, SrcSpan, Statement, Value } from './ast.js';
import { decodeNumber, decodeString } from './decode-literal.js';
import * as S from './fast-scan.js';
import { MAX_PROGRAM_STATEMENTS } from './limits.js';
import type { LineIndex } from './spans.js';
import { forgetLexedText } from './tokens.js';

/** Words that may not name a binding, and continuations (the Chevrotain path reports both). */
const RESERVED: ReadonlySet<string> = new Set(['page', 'wait', 'cancel', 'true', 'false', 'null']);
const CONTINUATIONS: ReadonlySet<string> = new Set(['page', 'wait', 'cancel']);
const KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

let text = '';
let lines: LineIndex;
/** The current token, and the end of the current statement's tokens. */
let pos = 0;
let stop = 0;

/** The AST of `text`, or undefined when the program is not one this path takes. */
export function fastProgram(source: string, index: LineIndex): Program | undefined {
  try {
    const count = S.scan(source);
    if (count <= 0 || count > MAX_PROGRAM_STATEMENTS) return undefined;
    text = source;
    lines = index;
    pos = 0;
    const statements: Statement[] = [];
    for (let i = 0; i < count; i++) {
      stop = S.stops[i]!;
      const s = statement();
      if (!s || pos !== stop) return undefined;
      statements.push(s);
    }
    return { statements, span: span(0, source.length) };
  } catch {
    // Never expected; the Chevrotain path then parses the program (and reports any failure).
    return undefined;
  } finally {
    text = '';
    lines = undefined as unknown as LineIndex;
    S.forgetScan();
    forgetLexedText();
  }
}

/** The kind of token `at` of the current statement (0 past its end). */
const kind = (at: number): number => (at < stop ? S.kinds[at]! : 0);
const image = (at: number): string => text.slice(S.starts[at], S.ends[at]);
const span = (start: number, end: number): SrcSpan => {
  const p = lines.pos(start);
  return { line: p.line, col: p.col, start, end };
};
const tokSpan = (at: number): SrcSpan => span(S.starts[at]!, S.ends[at]!);

function nameOf(at: number): Name {
  const t = image(at);
  const n: Name = { text: t, span: tokSpan(at) };
  // Only a qualified name holds a colon.
  const colon = S.kinds[at] === S.QUALIFIED ? t.indexOf(':') : -1;
  if (colon > 0) n.qualified = { api: t.slice(0, colon), entity: t.slice(colon + 1) };
  return n;
}

/** The value of string token `at` (as `decodeString` gives it), or undefined for a bad escape. */
function stringAt(at: number): string | undefined {
  const start = S.starts[at]!;
  const end = S.ends[at]!;
  // Without a backslash the value is the text between the quotes (decodeString's first case).
  const body = text.slice(start + 1, end - 1);
  if (body.indexOf('\\') < 0) return body;
  const v = decodeString(text.slice(start, end), start, lines);
  return typeof v === 'string' ? v : undefined;
}

/** statement = binding | chain; a continuation or a reserved binding name is left to the Chevrotain path. */
function statement(): Statement | undefined {
  const k = kind(pos);
  if (kind(pos + 1) === S.EQUALS && (k === S.IDENT || k === S.TRUE || k === S.FALSE || k === S.NULL)) {
    const name = nameOf(pos);
    pos += 2;
    const expr = chain();
    if (!expr || RESERVED.has(name.text) || CONTINUATIONS.has(expr.head.name.text)) return undefined;
    return { kind: 'binding', name, expr, span: span(name.span.start, expr.span.end) };
  }
  const expr = chain();
  if (!expr || CONTINUATIONS.has(expr.head.name.text)) return undefined;
  return { kind: 'expr', expr, span: expr.span };
}

/** chain = call { "." call } [ projection ] */
function chain(): Chain | undefined {
  const head = call();
  if (!head) return undefined;
  const members: Call[] = [];
  while (kind(pos) === S.DOT) {
    pos++;
    const m = call();
    if (!m) return undefined;
    members.push(m);
  }
  let projection: Projection | undefined;
  if (kind(pos) === S.LBRACKET) {
    projection = projectionOf();
    if (!projection) return undefined;
  }
  const end = projection ? projection.span.end : (members[members.length - 1] ?? head).span.end;
  const c: Chain = { kind: 'chain', head, members, span: span(head.span.start, end) };
  if (projection) c.projection = projection;
  return c;
}

/** call = ( Identifier | Qualified ) [ args ] */
function call(): Call | undefined {
  const k = kind(pos);
  if (k !== S.IDENT && k !== S.QUALIFIED) return undefined;
  const name = nameOf(pos++);
  if (kind(pos) !== S.LPAREN) return { name, span: name.span };
  const a = args();
  if (!a) return undefined;
  return { name, args: a.args, span: span(name.span.start, a.end) };
}

/** args = "(" [ arg { "," arg } [ "," ] ] ")", and the offset just past `)`. */
function args(): { args: Arg[]; end: number } | undefined {
  const out = items(arg, S.RPAREN, true);
  return out && { args: out, end: S.ends[pos++]! };
}

/** arg = Identifier "=" value | value */
function arg(): Arg | undefined {
  if (kind(pos) === S.IDENT && kind(pos + 1) === S.EQUALS) {
    const at = pos;
    pos += 2;
    const value = valueOf();
    if (!value) return undefined;
    const name = nameOf(at);
    return { name, value, span: span(name.span.start, value.span.end) };
  }
  const value = valueOf();
  return value && { value, span: value.span };
}

/** value = String | Heredoc | Number | true | false | null | list | object | ref */
function valueOf(): Value | undefined {
  const k = kind(pos);
  if (k === S.LBRACKET) return list();
  if (k === S.LBRACE) return object();
  if (k === S.IDENT) return ref();
  const at = pos++;
  if (k === S.STRING) {
    const v = stringAt(at);
    return v === undefined ? undefined : { kind: 'string', value: v, heredoc: false, span: tokSpan(at) };
  }
  if (k === S.HEREDOC) return { kind: 'string', value: S.heredocs[at]!, heredoc: true, span: tokSpan(at) };
  if (k === S.NUMBER) {
    const n = decodeNumber(image(at), S.starts[at]!, lines);
    return typeof n === 'function' ? undefined : { kind: n.kind, value: n.value, span: tokSpan(at) };
  }
  if (k === S.NULL) return { kind: 'null', span: tokSpan(at) };
  if (k === S.TRUE || k === S.FALSE) return { kind: 'boolean', value: k === S.TRUE, span: tokSpan(at) };
  return undefined;
}

/** ref = Identifier [ "." Identifier ] */
function ref(): Value | undefined {
  const binding = nameOf(pos++);
  if (kind(pos) !== S.DOT) return { kind: 'ref', binding, span: binding.span };
  if (kind(pos + 1) !== S.IDENT) return undefined;
  const f = pos + 1;
  pos += 2;
  return { kind: 'ref', binding, field: nameOf(f), span: span(binding.span.start, S.ends[f]!) };
}

/**
 * The items between an opening bracket (at `pos`) and `close`, left at `pos`: `item` parses one;
 * a trailing comma is allowed, an empty list only when `empty` says so. Undefined on a syntax error.
 */
function items<T>(item: () => T | undefined, close: number, empty: boolean): T[] | undefined {
  pos++;
  const out: T[] = [];
  if (kind(pos) === close) return empty ? out : undefined;
  for (;;) {
    const x = item();
    if (x === undefined) return undefined;
    out.push(x);
    if (kind(pos) !== S.COMMA) break;
    pos++;
    if (kind(pos) === close) break;
  }
  return kind(pos) === close ? out : undefined;
}

/** list = "[" [ value { "," value } [ "," ] ] "]" */
function list(): Value | undefined {
  const open = S.starts[pos]!;
  const values = items(valueOf, S.RBRACKET, true);
  return values && { kind: 'list', items: values, span: span(open, S.ends[pos++]!) };
}

/** object = "{" [ entry { "," entry } [ "," ] ] "}" */
function object(): Value | undefined {
  const open = S.starts[pos]!;
  const entries = items(entry, S.RBRACE, true);
  return entries && { kind: 'object', entries, span: span(open, S.ends[pos++]!) };
}

/** entry = ( Identifier | String ) ":" value | Qualified [ "." Identifier ] */
function entry(): { key: Name; value: Value } | undefined {
  const k = kind(pos);
  const at = pos;
  if (k === S.IDENT || k === S.STRING) {
    if (kind(pos + 1) !== S.COLON) return undefined;
    pos += 2;
    const t = k === S.STRING ? stringAt(at) : image(at);
    if (t === undefined) return undefined;
    const key: Name = { text: t, span: tokSpan(at) };
    const value = valueOf();
    return value && { key, value };
  }
  if (k !== S.QUALIFIED) return undefined;
  pos++;
  // `{key:name}` or `{key:name.field}` without a space lexes as one qualified token.
  const q = image(at);
  const start = S.starts[at]!;
  const colon = q.indexOf(':');
  const keyText = q.slice(0, colon);
  if (!KEY.test(keyText)) return undefined;
  const key: Name = { text: keyText, span: span(start, start + colon) };
  const word = q.slice(colon + 1);
  const wordSpan = span(start + colon + 1, S.ends[at]!);
  let field = -1;
  if (kind(pos) === S.DOT) {
    if (kind(pos + 1) !== S.IDENT) return undefined;
    field = pos + 1;
    pos += 2;
  }
  if (field < 0 && (word === 'true' || word === 'false'))
    return { key, value: { kind: 'boolean', value: word === 'true', span: wordSpan } };
  if (field < 0 && word === 'null') return { key, value: { kind: 'null', span: wordSpan } };
  const binding: Name = { text: word, span: wordSpan };
  if (field < 0) return { key, value: { kind: 'ref', binding, span: wordSpan } };
  const fieldSpan = span(start + colon + 1, S.ends[field]!);
  return { key, value: { kind: 'ref', binding, field: nameOf(field), span: fieldSpan } };
}

/** projection = "[" item { "," item } [ "," ] "]" */
function projectionOf(): Projection | undefined {
  const open = S.starts[pos]!;
  const list = items(item, S.RBRACKET, false);
  if (!list) return undefined;
  const fields: Name[] = [];
  let nested: NestedItem[] | undefined;
  for (const i of list) {
    fields.push(i.name);
    if (i.args || i.projection) (nested ??= []).push(i);
  }
  const p: Projection = { fields, span: span(open, S.ends[pos++]!) };
  if (nested) p.nested = nested;
  return p;
}

/** item = Identifier [ args ] [ projection ]: a field, or a relation to nest */
function item(): NestedItem | undefined {
  if (kind(pos) !== S.IDENT) return undefined;
  const name = nameOf(pos++);
  const it: NestedItem = { name, span: name.span };
  let a: { args: Arg[]; end: number } | undefined;
  if (kind(pos) === S.LPAREN) {
    a = args();
    if (!a) return undefined;
    it.args = a.args;
  }
  if (kind(pos) === S.LBRACKET) {
    const p = projectionOf();
    if (!p) return undefined;
    it.projection = p;
  }
  const end = it.projection?.span.end ?? a?.end ?? name.span.end;
  it.span = span(name.span.start, end);
  return it;
}
