/**
 * Text the terminal prints that it did not write itself (vendor values in a plain answer, catalog
 * descriptions, server messages, progress lines) can hold escape sequences a terminal acts on:
 * a title change (`ESC ] 0 ; ... BEL`), a clear screen (`ESC [ 2 J`), an OSC 8 hyperlink, a
 * carriage return that overwrites the line before it. The server sends them as data; the terminal
 * is where they act, so the terminal shows them escaped. JSON and TOON output is printed as it
 * came (both are data formats a program reads; their strings escape C0 controls already).
 */

/** C0 controls but newline and tab, DEL, and the C1 controls U+0080-U+009F (U+009B is a CSI on its own). */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

const escaped = (c: string): string => {
  const code = c.charCodeAt(0);
  return code < 0x80 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
};

/**
 * `text` with every control character but `\n` and `\t` shown escaped: C0 and DEL as `\xNN`, C1 as
 * `\u00NN`. `safeText('\x1b]0;pwned\x07Bock')` is the visible `\x1b]0;pwned\x07Bock`.
 */
export function safeText(text: string): string {
  return text.replace(CONTROL, escaped);
}
