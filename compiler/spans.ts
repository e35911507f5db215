/**
 * Converting offsets into spans: the AST's `SrcSpan` and diagnostic spans (1-based line/col,
 * exclusive end column), from AST spans, raw offset ranges or tokens.
 */
import type { IToken } from 'chevrotain';
import type { Span } from '../common/errors.js';
import type { SrcSpan } from './ast.js';

export class LineIndex {
  private readonly starts: number[] = [0];
  /** The 0-based line of the last lookup: offsets mostly come in text order, so it is tried first. */
  private last = 0;
  constructor(readonly text: string) {
    for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) this.starts.push(i + 1);
  }

  /** 1-based line and column of a 0-based offset (clamped into the text). */
  pos(offset: number): { line: number; col: number } {
    const o = Math.max(0, Math.min(offset, this.text.length));
    const starts = this.starts;
    let lo = this.last;
    if (starts[lo]! > o || (lo + 1 < starts.length && starts[lo + 1]! <= o)) {
      lo = 0;
      let hi = starts.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (starts[mid]! <= o) lo = mid;
        else hi = mid - 1;
      }
      this.last = lo;
    }
    return { line: lo + 1, col: o - starts[lo]! + 1 };
  }

  span(s: SrcSpan): Span {
    const a = this.pos(s.start);
    const b = this.pos(Math.max(s.end, s.start));
    return { line: a.line, col: a.col, endLine: b.line, endCol: b.col };
  }
}

/** The 0-based offset just past a token. */
export function tokenEnd(t: IToken): number {
  return t.startOffset + t.image.length;
}

/** A diagnostic span for the 0-based offsets `[start, end)`. */
export function spanAt(lines: LineIndex, start: number, end: number): Span {
  const a = lines.pos(start);
  const b = end <= start ? a : lines.pos(end);
  return { line: a.line, col: a.col, endLine: b.line, endCol: end <= start ? a.col : b.col };
}

/** The AST span of the 0-based offsets `[start, end)`. */
export function srcSpan(lines: LineIndex, start: number, end: number): SrcSpan {
  const p = lines.pos(start);
  return { line: p.line, col: p.col, start, end };
}
