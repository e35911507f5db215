/**
 * Rendering one diagnostic against its program text, the way the CLI and tool results show it:
 *
 *     unknown_symbol at 1:1: `e9` is not a symbol of this session
 *       1 | e9(city="Berlin")
 *         | ^^
 *       hint: did you mean `e1` (brewery:Brewery)?
 */
import type { SvcError } from '../common/errors.js';

/**
 * The diagnostic with its source line and a caret under the span. The caret is as wide as the
 * span on its first line (at least one character); a span past the end of its line, or on a line
 * past the end of the text, points just after the text. Never throws.
 */
export function renderDiagnostic(source: string, e: SvcError): string {
  const s = e.span;
  const hint = e.hint ? `\n  hint: ${e.hint}` : '';
  if (!s) return `${e.code}: ${e.message}${hint}`;
  const lines = source.split('\n');
  const lineNo = Math.max(1, Math.floor(s.line));
  const raw = lines[lineNo - 1] ?? '';
  const text = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
  const col = Math.min(Math.max(1, Math.floor(s.col)), text.length + 1);
  const sameLine = s.endLine === undefined || s.endLine === s.line;
  const endCol = sameLine ? Math.min(s.endCol ?? col + 1, text.length + 1) : text.length + 1;
  const width = Math.max(1, endCol - col);
  // Keep tabs in the padding so the caret lines up under tab-indented text.
  const pad = text.slice(0, col - 1).replace(/[^\t]/g, ' ');
  const gutter = String(lineNo);
  const blank = ' '.repeat(gutter.length);
  return [
    `${e.code} at ${s.file ? `${s.file}:` : ''}${s.line}:${s.col}: ${e.message}`,
    `  ${gutter} | ${text}`,
    `  ${blank} | ${pad}${'^'.repeat(width)}`,
  ].join('\n') + hint;
}
