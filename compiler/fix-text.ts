/**
 * Program text for hints that show the corrected program: a node's source, a call with more
 * arguments, an object literal rewritten as named arguments. A fix is shown only when it is short
 * and on one line (`showable`); otherwise the hint falls back to words.
 */
import type { Call, SrcSpan, Value } from './ast.js';

/** Longest corrected text a hint quotes. */
export const FIX_MAX = 140;

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** True when `fix` is short enough to quote in a hint and fits on one line. */
export function showable(fix: string): boolean {
  return fix.length <= FIX_MAX && !/[\r\n]/.test(fix);
}

/** The program text of a span. */
export function sourceOf(text: string, s: Pick<SrcSpan, 'start' | 'end'>): string {
  return text.slice(s.start, s.end);
}

/** The text of a call's arguments, as written (`city="Berlin", kind="micro"`), or '' when it has none. */
export function argsText(text: string, call: Call): string {
  const args = call.args ?? [];
  if (args.length === 0) return '';
  return text.slice(args[0]!.span.start, args[args.length - 1]!.span.end);
}

/** A call written with `extra` arguments after its own: `m4(a=1)` + [`b=2`] is `m4(a=1, b=2)`. */
export function callWith(text: string, call: Call, extra: string[], name = call.name.text): string {
  return `${name}(${[argsText(text, call), ...extra].filter((a) => a !== '').join(', ')})`;
}

/** An object literal as named arguments (`{city: "Berlin"}` is `city="Berlin"`), or undefined when a key is not a name. */
export function objectAsArgs(text: string, v: Value): string | undefined {
  if (v.kind !== 'object' || v.entries.length === 0) return undefined;
  const parts: string[] = [];
  for (const e of v.entries) {
    if (!NAME.test(e.key.text)) return undefined;
    parts.push(`${e.key.text}=${sourceOf(text, e.value.span)}`);
  }
  return parts.join(', ');
}

/** The line of `text` that holds offset `at` (without its line break). */
export function lineAt(text: string, at: number): string {
  const start = text.lastIndexOf('\n', at - 1) + 1;
  const end = text.indexOf('\n', at);
  return text.slice(start, end < 0 ? text.length : end).replace(/\r$/, '');
}
