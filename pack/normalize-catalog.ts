/** The catalog header of a source (`catalog:`): identity, backend URL and outbound auth, defaults made explicit. */
import type { Cgs, OutboundAuth } from './cgs.js';
import { isObj, type NormalizeContext, type Obj, text } from './normalize-context.js';
import type { SourceData } from './source.js';

/** Fill the header fields of `cgs` from the `catalog:` section of `f`. */
export function normalizeCatalog(cx: NormalizeContext, cgs: Cgs, f: SourceData): void {
  const c = f.data.catalog as Obj;
  for (const k of ['entry_id', 'version', 'label', 'tags', 'description', 'backend', 'auth'])
    cx.mark(`/${k}`, f, ['catalog', k]);
  cx.mark('/backend/base_url', f, ['catalog', 'backend', 'url']);
  const also = isObj(c.auth) && Array.isArray(c.auth.also) ? c.auth.also : [];
  cx.mark('/auth/also', f, ['catalog', 'auth', 'also']);
  also.forEach((_, i) => cx.mark(`/auth/also/${i}`, f, ['catalog', 'auth', 'also', i]));
  cgs.entry_id = text(c.entry_id, '');
  cgs.version = c.version as number;
  cgs.label = text(c.label, '');
  cgs.tags = Array.isArray(c.tags) ? c.tags.map(String) : [];
  cgs.description = text(c.description, '');
  const url = isObj(c.backend) ? text(c.backend.url, '') : '';
  cgs.backend = { base_url: url.replace(/([^/])\/+$/, '$1') };
  cgs.auth = normalizeAuth(isObj(c.auth) ? c.auth : { scheme: 'none' });
}

function normalizeAuth(a: Obj): OutboundAuth {
  const out: Obj = { ...a };
  if (a.scheme === 'oauth2_client_credentials' && out.scopes === undefined) out.scopes = [];
  // No further keys is no `also` (never written empty: the CGS of a one-key catalog is unchanged).
  if (Array.isArray(a.also)) {
    if (a.also.length === 0) delete out.also;
    else out.also = (a.also as unknown[]).map((k) => (isObj(k) ? { ...k } : k));
  }
  return out as unknown as OutboundAuth;
}
