/**
 * A capability's meaning, the text its teaching row shows after `kind e1:`: the operation's
 * summary, else the first sentence of its description, else its operationId in words
 * (`listWidgetsForUser` -> "list widgets for user"), else its method and path. Many documents
 * give no summary or description for most operations; without this their rows said only
 * `query e3`, and the name that tells two lists of one entity apart was lost. The economy pass
 * (economy.ts) still empties a meaning that only restates the kind and the entity ("get order").
 */
import type { MeaningSource } from './model.js';
import { oneLine } from './names.js';
import type { Operation } from './operations.js';

/** The longest meaning kept: a sentence past it is cut at a word (`oneLine`). */
const MAX_MEANING = 160;

/**
 * The meaning of `op` and where it came from. Markdown and HTML are reduced to their text.
 * @example meaningOf({ summary: '', description: '', operationId: 'listWidgetsForUser', ... }) // { text: 'list widgets for user', from: 'operationId' }
 */
export function meaningOf(op: Pick<Operation, 'summary' | 'description' | 'operationId' | 'method' | 'path'>): {
  text: string;
  from: MeaningSource;
} {
  const summary = oneLine(op.summary, MAX_MEANING);
  if (summary) return { text: summary, from: 'summary' };
  const sentence = firstSentence(oneLine(op.description, 1000));
  if (sentence) return { text: oneLine(sentence, MAX_MEANING), from: 'description' };
  const words = op.operationId ? idWords(op.operationId) : '';
  if (words) return { text: words, from: 'operationId' };
  return { text: `${op.method.toUpperCase()} ${op.path}`, from: 'method and path' };
}

/**
 * The first sentence of one line of text, without its full stop: it ends at `.`, `!` or `?`
 * followed by a space and a capital letter, a digit or a quote (so "e.g. this" and "v1.2" do
 * not end it).
 */
export function firstSentence(line: string): string {
  const end = /[.!?](?=\s+["'(\p{Lu}\d])/u.exec(line);
  const s = end ? line.slice(0, end.index + 1) : line;
  return s.replace(/\.$/, '').trim();
}

/**
 * An operationId as lower-case words, acronyms kept: `listWidgetsForUser` -> "list widgets for
 * user", `repos/list-for-org` -> "repos list for org", `getHTTPStatus` -> "get HTTP status".
 */
export function idWords(id: string): string {
  return id
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter((w) => w.length > 0)
    .map((w) => (/^[A-Z0-9]{2,}$/.test(w) ? w : w.toLowerCase()))
    .join(' ');
}
