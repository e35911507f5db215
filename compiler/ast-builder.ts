/**
 * The CST visitor that turns one parsed statement into the AST of `ast.ts`, with spans. It also
 * owns the few syntax rules the grammar leaves open: reserved binding names, the shape of
 * `page` / `wait` / `cancel` continuations and their handle forms, and object keys written as
 * `{key:name}` (which lex as one qualified token).
 */
import type { CstNode, IToken } from 'chevrotain';
import { svcError, type ErrorCode, type SvcError } from '../common/errors.js';
import { quote } from '../common/quote.js';
import type { Arg, Call, Chain, ContinuationStmt, Name, Projection, SrcSpan, Statement, Value } from './ast.js';
import type { NumberPayload } from './lexer.js';
import { spanAt, tokenEnd } from './lexer.js';
import { statementParser } from './parser.js';
import type { LineIndex } from './spans.js';
import type { HeredocPayload } from './tokens.js';

/** What the visitor threads through a statement: the line index and the diagnostics it adds. */
export interface BuildContext {
  lines: LineIndex;
  diagnostics: SvcError[];
}

interface StatementCtx {
  binding?: CstNode[];
  chain?: CstNode[];
}
interface BindingCtx {
  Identifier?: IToken[];
  True?: IToken[];
  False?: IToken[];
  Null?: IToken[];
  chain: CstNode[];
}
interface ChainCtx {
  call: CstNode[];
  projection?: CstNode[];
}
interface CallCtx {
  Identifier?: IToken[];
  Qualified?: IToken[];
  LParen?: IToken[];
  RParen?: IToken[];
  arg?: CstNode[];
}
interface ArgCtx {
  Identifier?: IToken[];
  value: CstNode[];
}
interface ValueCtx {
  StringLit?: IToken[];
  Heredoc?: IToken[];
  NumberLit?: IToken[];
  True?: IToken[];
  False?: IToken[];
  Null?: IToken[];
  list?: CstNode[];
  object?: CstNode[];
  ref?: CstNode[];
}
interface ListCtx {
  LBracket: IToken[];
  RBracket: IToken[];
  value?: CstNode[];
}
interface ObjectCtx {
  LBrace: IToken[];
  RBrace: IToken[];
  entry?: CstNode[];
}
interface EntryCtx {
  Identifier?: IToken[];
  StringLit?: IToken[];
  value?: CstNode[];
  Qualified?: IToken[];
}
interface RefCtx {
  Identifier: IToken[];
}
interface ProjectionCtx {
  LBracket: IToken[];
  RBracket: IToken[];
  Identifier: IToken[];
}

/** Words that may not name a binding. */
export const RESERVED_BINDING_NAMES: ReadonlySet<string> = new Set(['page', 'wait', 'cancel', 'true', 'false', 'null']);
const CONTINUATIONS: ReadonlySet<string> = new Set(['page', 'wait', 'cancel']);
const PAGE_HANDLE = /^(?:pg\d+|l_[A-Za-z0-9]+_pg\d+)$/;
const OP_HANDLE = /^o\d+$/;
const KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

const first = <T>(xs: T[] | undefined): T => xs![0]!;

export function srcSpan(lines: LineIndex, start: number, end: number): SrcSpan {
  const p = lines.pos(start);
  return { line: p.line, col: p.col, start, end };
}

const BaseVisitor = statementParser.getBaseCstVisitorConstructor<BuildContext, unknown>();

class AstBuilder extends BaseVisitor {
  constructor() {
    super();
    this.validateVisitor();
  }

  private span(c: BuildContext, start: number, end: number): SrcSpan {
    return srcSpan(c.lines, start, end);
  }

  private tokSpan(c: BuildContext, t: IToken): SrcSpan {
    return srcSpan(c.lines, t.startOffset, tokenEnd(t));
  }

  private fail(c: BuildContext, code: ErrorCode, at: SrcSpan, message: string, hint: string): undefined {
    c.diagnostics.push(svcError(code, message, { span: spanAt(c.lines, at.start, at.end), hint }));
    return undefined;
  }

  private name(c: BuildContext, t: IToken): Name {
    const n: Name = { text: t.image, span: this.tokSpan(c, t) };
    const colon = t.image.indexOf(':');
    if (colon > 0) n.qualified = { api: t.image.slice(0, colon), entity: t.image.slice(colon + 1) };
    return n;
  }

  statement(ctx: StatementCtx, c: BuildContext): Statement | undefined {
    if (ctx.binding) return this.visit(ctx.binding, c) as Statement | undefined;
    const expr = this.visit(first(ctx.chain), c) as Chain;
    if (CONTINUATIONS.has(expr.head.name.text)) return this.continuation(expr, c);
    return { kind: 'expr', expr, span: expr.span };
  }

