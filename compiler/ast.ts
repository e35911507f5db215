/**
 * The typed AST of the program language (see grammar.md). Produced by the CST visitor in
 * `ast-builder.ts`; consumed by the resolver. Every node carries a `span` (1-based line/col,
 * 0-based offsets into the source text) so diagnostics can point at it.
 */

export interface SrcSpan {
  line: number;
  col: number;
  /** 0-based offset of the first character. */
  start: number;
  /** 0-based offset just past the last character. */
  end: number;
}

export interface Program {
  statements: Statement[];
  span: SrcSpan;
}

export type Statement = BindingStmt | ExprStmt | ContinuationStmt;

/** `b = e1(city="Berlin")` */
export interface BindingStmt {
  kind: 'binding';
  name: Name;
  expr: Chain;
  span: SrcSpan;
}

/** A bare expression line: its rows are returned. */
export interface ExprStmt {
  kind: 'expr';
  expr: Chain;
  span: SrcSpan;
}

/** `page(pg3)[name]`, `wait(o2)`, `cancel(o2)`: dispatched by the server, never planned. */
export interface ContinuationStmt {
  kind: 'page' | 'wait' | 'cancel';
  /** The handle text as written, e.g. `pg3`, `o2`. */
  handle: Name;
  projection?: Projection;
  span: SrcSpan;
}

/** An identifier-like name: a symbol (`e1`, `m3`, `r2`), a wire name, a binding name or a qualified name. */
export interface Name {
  text: string;
  /** Set for `api:Entity` written as one token. */
  qualified?: { api: string; entity: string };
  span: SrcSpan;
}

/**
 * `head(args).member(args).member[projection]`. The head is an entity symbol, a qualified name,
 * a capability symbol or a binding name; members are relations (symbol or wire name), capability
 * symbols, or (after a binding) field names.
 */
export interface Chain {
  kind: 'chain';
  head: Call;
  members: Call[];
  projection?: Projection;
  span: SrcSpan;
}

/** A name with an optional argument list: `args` is undefined when no parentheses were written. */
export interface Call {
  name: Name;
  args?: Arg[];
  span: SrcSpan;
}

/** `name=value` (named) or `value` (positional; only a get-by-id takes one). */
export interface Arg {
  name?: Name;
  value: Value;
  span: SrcSpan;
}

export type Value =
  | { kind: 'string'; value: string; heredoc: boolean; span: SrcSpan }
  | { kind: 'integer'; value: number; span: SrcSpan }
  | { kind: 'decimal'; value: number; span: SrcSpan }
  | { kind: 'boolean'; value: boolean; span: SrcSpan }
  | { kind: 'null'; span: SrcSpan }
  | { kind: 'list'; items: Value[]; span: SrcSpan }
  | { kind: 'object'; entries: Array<{ key: Name; value: Value }>; span: SrcSpan }
  /** `b.id` (a field of a bound result) or `b` alone. */
  | { kind: 'ref'; binding: Name; field?: Name; span: SrcSpan };

/** `[name, phone]`, `[id, r6[name], comments(limit=50)[id]]` */
export interface Projection {
  /** Every item's name, in written order (fields, and relations to nest). */
  fields: Name[];
  /** Items written with arguments or a projection of their own; each `name` is the same object as in `fields`. */
  nested?: NestedItem[];
  span: SrcSpan;
}

/** `r6[name]` or `comments(limit=50)` inside a projection: a relation whose rows are attached to each row. */
export interface NestedItem {
  name: Name;
  args?: Arg[];
  projection?: Projection;
  span: SrcSpan;
}
