/**
 * Rendering one diagnostic against its program text, the way the CLI and tool results show it:
 *
 *     unknown_symbol at 1:1: `e9` is not a symbol of this session
 *       1 | e9(city="Berlin")
 *         | ^^
 *       hint: did you mean `e1` (brewery:Brewery)?
 *
 * A long line is shown as a window around the column (`…` where it is cut), so the rendering has
 * a bounded size whatever the line.
 */
import type { SvcError } from '../common/errors.js';

/** Characters of the line shown on each side of the column (and most carets under a wide span). */
export const RENDER_WINDOW = 40;

/** Line `n` (1-based) of `source` without its line break; '' past the end. Scans only up to it. */
function lineOf(source: string, n: number): string {
  let start = 0;
  for (let i = 1; i < n; i++) {
    const nl = source.indexOf('\n', start);
    if (nl < 0) return '';
    start = nl + 1;
  }
  const nl = source.indexOf('\n', start);
  const raw = source.slice(start, nl < 0 ? source.length : nl);
  return raw.endsWith('\r') ? raw.slice(0, -1) : raw;
}

/**
 * The diagnostic with its source line and a caret under the span. The caret is as wide as the
 * span on its first line (at least one character, at most `RENDER_WINDOW`); a span past the end
 * of its line, or on a line past the end of the text, points just after the text. Never throws.
 */
export function renderDiagnostic(source: string, e: SvcError): string {
  const s = e.span;
  const hint = e.hint ? `\n  hint: ${e.hint}` : '';
  if (!s) return `${e.code}: ${e.message}${hint}`;
  const lineNo = Math.max(1, Math.floor(s.line));
  const text = lineOf(source, lineNo);
  const col = Math.min(Math.max(1, Math.floor(s.col)), text.length + 1);
  const sameLine = s.endLine === undefined || s.endLine === s.line;
  const endCol = sameLine ? Math.min(s.endCol ?? col + 1, text.length + 1) : text.length + 1;
  const width = Math.min(RENDER_WINDOW, Math.max(1, endCol - col));
  const from = col - 1;
  const a = Math.max(0, from - RENDER_WINDOW);
  const b = Math.min(text.length, from + width + RENDER_WINDOW);
  const shown = `${a > 0 ? '…' : ''}${text.slice(a, b)}${b < text.length ? '…' : ''}`;
  // Keep tabs in the padding so the caret lines up under tab-indented text.
  const pad = (a > 0 ? ' ' : '') + text.slice(a, from).replace(/[^\t]/g, ' ');
  const gutter = String(lineNo);
  const blank = ' '.repeat(gutter.length);
  return (
    [
      `${e.code} at ${s.file ? `${s.file}:` : ''}${s.line}:${s.col}: ${e.message}`,
      `  ${gutter} | ${shown}`,
      `  ${blank} | ${pad}${'^'.repeat(width)}`,
    ].join('\n') + hint
  );
}