  binding(ctx: BindingCtx, c: BuildContext): Statement | undefined {
    const tok = first(ctx.Identifier ?? ctx.True ?? ctx.False ?? ctx.Null);
    const name = this.name(c, tok);
    const expr = this.visit(first(ctx.chain), c) as Chain;
    if (RESERVED_BINDING_NAMES.has(name.text)) {
      return this.fail(
        c,
        'syntax_error',
        name.span,
        `\`${name.text}\` is reserved and cannot name a binding`,
        'pick another name, e.g. `b = ...`; page, wait, cancel, true, false and null are reserved',
      );
    }
    const head = expr.head.name.text;
    if (CONTINUATIONS.has(head)) {
      return this.fail(
        c,
        'syntax_error',
        expr.span,
        `\`${head}(...)\` is a continuation and cannot be bound to a name`,
        `send \`${head}(...)\` on its own as the whole program`,
      );
    }
    return { kind: 'binding', name, expr, span: this.span(c, name.span.start, expr.span.end) };
  }

  private continuation(expr: Chain, c: BuildContext): ContinuationStmt | undefined {
    const kind = expr.head.name.text as ContinuationStmt['kind'];
    const form = kind === 'page' ? 'page(pg3)[name, city]' : `${kind}(o3)`;
    const member = expr.members[0];
    if (member)
      return this.fail(
        c,
        'syntax_error',
        member.span,
        `\`${kind}(...)\` takes no \`.${quote(member.name.text)}\``,
        `write ${form} on its own`,
      );
    if (kind !== 'page' && expr.projection) {
      return this.fail(
        c,
        'syntax_error',
        expr.projection.span,
        `\`${kind}(...)\` takes no projection`,
        `write ${form}; only page(...) takes a [field, ...] projection`,
      );
    }
    const args = expr.head.args;
    const arg = args?.length === 1 ? args[0] : undefined;
    if (!arg || arg.name) {
      return this.fail(
        c,
        'syntax_error',
        expr.head.span,
        `\`${kind}\` takes exactly one handle in parentheses`,
        `write ${form}`,
      );
    }
    const v = arg.value;
    const handleHint =
      kind === 'page'
        ? 'a page handle is pg<N> on HTTP (e.g. page(pg3)[name]) or l_<token>_pg<N> on MCP, as printed in a "more pages" line'
        : `an operation handle is o<N>, as printed in the accept line, e.g. ${kind}(o3)`;
    if (v.kind !== 'ref' || v.field) {
      const example = kind === 'page' ? 'pg3' : 'o3';
      const quoted = v.kind === 'string' ? '; write it without quotes' : '';
      return this.fail(
        c,
        'bad_handle',
        v.span,
        `\`${kind}\` takes a bare handle such as ${example}`,
        handleHint + quoted,
      );
    }
    const handle = v.binding;
    if (!(kind === 'page' ? PAGE_HANDLE : OP_HANDLE).test(handle.text)) {
      return this.fail(
        c,
        'bad_handle',
        handle.span,
        `\`${quote(handle.text)}\` is not ${kind === 'page' ? 'a page' : 'an operation'} handle`,
        handleHint,
      );
    }
    const st: ContinuationStmt = { kind, handle, span: expr.span };
    if (expr.projection) st.projection = expr.projection;
    return st;
  }

  chain(ctx: ChainCtx, c: BuildContext): Chain {
    const calls = ctx.call.map((n) => this.visit(n, c) as Call);
    const head = calls[0]!;
    const members = calls.slice(1);
    const projection = ctx.projection ? (this.visit(ctx.projection, c) as Projection) : undefined;
    const end = projection ? projection.span.end : (members[members.length - 1] ?? head).span.end;
    const chain: Chain = { kind: 'chain', head, members, span: this.span(c, head.span.start, end) };
    if (projection) chain.projection = projection;
    return chain;
  }

  call(ctx: CallCtx, c: BuildContext): Call {
    const name = this.name(c, first(ctx.Identifier ?? ctx.Qualified));
    if (!ctx.RParen) return { name, span: name.span };
    const args = (ctx.arg ?? []).map((n) => this.visit(n, c) as Arg);
    return { name, args, span: this.span(c, name.span.start, tokenEnd(first(ctx.RParen))) };
  }

