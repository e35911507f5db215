/**
 * Completion from the session's teaching table (`GET .../symbols`): symbols (`e1`, `m3`, `r2`),
 * the wire names of parameters, filters and fields, the values of enum fields, continuations
 * and the handles the page has seen. Inside `sym(` the symbol's parameters come first, inside
 * `[` its fields; after `name=` an enum's values.
 */
import type { Completion, CompletionContext, CompletionResult } from '@codemirror/autocomplete';
import type { Symbols } from '../api/types.js';
import { namesBySymbol, parseTeaching, type SymbolNames } from '../lang/teaching.js';

/** What completion knows: rebuilt when the session's symbols change. */
export interface CompletionData {
  symbols: Symbols | null;
  names: Map<string, SymbolNames>;
  /** Handles printed by answers of this page (`pg3`, `o2`, `pc1`). */
  handles: string[];
}

export const emptyCompletion = (): CompletionData => ({ symbols: null, names: new Map(), handles: [] });

/** The completion data of a session's symbols. */
export function completionData(symbols: Symbols, handles: string[] = []): CompletionData {
  const names = namesBySymbol(parseTeaching(symbols.teaching).rows);
  // A capability or relation of an entity shares the entity's enum values (same wire names).
  const entityOf = new Map<string, string>();
  for (const e of symbols.entities) entityOf.set(`${e.api}:${e.entity}`, e.sym);
  for (const c of symbols.capabilities) inherit(names, c.sym, entityOf.get(`${c.api}:${c.entity}`));
  for (const r of symbols.relations) inherit(names, r.sym, entityOf.get(`${r.api}:${r.target}`));
  return { symbols, names, handles };
}

function inherit(names: Map<string, SymbolNames>, sym: string, from: string | undefined): void {
  const src = from ? names.get(from) : undefined;
  const dst = names.get(sym);
  if (src && dst) dst.enums = { ...src.enums, ...dst.enums };
}

function symbolOptions(s: Symbols, names: Map<string, SymbolNames>): Completion[] {
  const info = (sym: string) => names.get(sym)?.about;
  return [
    ...s.entities.map((e) => ({ label: e.sym, type: 'class', detail: `${e.api}:${e.entity}`, info: info(e.sym) })),
    ...s.capabilities.map((c) => ({
      label: c.sym,
      type: 'function',
      detail: `${c.capability} (${c.api}:${c.entity})`,
      info: info(c.sym),
    })),
    ...s.relations.map((r) => ({
      label: r.sym,
      type: 'property',
      detail: `${r.relation} -> ${r.target}`,
      info: info(r.sym),
    })),
  ];
}

/** The innermost unclosed bracket of `text` (strings skipped) and the symbol written before it. */
export function openerBefore(text: string): { bracket: string; sym?: string } | undefined {
  const stack: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') {
      const close = text.indexOf('"', i + 1);
      if (close < 0) break;
      i = close;
    } else if ('([{'.includes(c)) stack.push(i);
    else if (')]}'.includes(c)) stack.pop();
  }
  const at = stack[stack.length - 1];
  if (at === undefined) return undefined;
  const syms = [...text.slice(0, at).matchAll(/\b([emr]\d+)\b/g)];
  const sym = syms[syms.length - 1]?.[1];
  return { bracket: text[at]!, ...(sym ? { sym } : {}) };
}

function nameOptions(data: CompletionData, focus: { bracket: string; sym?: string } | undefined): Completion[] {
  const out = new Map<string, Completion>();
  const here = focus?.sym ? data.names.get(focus.sym) : undefined;
  const wantParams = focus?.bracket === '(';
  const push = (label: string, detail: string, boost: number) => {
    if (!out.has(label)) out.set(label, { label, type: 'variable', detail, boost });
  };
  if (here) {
    for (const p of wantParams ? here.params : here.fields)
      push(p, `${wantParams ? 'param' : 'field'} of ${here.sym}`, 10);
    for (const p of wantParams ? here.fields : here.params)
      push(p, `${wantParams ? 'field' : 'param'} of ${here.sym}`, 0);
  }
  for (const n of data.names.values()) {
    for (const p of n.params) push(p, `param of ${n.sym}`, -5);
    for (const f of n.fields) push(f, `field of ${n.sym}`, -5);
  }
  return [...out.values()];
}

const CONTINUATION_OPTIONS: Completion[] = [
  { label: 'page', type: 'keyword', detail: 'page(pgN)[..] next page', apply: 'page(' },
  { label: 'wait', type: 'keyword', detail: 'wait(oN) poll a background run', apply: 'wait(' },
  { label: 'cancel', type: 'keyword', detail: 'cancel(oN) stop a background run', apply: 'cancel(' },
];

/** Enum values after `name=` or `name="`: replaces the partial value, quotes included. */
function enumCompletion(ctx: CompletionContext, data: CompletionData, before: string): CompletionResult | null {
  const m = /([A-Za-z_][A-Za-z0-9_]*)\s*=\s*("?)([A-Za-z0-9_.-]*)$/.exec(before);
  if (!m) return null;
  const focus = openerBefore(before);
  const pools = focus?.sym ? [data.names.get(focus.sym)] : [...data.names.values()];
  const values = pools.map((n) => n?.enums[m[1]!]).find((v) => v && v.length);
  if (!values) return null;
  return {
    from: ctx.pos - m[3]!.length - m[2]!.length,
    options: values.map((v) => ({ label: `"${v}"`, type: 'enum', detail: `${m[1]} value` })),
    validFor: /^"?[A-Za-z0-9_.-]*"?$/,
  };
}

/** The completion source; `get` returns the data in force when completion runs. */
export function svcCompletion(get: () => CompletionData) {
  return (ctx: CompletionContext): CompletionResult | null => {
    const data = get();
    const line = ctx.state.doc.lineAt(ctx.pos);
    const before = line.text.slice(0, ctx.pos - line.from);
    const enums = enumCompletion(ctx, data, before);
    if (enums) return enums;
    const word = ctx.matchBefore(/[A-Za-z_][A-Za-z0-9_]*/);
    if (!word && !ctx.explicit) return null;
    // Brackets may span lines: look back over the program, not only this line.
    const focus = openerBefore(ctx.state.sliceDoc(Math.max(0, ctx.pos - 4000), ctx.pos));
    const options = [
      ...(data.symbols ? symbolOptions(data.symbols, data.names) : []),
      ...nameOptions(data, focus),
      ...data.handles.map((h) => ({ label: h, type: 'constant', detail: 'handle' })),
      ...(focus ? [] : CONTINUATION_OPTIONS),
    ];
    return { from: word ? word.from : ctx.pos, options, validFor: /^[A-Za-z0-9_]*$/ };
  };
}
