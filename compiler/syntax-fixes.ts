/**
 * Syntax errors whose fix can be written out: the statement an agent meant, rebuilt from its own
 * tokens. `==` and doubled commas lose the extra token; a dotted field in a projection becomes
 * the relation it follows; the teaching table's `[..]` placeholder is dropped; a projection
 * written before a member moves to the end; `Brewery:Beer` gets its lower-case catalog id; SQL is
 * translated. Anything else keeps the grammar's own wording (see `syntax-error.ts`).
 */
import type { IToken } from 'chevrotain';
import { lineAt, showable } from './fix-text.js';
import { tokenEnd } from './spans.js';
import { looksLikeSql, sqlHint } from './sql-hint.js';
import * as T from './tokens.js';

/** Where a statement goes wrong: its tokens, the index of the bad token, and the innermost open bracket. */
export interface SyntaxSite {
  text: string;
  toks: IToken[];
  at: number;
  open: { tok: IToken; what: string } | undefined;
  leftover: boolean;
}

const VALUE_TOKENS = new Set([T.StringLit, T.NumberLit, T.True, T.False, T.Null, T.Identifier]);

/** The hint that names the fix for this syntax error, or undefined when the grammar's wording is all there is. */
export function syntaxFix(s: SyntaxSite): string | undefined {
  const { toks, at, open } = s;
  const tok = toks[at];
  const prev = toks[at - 1];
  const next = toks[at + 1];
  const first = toks[0];
  if (first?.tokenType === T.Identifier && looksLikeSql(lineAt(s.text, first.startOffset)))
    return sqlHint(lineAt(s.text, first.startOffset));
  if (!tok || !prev) return undefined;
  const tt = tok.tokenType;
  if (tt === T.Equals && prev.tokenType === T.Equals) return fixed('compare with one `=`', without(s, tok));
  if (tt === T.Comma && (prev.tokenType === T.Comma || prev.tokenType === T.LParen || prev.tokenType === T.LBracket))
    return fixed('remove the extra `,`', without(s, tok));
  if (tt === T.Colon && prev.tokenType === T.Identifier && next && open?.what === 'argument list') {
    const value = VALUE_TOKENS.has(next.tokenType) ? next.image : 'value';
    return `arguments are written name=value, e.g. ${prev.image}=${value}`;
  }
  if (tt === T.Colon && prev.tokenType === T.Identifier && next?.tokenType === T.Identifier && !open)
    return `a qualified name is one word, api:Entity, with the catalog id in lower case: ${prev.image.toLowerCase()}:${next.image}`;
  if (tt === T.Dot && open?.what === 'projection') return projectionDot(s, tok, prev, next);
  if (tt === T.Dot && s.leftover && prev.tokenType === T.RBracket) return projectionFirst(s);
  return undefined;
}

function fixed(what: string, fix: string): string {
  return showable(fix) ? `${what}: ${fix}` : what;
}

/** The statement's text. */
function statement(s: SyntaxSite): string {
  return s.text.slice(s.toks[0]!.startOffset, tokenEnd(s.toks[s.toks.length - 1]!));
}

/** The statement's text without token `tok`. */
function without(s: SyntaxSite, tok: IToken): string {
  const start = s.toks[0]!.startOffset;
  const st = statement(s);
  return st.slice(0, tok.startOffset - start) + st.slice(tokenEnd(tok) - start);
}

/** Offset where the chain starts: after `name =` in a binding. */
function chainStart(s: SyntaxSite): number {
  const [a, b, c] = s.toks;
  return a?.tokenType === T.Identifier && b?.tokenType === T.Equals && c ? c.startOffset : a!.startOffset;
}

/** `[name, brewery.name]` (follow the relation) or `[..]` (the teaching table's placeholder). */
function projectionDot(s: SyntaxSite, dot: IToken, prev: IToken, next: IToken | undefined): string | undefined {
  const lb = s.open!.tok;
  const head = s.text.slice(chainStart(s), lb.startOffset).trimEnd();
  if (prev.tokenType === T.LBracket) {
    const close = s.toks.find((t) => t.tokenType === T.RBracket && t.startOffset > dot.startOffset);
    const rest = close ? s.text.slice(tokenEnd(close), tokenEnd(s.toks[s.toks.length - 1]!)) : '';
    const fix = (head + rest).trim();
    return `\`[..]\` in the teaching table stands for the fields you want: name them, e.g. [name], or leave the projection out to get every field${showable(fix) ? `: ${fix}` : ''}`;
  }
  if (prev.tokenType !== T.Identifier || next?.tokenType !== T.Identifier) return undefined;
  const rel = prev.image;
  const close = s.toks.find((t) => t.tokenType === T.RBracket && t.startOffset > dot.startOffset);
  const words = `a projection names fields of this row; nest the relation for the fields of \`${rel}\``;
  // `[title, author.name]` -> `[title, author[name]]`: each row keeps its related row's fields.
  const nested = close
    ? `${head}${s.text.slice(lb.startOffset, tokenEnd(close)).replace(/\b([A-Za-z_]\w*)\s*\.\s*([A-Za-z_]\w*)/g, '$1[$2]')}`
    : '';
  if (!showable(nested)) return `${words}: ...[${rel}[${next.image}]]`;
  return `${words}: ${nested}`;
}

/** `e1(...)[name].beers`: the projection comes last. */
function projectionFirst(s: SyntaxSite): string | undefined {
  const rb = s.toks.indexOf(s.toks[s.at - 1]!);
  let depth = 0;
  let lb = -1;
  for (let i = rb; i >= 0; i--) {
    const t = s.toks[i]!.tokenType;
    if (t === T.RBracket) depth++;
    else if (t === T.LBracket && --depth === 0) {
      lb = i;
      break;
    }
  }
  if (lb < 0) return undefined;
  const start = s.toks[0]!.startOffset;
  const end = tokenEnd(s.toks[s.toks.length - 1]!);
  const proj = s.text.slice(s.toks[lb]!.startOffset, tokenEnd(s.toks[rb]!));
  const rest = s.text.slice(s.toks[s.at]!.startOffset, end);
  if (rest.includes('[')) return undefined;
  const fix = s.text.slice(start, s.toks[lb]!.startOffset).trimEnd() + rest + proj;
  return fixed('the projection comes last, after every .member', fix);
}
