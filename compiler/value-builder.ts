/**
 * The value half of the CST visitor (`ast-builder.ts` adds the statements): literals, lists,
 * objects and binding references become AST values, including object keys written as
 * `{key:name}` (which lex as one qualified token). Also the span and diagnostic helpers both
 * halves use.
 */
import type { CstNode, IToken } from 'chevrotain';
import { svcError, type ErrorCode, type SvcError } from '../common/errors.js';
import { quote } from '../common/quote.js';
import type { Name, SrcSpan, Value } from './ast.js';
import type { NumberPayload } from './decode-literal.js';
import { statementParser } from './parser.js';
import { spanAt, srcSpan, tokenEnd, type LineIndex } from './spans.js';
import type { HeredocPayload } from './tokens.js';

/** What the visitor threads through a statement: the line index and the diagnostics it adds. */
export interface BuildContext {
  lines: LineIndex;
  diagnostics: SvcError[];
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

const KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The first token or node of a CST children list the grammar guarantees. */
export const first = <T>(xs: T[] | undefined): T => xs![0]!;

const BaseVisitor = statementParser.getBaseCstVisitorConstructor<BuildContext, unknown>();

/** Builds AST values from CST nodes; `AstBuilder` extends it with the statement rules. */
export abstract class ValueBuilder extends BaseVisitor {
  protected span(c: BuildContext, start: number, end: number): SrcSpan {
    return srcSpan(c.lines, start, end);
  }

  protected tokSpan(c: BuildContext, t: IToken): SrcSpan {
    return srcSpan(c.lines, t.startOffset, tokenEnd(t));
  }

  protected fail(c: BuildContext, code: ErrorCode, at: SrcSpan, message: string, hint: string): undefined {
    c.diagnostics.push(svcError(code, message, { span: spanAt(c.lines, at.start, at.end), hint }));
    return undefined;
  }

  protected name(c: BuildContext, t: IToken): Name {
    const n: Name = { text: t.image, span: this.tokSpan(c, t) };
    const colon = t.image.indexOf(':');
    if (colon > 0) n.qualified = { api: t.image.slice(0, colon), entity: t.image.slice(colon + 1) };
    return n;
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
}