  arg(ctx: ArgCtx, c: BuildContext): Arg {
    const value = this.visit(ctx.value, c) as Value;
    if (!ctx.Identifier) return { value, span: value.span };
    const name = this.name(c, first(ctx.Identifier));
    return { name, value, span: this.span(c, name.span.start, value.span.end) };
  }

  value(ctx: ValueCtx, c: BuildContext): Value {
    const node = ctx.list ?? ctx.object ?? ctx.ref;
    if (node) return this.visit(node, c) as Value;
    const t = first(ctx.StringLit ?? ctx.Heredoc ?? ctx.NumberLit ?? ctx.True ?? ctx.False ?? ctx.Null);
    const span = this.tokSpan(c, t);
    if (ctx.StringLit) return { kind: 'string', value: t.payload as string, heredoc: false, span };
    if (ctx.Heredoc)
      return { kind: 'string', value: (t.payload as Extract<HeredocPayload, { ok: true }>).value, heredoc: true, span };
    if (ctx.NumberLit) {
      const n = t.payload as NumberPayload;
      return { kind: n.kind, value: n.value, span };
    }
    if (ctx.Null) return { kind: 'null', span };
    return { kind: 'boolean', value: !!ctx.True, span };
  }

  list(ctx: ListCtx, c: BuildContext): Value {
    const items = (ctx.value ?? []).map((n) => this.visit(n, c) as Value);
    return { kind: 'list', items, span: this.span(c, first(ctx.LBracket).startOffset, tokenEnd(first(ctx.RBracket))) };
  }

  object(ctx: ObjectCtx, c: BuildContext): Value {
    const entries: Array<{ key: Name; value: Value }> = [];
    for (const n of ctx.entry ?? []) {
      const e = this.visit(n, c) as { key: Name; value: Value } | undefined;
      if (e) entries.push(e);
    }
    return { kind: 'object', entries, span: this.span(c, first(ctx.LBrace).startOffset, tokenEnd(first(ctx.RBrace))) };
  }

  entry(ctx: EntryCtx, c: BuildContext): { key: Name; value: Value } | undefined {
    if (!ctx.Qualified) {
      const k = first(ctx.Identifier ?? ctx.StringLit);
      const key: Name = { text: ctx.StringLit ? (k.payload as string) : k.image, span: this.tokSpan(c, k) };
      return { key, value: this.visit(ctx.value!, c) as Value };
    }
    // `{key:name}` or `{key:name.field}` without a space lexes as one qualified token.
    const q = first(ctx.Qualified);
    const colon = q.image.indexOf(':');
    const keyText = q.image.slice(0, colon);
    const key: Name = { text: keyText, span: this.span(c, q.startOffset, q.startOffset + colon) };
    if (!KEY.test(keyText)) {
      return this.fail(
        c,
        'syntax_error',
        key.span,
        `\`${quote(keyText)}\` is not a valid object key`,
        `keys are names or strings: write {"${quote(keyText)}": ...}`,
      );
    }
    const vStart = q.startOffset + colon + 1;
    const word = q.image.slice(colon + 1);
    const wordSpan = this.span(c, vStart, tokenEnd(q));
    const field = ctx.Identifier ? first(ctx.Identifier) : undefined;
    if (!field && (word === 'true' || word === 'false'))
      return { key, value: { kind: 'boolean', value: word === 'true', span: wordSpan } };
    if (!field && word === 'null') return { key, value: { kind: 'null', span: wordSpan } };
    const binding: Name = { text: word, span: wordSpan };
    if (!field) return { key, value: { kind: 'ref', binding, span: wordSpan } };
    return {
      key,
      value: { kind: 'ref', binding, field: this.name(c, field), span: this.span(c, vStart, tokenEnd(field)) },
    };
  }

  ref(ctx: RefCtx, c: BuildContext): Value {
    const ids = ctx.Identifier;
    const binding = this.name(c, ids[0]!);
    const f = ids[1];
    if (!f) return { kind: 'ref', binding, span: binding.span };
    return { kind: 'ref', binding, field: this.name(c, f), span: this.span(c, binding.span.start, tokenEnd(f)) };
  }

  projection(ctx: ProjectionCtx, c: BuildContext): Projection {
    return {
      fields: ctx.Identifier.map((t) => this.name(c, t)),
      span: this.span(c, first(ctx.LBracket).startOffset, tokenEnd(first(ctx.RBracket))),
    };
  }
}

const builder = new AstBuilder();

/** The AST of one parsed statement; problems are added to `c.diagnostics` (then the result may be undefined). */
export function buildStatement(cst: CstNode, c: BuildContext): Statement | undefined {
  return builder.visit(cst, c) as Statement | undefined;
}
