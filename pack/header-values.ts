/**
 * Parameters a mapping sends in a header (`headers: {X-Trace: "{trace}"}`): their values must be
 * text an HTTP field value can carry. A CR or LF would end the header (header injection), a NUL or
 * another control character or one beyond U+00FF is refused by the HTTP client when it sends, which
 * would look like an unreachable vendor. So such a value is `bad_arguments` naming the parameter,
 * before any call: when the program compiles (a literal) and before each call (a bound value, a
 * resolved plan's value).
 */
import { svcError, type SvcError } from '../common/errors.js';
import type { Capability, JsonValue } from './cgs.js';
import { parseTemplate } from './template.js';

/** Not allowed in a field value (RFC 9110 5.5, and Latin-1 as Node's HTTP clients check it): controls but HTAB, DEL, beyond U+00FF. */
const NOT_IN_FIELD = /[^\t\x20-\x7e\x80-\xff]/;

/** The header (as written in the mapping) `param` of `cap` is sent in, or undefined. */
export function paramHeader(cap: Capability, param: string): string | undefined {
  for (const [name, t] of Object.entries(cap.http.headers)) if (parseTemplate(t).params.includes(param)) return name;
  return undefined;
}

/** The first character of `v` (a string, or a list's strings) a header cannot carry. */
function badChar(v: JsonValue): string | undefined {
  if (typeof v === 'string') return NOT_IN_FIELD.exec(v)?.[0];
  if (Array.isArray(v))
    for (const item of v) {
      const c = badChar(item);
      if (c !== undefined) return c;
    }
  return undefined;
}

const shown = (c: string) => {
  const code = c.codePointAt(0)!;
  const names: Record<number, string> = { 0: 'NUL', 10: 'LF', 13: 'CR' };
  return `${names[code] ?? 'a character'} (U+${code.toString(16).toUpperCase().padStart(4, '0')})`;
};

/**
 * The `bad_arguments` error of `value` given to `param` of `cap` when `param` goes into a header
 * and `value` holds a character a header cannot carry; undefined otherwise. `what` prefixes the
 * message (a step, a nest), when there is one.
 * @example headerValueProblem(getOrder, 'trace', 'a\r\nX-Admin: 1') // bad_arguments: `trace` ... CR (U+000D)
 */
export function headerValueProblem(
  cap: Capability,
  param: string,
  value: JsonValue,
  what?: string,
): SvcError | undefined {
  const c = badChar(value);
  if (c === undefined) return undefined;
  const header = paramHeader(cap, param);
  if (header === undefined) return undefined;
  return svcError(
    'bad_arguments',
    `${what ? `${what}: ` : ''}\`${param}\` of ${cap.name} is sent in the ${header} header and holds ${shown(c)}, which a header cannot carry`,
    {
      hint: `give ${param} a value without line breaks or other control characters (tab is allowed) and only characters up to U+00FF`,
    },
  );
}

/** The first `headerValueProblem` of one call's `values`, or undefined (no header mapping: no work). */
export function headerValuesProblem(
  cap: Capability,
  values: Readonly<Record<string, JsonValue>>,
  what?: string,
): SvcError | undefined {
  const headers = Object.values(cap.http.headers);
  if (headers.length === 0) return undefined;
  for (const t of headers)
    for (const param of parseTemplate(t).params) {
      const v = values[param];
      const problem = v === undefined || v === null ? undefined : headerValueProblem(cap, param, v, what);
      if (problem) return problem;
    }
  return undefined;
}
