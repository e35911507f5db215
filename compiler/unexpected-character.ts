/**
 * The `unexpected_character` diagnostic for text no token matches, with a hint for the usual
 * mistakes (single or typographic quotes, operators, `$` and `@` names, `//` comments).
 */
import { svcError, type SvcError } from '../common/errors.js';
import { spanAt, type LineIndex } from './spans.js';

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

/** The diagnostic for the `length` characters of `text` at `start` that no token matches. */
export function unexpectedCharacter(text: string, start: number, length: number, lines: LineIndex): SvcError {
  const chars = text.slice(start, start + length);
  const shown = chars.length > 20 ? chars.slice(0, 20) + '...' : chars;
  return svcError('unexpected_character', `unexpected character${chars.length > 1 ? 's' : ''} \`${shown}\``, {
    span: spanAt(lines, start, start + length),
    hint:
      CHAR_HINTS[chars[0]!] ??
      'names are letters, digits and `_`, strings are double-quoted, and # starts a comment; remove or quote the character',
  });
}
