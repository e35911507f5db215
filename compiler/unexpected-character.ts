/**
 * The `unexpected_character` diagnostic for text no token matches, with a hint for the usual
 * mistakes (single or typographic quotes, operators, `$` and `@` names, `//` comments). Where the
 * text around the character shows what was meant, the hint writes it out: `"Berlin"` for
 * `'Berlin'`, `rating=4` for `rating>=4`, the program for a line of SQL.
 */
import { svcError, type SvcError } from '../common/errors.js';
import { lineAt, showable } from './fix-text.js';
import { spanAt, type LineIndex } from './spans.js';
import { looksLikeSql, sqlHint } from './sql-hint.js';

const CHAR_HINTS: Record<string, string> = {
  "'": 'strings use double quotes, e.g. "Berlin"',
  '\u201c': 'use plain double quotes " instead of typographic quotes',
  '\u201d': 'use plain double quotes " instead of typographic quotes',
  '<': 'there are no comparison operators; filters are arguments, e.g. e1(city="Berlin"); a multi-line string starts with <<TAG',
  '>': 'there are no comparison operators; filters are arguments, e.g. e1(city="Berlin")',
  '!': 'there are no operators; filters are arguments, e.g. e1(city="Berlin")',
  '&': 'there are no operators; give several arguments separated by commas, e.g. e1(city="Berlin", kind="micro")',
  '|': 'there are no operators; give several arguments separated by commas, e.g. e1(city="Berlin", kind="micro")',
  '-': 'a minus sign must be followed by a digit; names may not contain `-` (except the api part of `api:Entity`)',
  '/': 'comments start with #',
  $: 'names are plain: write the name without $',
  '@': 'names are plain: write the name without @',
};

/** How much text either side of the character the hints look at. */
const AROUND = 80;

/** The diagnostic for the `length` characters of `text` at `start` that no token matches. */
export function unexpectedCharacter(text: string, start: number, length: number, lines: LineIndex): SvcError {
  const chars = text.slice(start, start + length);
  const shown = chars.length > 20 ? chars.slice(0, 20) + '...' : chars;
  return svcError('unexpected_character', `unexpected character${chars.length > 1 ? 's' : ''} \`${shown}\``, {
    span: spanAt(lines, start, start + length),
    hint:
      fixHint(text, start, chars[0]!) ??
      CHAR_HINTS[chars[0]!] ??
      'names are letters, digits and `_`, strings are double-quoted, and # starts a comment; remove or quote the character',
  });
}

/** A hint that writes out the fix from the text around the character, or undefined. */
function fixHint(text: string, at: number, c: string): string | undefined {
  const line = lineAt(text, at);
  if (line.length <= 400 && looksLikeSql(line)) return sqlHint(line);
  const before = text.slice(Math.max(0, at - AROUND), at);
  const after = text.slice(at + 1, at + 1 + AROUND);
  switch (c) {
    case "'": {
      const close = after.search(/['\n]/);
      if (close < 0 || after[close] !== "'") return undefined;
      return `strings use double quotes, e.g. ${JSON.stringify(after.slice(0, close))}`;
    }
    case '>':
    case '<':
      return comparison(before, after);
    case '*':
      if (before.endsWith('[') && after.startsWith(']')) {
        const fix = (line.slice(0, line.indexOf('[*]')) + line.slice(line.indexOf('[*]') + 3)).trim();
        return `there is no \`[*]\`: leave the projection out to get every field${showable(fix) ? `: ${fix}` : ''}`;
      }
      return undefined;
    case '$':
      if (/[=(,]\s*$/.test(before)) {
        const name = /(\w+)\s*=\s*$/.exec(before)?.[1] ?? 'city';
        const value = `${name}="text", ${name}=5 or ${name}=true, as the parameter's type says`;
        if (/^[A-Za-z_]/.test(after)) return `names are plain: write a binding without $, or a value, e.g. ${value}`;
        return `\`$\` marks a value to fill in the teaching table: replace \`$\` with a value, e.g. ${value}`;
      }
      return undefined;
    case '\\':
      if (after.startsWith('n'))
        return '`\\n` is not a line break in a program: put each statement after a real line break, or separate statements with `;`';
      return undefined;
    default:
      return undefined;
  }
}

/** `rating>=4`: filters are equalities: `rating=4`. */
function comparison(before: string, after: string): string | undefined {
  const name = /(\w+)\s*$/.exec(before)?.[1];
  const value = /^[=>]?\s*("[^"\n]*"|-?\d+(?:\.\d+)?|true|false)/.exec(after)?.[1];
  if (!name || !value) return undefined;
  return `there are no comparison operators: a filter is an equality, e.g. ${name}=${value}; to compare, read the rows and compare them yourself`;
}
