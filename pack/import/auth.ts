/**
 * Outbound auth from `securitySchemes`: among the requirements of the document's `security` (else
 * of the first operation that has one), the scheme svc can send that a single secret fills, in
 * this order: HTTP bearer, an API key in a header, an API key in the query, then HTTP basic (two
 * values), then OAuth2 and OpenID Connect as a bearer token read from the environment (last: an
 * access token expires, and the import cannot obtain one). Ties go to document order. The catalog
 * names environment variables only: `<ENTRY_ID>_TOKEN`, `_API_KEY`, `_USERNAME`, `_PASSWORD`.
 */
import type { ImportAuth, ImportLog } from './model.js';
import { isObj, type Schema } from './schema.js';

/** How svc sends a scheme, and its rank: lower is preferred. */
function fromScheme(s: Schema, prefix: string): { auth: ImportAuth; rank: number; kind: string } | undefined {
  if (s.type === 'http' && /^bearer$/i.test(String(s.scheme)))
    return { auth: { scheme: 'bearer', env: `${prefix}_TOKEN` }, rank: 0, kind: 'http bearer' };
  if (s.type === 'apiKey' && (s.in === 'header' || s.in === 'query') && typeof s.name === 'string' && s.name)
    return {
      auth: { scheme: 'api_key', in: s.in as 'header' | 'query', name: s.name, env: `${prefix}_API_KEY` },
      rank: s.in === 'header' ? 1 : 2,
      kind: `API key in the ${String(s.in)}`,
    };
  if (s.type === 'http' && /^basic$/i.test(String(s.scheme)))
    return {
      auth: { scheme: 'basic', username_env: `${prefix}_USERNAME`, password_env: `${prefix}_PASSWORD` },
      rank: 3,
      kind: 'http basic',
    };
  if (s.type === 'oauth2' || s.type === 'openIdConnect')
    return { auth: { scheme: 'bearer', env: `${prefix}_TOKEN` }, rank: 4, kind: String(s.type) };
  return undefined;
}

/** The names of the schemes the document requires: its own `security`, else the first operation's. */
function requiredNames(doc: Schema): string[] {
  const requirements: Schema[] = Array.isArray(doc.security) ? doc.security.filter(isObj) : [];
  if (requirements.length === 0) {
    for (const item of Object.values(isObj(doc.paths) ? doc.paths : {}))
      for (const op of Object.values(isObj(item) ? item : {}))
        if (requirements.length === 0 && isObj(op) && Array.isArray(op.security))
          requirements.push(...op.security.filter(isObj));
  }
  return [...new Set(requirements.flatMap((r) => Object.keys(r)))];
}

/**
 * The catalog's auth block, with a review note saying which scheme was chosen, why, and which
 * were not (and the chosen scheme's own description, which often says how to write the secret).
 */
export function importAuth(doc: Schema, entryId: string, log: ImportLog): ImportAuth {
  const schemes = isObj(doc.components) && isObj(doc.components.securitySchemes) ? doc.components.securitySchemes : {};
  const prefix = entryId.toUpperCase().replace(/[^A-Z0-9]+/g, '_');
  const names = requiredNames(doc);
  const sendable = names.flatMap((name) => {
    const s: unknown = schemes[name];
    const how = isObj(s) ? fromScheme(s, prefix) : undefined;
    return how ? [{ name, s: s as Schema, ...how }] : [];
  });
  const best = sendable.reduce<(typeof sendable)[number] | undefined>(
    (a, b) => (a && a.rank <= b.rank ? a : b),
    undefined,
  );
  if (!best) {
    if (names.length) log.review.push({ what: 'auth', note: `no supported scheme among: ${names.join(', ')}` });
    return { scheme: 'none' };
  }
  const others = sendable.filter((x) => x !== best).map((x) => `${x.name} (${x.kind})`);
  const unsupported = names.filter((n) => !sendable.some((x) => x.name === n));
  const why =
    others.length === 0
      ? ''
      : best.rank < 3
        ? ': of the schemes offered, one secret fills it'
        : best.rank === 3
          ? ': of the schemes offered, basic is preferred to an OAuth2 token, which expires'
          : '';
  const desc = typeof best.s.description === 'string' && best.s.description.trim() ? best.s.description.trim() : '';
  log.review.push({
    what: 'auth',
    note:
      `scheme \`${best.name}\` (${best.kind}) chosen${why}` +
      `${others.length ? `; also offered: ${others.join(', ')}` : ''}` +
      `${unsupported.length ? `; not supported: ${unsupported.join(', ')}` : ''}` +
      `${desc ? `; its description: ${desc.replace(/\s+/g, ' ').slice(0, 200)}` : ''}`,
  });
  if (best.rank === 4)
    log.review.push({ what: 'auth', note: `OAuth2 is sent as a bearer token: put an access token in ${prefix}_TOKEN` });
  if (best.auth.scheme === 'basic')
    log.review.push({
      what: 'auth',
      note: `basic auth: an empty password is valid (set ${prefix}_PASSWORD to the empty string when the vendor takes a key as the user name)`,
    });
  return best.auth;
}

/** The environment variables an auth block reads. */
export function authEnv(a: ImportAuth): string[] {
  switch (a.scheme) {
    case 'none':
      return [];
    case 'basic':
      return [a.username_env, a.password_env];
    default:
      return [a.env];
  }
}
