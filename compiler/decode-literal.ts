/**
 * Decoding literal tokens: a string's escapes, a number's kind and range, and the diagnostic of a
 * malformed heredoc. Each decoder returns the value, or a thunk that builds the diagnostic that
 * explains the problem (built only when it will be shown).
 */
import { svcError, type SvcError } from '../common/errors.js';
import { quote } from '../common/quote.js';
import { spanAt, type LineIndex } from './spans.js';
import { type HeredocPayload } from './tokens.js';

/** The decoded value a `NumberLit` token carries as its payload (set by `lex`). */
export type NumberPayload = { kind: 'integer' | 'decimal'; value: number };

const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', n: '\n', t: '\t', r: '\r', b: '\b', f: '\f' };
const HEX4 = /^[0-9a-fA-F]{4}$/;

/** Builds a diagnostic only when it may be shown (see `StatementSplitter.fail`). */
export type Diagnose = () => SvcError;

/** The value of a string token (quotes removed, escapes decoded), or its `bad_escape` diagnostic. */
export function decodeString(image: string, start: number, lines: LineIndex): string | Diagnose {
  const body = image.slice(1, -1);
  if (body.indexOf('\\') < 0) return body;
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const e = body[i + 1] ?? '';
    const simple = ESCAPES[e];
    if (simple !== undefined) {
      out += simple;
      i++;
    } else if (e === 'u' && HEX4.test(body.slice(i + 2, i + 6))) {
      out += String.fromCharCode(parseInt(body.slice(i + 2, i + 6), 16));
      i += 5;
    } else {
      const at = start + 1 + i;
      const len = e === 'u' ? 2 + /^[0-9a-fA-F]{0,3}/.exec(body.slice(i + 2))![0].length : 2;
      const text = body.slice(i, i + len);
      return () =>
        svcError(
          'bad_escape',
          e === 'u' ? `escape \`${text}\` needs four hex digits` : `unknown escape \`${text}\` in a string`,
          {
            span: spanAt(lines, at, at + len),
            hint:
              e === 'u'
                ? 'write \\u followed by exactly four hex digits, e.g. \\u00e9'
                : 'the escapes are \\" \\\\ \\/ \\n \\t \\r \\b \\f and \\uXXXX; write a literal backslash as \\\\',
          },
        );
    }
  }
  return out;
}

const INTEGER = /^-?\d+$/;
const DECIMAL = /^-?\d+\.\d+(?:[eE][+-]?\d+)?$/;

/** The value of a number token, or its `bad_number` diagnostic. */
export function decodeNumber(image: string, start: number, lines: LineIndex): NumberPayload | Diagnose {
  if (INTEGER.test(image)) {
    const value = Number(image);
    if (Number.isSafeInteger(value)) return { kind: 'integer', value: value === 0 ? 0 : value };
    return () =>
      svcError('bad_number', `integer \`${quote(image)}\` is out of range`, {
        span: spanAt(lines, start, start + image.length),
        hint:
          'integers must lie between -9007199254740991 and 9007199254740991; pass a larger number as a string, e.g. "' +
          quote(image) +
          '"',
      });
  }
  if (DECIMAL.test(image)) {
    const value = Number(image);
    if (Number.isFinite(value)) return { kind: 'decimal', value };
    return () =>
      svcError('bad_number', `decimal \`${quote(image)}\` is out of range`, {
        span: spanAt(lines, start, start + image.length),
        hint: 'use a smaller exponent, or pass the number as a string',
      });
  }
  return () =>
    svcError('bad_number', `\`${quote(image)}\` is not a number`, {
      span: spanAt(lines, start, start + image.length),
      hint:
        'integers are written like 42 or -7, decimals like 2.5 or 1.5e-3 (digits on both sides of the dot); quote text that starts with a digit, e.g. "' +
        quote(image) +
        '"',
    });
}

const HEREDOC_FORM = 'write <<EOT, a newline, the text, then a line holding EOT';

/** The diagnostic for a malformed heredoc token. */
export function heredocError(p: Extract<HeredocPayload, { ok: false }>, start: number, lines: LineIndex): SvcError {
  const span = spanAt(lines, start, start + p.openerLength);
  switch (p.code) {
    case 'legacy_heredoc':
      return svcError('legacy_heredoc', 'the three-character heredoc opener was removed', { span, hint: HEREDOC_FORM });
    case 'heredoc_missing_tag':
      return svcError('heredoc_missing_tag', 'the heredoc opener `<<` has no tag', {
        span,
        hint: `put the tag right after \`<<\` with no space: ${HEREDOC_FORM}`,
      });
    case 'unterminated_heredoc':
      return svcError('unterminated_heredoc', `the heredoc \`<<${quote(p.tag ?? '')}\` is never closed`, {
        span,
        hint:
          nearClose(lines.text, start, p.tag) ??
          `end the text with a line holding only ${p.tag ? quote(p.tag) : 'the tag'} (it may be followed directly by \`)\`, \`,\` or \`}\`)`,
      });
    case 'syntax_error':
      return svcError('syntax_error', `the heredoc opener \`<<${quote(p.tag ?? '')}\` must end its line`, {
        span,
        hint: `start the text on the next line: ${HEREDOC_FORM}; nothing, not even a space, may follow the tag on the opener line`,
      });
  }
}

/** Lines looked at for a near-miss closing line. */
const NEAR_CLOSE_LINES = 200;

/**
 * A line after the opener that almost closes the heredoc: the tag with a blank before `)`, `,` or
 * `}` (`EOT )`), or the tag in another case (`eot`). The hint says how to write that line.
 */
function nearClose(text: string, start: number, tag: string | undefined): string | undefined {
  if (!tag) return undefined;
  let from = text.indexOf('\n', start);
  for (let n = 0; from >= 0 && n < NEAR_CLOSE_LINES; n++) {
    const end = text.indexOf('\n', from + 1);
    const line = text.slice(from + 1, end < 0 ? text.length : end).trim();
    from = end;
    if (line.length > tag.length + 40) continue;
    const m = /^([A-Za-z_][A-Za-z0-9_]*)\s+([),}].*)$/.exec(line);
    if (m && m[1] === tag)
      return `the line \`${quote(line)}\` does not close it: glue the bracket to the tag, ${tag}${m[2]}, or put ${tag} alone on its line`;
    if (line.toLowerCase() === tag.toLowerCase() && line !== tag)
      return `the line \`${quote(line)}\` does not close it: the closing tag must be written exactly as opened, ${tag}`;
  }
  return undefined;
}
