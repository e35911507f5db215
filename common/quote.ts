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
