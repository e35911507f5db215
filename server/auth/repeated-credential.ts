/**
 * A request that repeats a credential header is ambiguous: node keeps the first `Authorization`
 * and drops the others, and joins repeated `X-API-Key` values with ", ", so which credential
 * counts would depend on the order a proxy or client wrote them in, and a proxy that checks the
 * last one would disagree with svc. Such a request is refused on every route (the inbound auth,
 * the MCP transport key and a forwarded vendor credential all read `Authorization`), never
 * answered with one of them. Counted on the raw header lines, which node keeps as sent.
 */
import { svcError, type SvcError } from '../../common/errors.js';

/** `ambiguous_credentials` when `Authorization` or `X-API-Key` is sent more than once, else undefined. */
export function repeatedCredential(rawHeaders: readonly string[]): SvcError | undefined {
  let authorization = 0;
  let apiKey = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    // The length first: most header names are neither, and lower-casing them costs.
    if (name.length === 13 && name.toLowerCase() === 'authorization') authorization++;
    else if (name.length === 9 && name.toLowerCase() === 'x-api-key') apiKey++;
  }
  const header = authorization > 1 ? 'Authorization' : apiKey > 1 ? 'X-API-Key' : undefined;
  if (!header) return undefined;
  return svcError(
    'ambiguous_credentials',
    `the request carries ${header === 'Authorization' ? authorization : apiKey} ${header} headers`,
    { hint: `send exactly one ${header} header` },
  );
}
