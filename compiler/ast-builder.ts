/**
 * The CST visitor that turns one parsed statement into the AST of `ast.ts`, with spans; values
 * are built by the `ValueBuilder` it extends. It also owns the few syntax rules the grammar
 * leaves open: reserved binding names and the shape of `page` / `wait` / `cancel`
 * continuations and their handle forms.
 */
import type { CstNode, IToken } from 'chevrotain';
import { quote } from '../common/quote.js';
import type { Arg, Call, Chain, ContinuationStmt, NestedItem, Projection, Statement, Value } from './ast.js';
import { tokenEnd } from './spans.js';
import { first, ValueBuilder, type BuildContext } from './value-builder.js';

export { srcSpan } from './spans.js';
export type { BuildContext } from './value-builder.js';

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
  args?: CstNode[];
}
interface ArgsCtx {
  RParen: IToken[];
  arg?: CstNode[];
}
interface ArgCtx {
  Identifier?: IToken[];
  value: CstNode[];
}
interface ProjectionCtx {
  LBracket: IToken[];
  RBracket: IToken[];
  item: CstNode[];
}
interface ItemCtx {
  Identifier: IToken[];
  args?: CstNode[];
  projection?: CstNode[];
}

/** Words that may not name a binding. */
export const RESERVED_BINDING_NAMES: ReadonlySet<string> = new Set(['page', 'wait', 'cancel', 'true', 'false', 'null']);
const CONTINUATIONS: ReadonlySet<string> = new Set(['page', 'wait', 'cancel']);
const PAGE_HANDLE = /^(?:pg\d+|l_[A-Za-z0-9]+_pg\d+)$/;
const OP_HANDLE = /^o\d+$/;
class AstBuilder extends ValueBuilder {
  constructor() {
    super();
    this.validateVisitor();
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
    const form = continuationForm(kind, expr);
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
      const bare = v.kind === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(v.value) ? `: ${kind}(${v.value})` : '';
      const quoted = v.kind === 'string' ? `; write it without quotes${bare}` : '';
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
        handleHint + otherHandle(kind, handle.text),
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
    if (!ctx.args) return { name, span: name.span };
    const { args, end } = this.visit(ctx.args, c) as { args: Arg[]; end: number };
    return { name, args, span: this.span(c, name.span.start, end) };
  }

  /** The arguments between the parentheses, and the offset just past `)`. */
  args(ctx: ArgsCtx, c: BuildContext): { args: Arg[]; end: number } {
    return { args: (ctx.arg ?? []).map((n) => this.visit(n, c) as Arg), end: tokenEnd(first(ctx.RParen)) };
  }

  arg(ctx: ArgCtx, c: BuildContext): Arg {
    const value = this.visit(ctx.value, c) as Value;
    if (!ctx.Identifier) return { value, span: value.span };
    const name = this.name(c, first(ctx.Identifier));
    return { name, value, span: this.span(c, name.span.start, value.span.end) };
  }

  projection(ctx: ProjectionCtx, c: BuildContext): Projection {
    const items = ctx.item.map((n) => this.visit(n, c) as NestedItem);
    const p: Projection = {
      fields: items.map((i) => i.name),
      span: this.span(c, first(ctx.LBracket).startOffset, tokenEnd(first(ctx.RBracket))),
    };
    const nested = items.filter((i) => i.args || i.projection);
    if (nested.length) p.nested = nested;
    return p;
  }

  item(ctx: ItemCtx, c: BuildContext): NestedItem {
    const name = this.name(c, first(ctx.Identifier));
    const item: NestedItem = { name, span: name.span };
    const a = ctx.args ? (this.visit(ctx.args, c) as { args: Arg[]; end: number }) : undefined;
    if (a) item.args = a.args;
    if (ctx.projection) item.projection = this.visit(ctx.projection, c) as Projection;
    const end = item.projection?.span.end ?? a?.end ?? name.span.end;
    item.span = this.span(c, name.span.start, end);
    return item;
  }
}

/** The form to write for a continuation: with its own handle when that is one (`page(pg1)[name, city]`). */
function continuationForm(kind: ContinuationStmt['kind'], expr: Chain): string {
  const v = expr.head.args?.length === 1 ? expr.head.args[0]!.value : undefined;
  const h = v?.kind === 'ref' && !v.field ? v.binding.text : '';
  if (kind === 'page') return PAGE_HANDLE.test(h) ? `page(${h}) or page(${h})[name, city]` : 'page(pg3)[name, city]';
  return OP_HANDLE.test(h) ? `${kind}(${h})` : `${kind}(o3)`;
}

/** `page(o1)`, `wait(pg1)`: the handle is of the other kind; name the continuation that takes it. */
function otherHandle(kind: ContinuationStmt['kind'], h: string): string {
  if (kind === 'page' && OP_HANDLE.test(h)) return `; \`${h}\` is an operation handle: poll it with wait(${h})`;
  if (kind !== 'page' && PAGE_HANDLE.test(h)) return `; \`${h}\` is a page handle: fetch the next page with page(${h})`;
  return '';
}

const builder = new AstBuilder();

/** The AST of one parsed statement; problems are added to `c.diagnostics` (then the result may be undefined). */
export function buildStatement(cst: CstNode, c: BuildContext): Statement | undefined {
  return builder.visit(cst, c) as Statement | undefined;
}
