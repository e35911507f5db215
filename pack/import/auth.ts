/**
 * Outbound auth from `securitySchemes`: the first requirement of the document's `security` (else
 * of the first operation that has one) that svc can send: HTTP bearer, HTTP basic, an API key in
 * a header or the query, OAuth2 and OpenID Connect as a bearer token read from the environment.
 * The catalog names environment variables only: `<ENTRY_ID>_TOKEN`, `_API_KEY`, `_USERNAME`,
 * `_PASSWORD`.
 */
import type { ImportAuth, ImportLog } from './model.js';
import { isObj, type Schema } from './schema.js';

function fromScheme(s: Schema, prefix: string): ImportAuth | undefined {
  if (s.type === 'http' && /^bearer$/i.test(String(s.scheme))) return { scheme: 'bearer', env: `${prefix}_TOKEN` };
  if (s.type === 'http' && /^basic$/i.test(String(s.scheme)))
    return { scheme: 'basic', username_env: `${prefix}_USERNAME`, password_env: `${prefix}_PASSWORD` };
  if (s.type === 'apiKey' && (s.in === 'header' || s.in === 'query') && typeof s.name === 'string' && s.name)
    return { scheme: 'api_key', in: s.in as 'header' | 'query', name: s.name, env: `${prefix}_API_KEY` };
  if (s.type === 'oauth2' || s.type === 'openIdConnect') return { scheme: 'bearer', env: `${prefix}_TOKEN` };
  return undefined;
}

/** The catalog's auth block, with a review note saying which scheme was chosen and which were not. */
export function importAuth(doc: Schema, entryId: string, log: ImportLog): ImportAuth {
  const schemes = isObj(doc.components) && isObj(doc.components.securitySchemes) ? doc.components.securitySchemes : {};
  const prefix = entryId.toUpperCase().replace(/[^A-Z0-9]+/g, '_');
  const requirements: Schema[] = Array.isArray(doc.security) ? doc.security.filter(isObj) : [];
  if (requirements.length === 0) {
    for (const item of Object.values(isObj(doc.paths) ? doc.paths : {}))
      for (const op of Object.values(isObj(item) ? item : {}))
        if (requirements.length === 0 && isObj(op) && Array.isArray(op.security))
          requirements.push(...op.security.filter(isObj));
  }
  const names = requirements.flatMap((r) => Object.keys(r));
  for (const name of names) {
    const s: unknown = schemes[name];
    if (!isObj(s)) continue;
    const auth = fromScheme(s, prefix);
    if (!auth) continue;
    const others = [...new Set(names.filter((n) => n !== name))];
    log.review.push({
      what: 'auth',
      note: `scheme \`${name}\` (${String(s.type)}) chosen${others.length ? `; also offered: ${others.join(', ')}` : ''}`,
    });
    if (s.type === 'oauth2' || s.type === 'openIdConnect')
      log.review.push({
        what: 'auth',
        note: `OAuth2 is sent as a bearer token: put an access token in ${prefix}_TOKEN`,
      });
    return auth;
  }
  if (names.length)
    log.review.push({ what: 'auth', note: `no supported scheme among: ${[...new Set(names)].join(', ')}` });
  return { scheme: 'none' };
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
