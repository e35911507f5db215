/** Quoting user text inside a message: a short, one-line prefix, so no message echoes a whole input. */

/** Characters of user text a message quotes before it cuts. */
export const QUOTE_MAX = 40;

/**
 * `text` on one line (runs of line breaks and tabs become one space), cut to `max` characters
 * plus `…` when longer. Text that is short already comes back unchanged.
 *
 * @example quote('a'.repeat(100)) // 'aaaa…' (40 a's, then …)
 */
export function quote(text: string, max = QUOTE_MAX): string {
  const head = text.length > max ? text.slice(0, max) : text;
  const line = /[\r\n\t]/.test(head) ? head.replace(/[\r\n\t]+/g, ' ') : head;
  return text.length > max ? `${line}…` : line;
}

/** Characters of a JSON value a message shows before it cuts. */
const JSON_SHOWN_MAX = 32;

/**
 * A JSON value as a message shows it: its JSON text, cut to 29 characters plus `...` when longer
 * than 32.
 *
 * @example quoteJson([1, 2]) // '[1,2]'
 */
export function quoteJson(v: unknown): string {
  const s = JSON.stringify(v);
  return s.length > JSON_SHOWN_MAX ? `${s.slice(0, JSON_SHOWN_MAX - 3)}...` : s;
}
