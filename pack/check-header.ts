/**
 * Checks of a CGS header: a safe entry id, a positive version, an absolute http(s) backend URL
 * without credentials, and an auth block with every field its scheme needs (and, for an API key,
 * further keys `also` that are whole and distinct).
 */
import type { Cgs } from './cgs.js';
import { ENTRY_ID_PATTERN } from './cgs.js';
import type { Fail } from './check-context.js';
import { displayUrl, hasUserinfo } from './urls.js';

/** Reports problems of the entry id, version, backend and auth block. */
export function checkHeader(cgs: Cgs, fail: Fail): void {
  if (!ENTRY_ID_PATTERN.test(cgs.entry_id)) {
    fail(
      '/entry_id',
      'unsafe_entry_id',
      `entry_id \`${cgs.entry_id}\` is not a safe identifier`,
      'use a lower-case letter first, then lower-case letters, digits, `_` or `-` (at most 63), for example `brewery`',
    );
  }
  if (!Number.isSafeInteger(cgs.version) || cgs.version < 1) {
    fail(
      '/version',
      'bad_version',
      `version ${JSON.stringify(cgs.version)} is not a positive integer`,
      'write `version: 1` and raise it by one for each published change',
    );
  }
  let url: URL | undefined;
  try {
    url = new URL(cgs.backend.base_url);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    fail(
      '/backend/base_url',
      'bad_backend',
      `backend URL \`${displayUrl(cgs.backend.base_url)}\` is not an absolute http(s) URL`,
      'write for example `backend: {url: https://api.example.com/v2}`',
    );
  } else if (hasUserinfo(cgs.backend.base_url)) {
    // A catalog is served as it is (include_cgs=true): a credential in it would reach every agent.
    fail(
      '/backend/base_url',
      'bad_backend',
      `backend URL \`${displayUrl(cgs.backend.base_url)}\` carries user:password`,
      'remove it: declare the credential in the auth block, which names an environment variable',
    );
  }
  if (
    cgs.auth.scheme === 'oauth2_client_credentials' &&
    typeof cgs.auth.token_url === 'string' &&
    hasUserinfo(cgs.auth.token_url)
  ) {
    fail(
      '/auth/token_url',
      'bad_auth',
      `token_url \`${displayUrl(cgs.auth.token_url)}\` carries user:password`,
      'remove it: the client id and secret come from client_id_env and client_secret_env',
    );
  }
  const a = cgs.auth as unknown as Record<string, unknown>;
  const need: Record<string, string[]> = {
    none: [],
    api_key: ['in', 'name', 'env'],
    bearer: ['env'],
    basic: ['username_env', 'password_env'],
    oauth2_client_credentials: ['token_url', 'client_id_env', 'client_secret_env'],
  };
  for (const k of need[cgs.auth.scheme] ?? []) {
    if (a[k] === undefined)
      fail(
        '/auth',
        'bad_auth',
        `auth scheme \`${cgs.auth.scheme}\` needs \`${k}\``,
        `add \`${k}:\` to the auth block (secrets are named by environment variable, never written in the catalog)`,
      );
  }
  checkAlso(cgs, fail);
}

/**
 * The further keys of an `api_key` block: only there, each with `in`, `name` and `env`, and no
 * two keys (the first included) in the same place (a header name is case-insensitive).
 */
function checkAlso(cgs: Cgs, fail: Fail): void {
  const a = cgs.auth as unknown as Record<string, unknown>;
  if (a.also === undefined) return;
  if (cgs.auth.scheme !== 'api_key') {
    fail(
      '/auth/also',
      'bad_auth',
      `auth scheme \`${cgs.auth.scheme}\` takes no \`also\``,
      'further keys go with `scheme: api_key`; remove `also:` or make the first key an api_key',
    );
    return;
  }
  const place = (k: { in?: unknown; name?: unknown }) =>
    `${String(k.in)} ${k.in === 'header' ? String(k.name).toLowerCase() : String(k.name)}`;
  const seen = new Set([place(cgs.auth)]);
  (cgs.auth.also ?? []).forEach((k, i) => {
    const at = `/auth/also/${i}`;
    const missing = (['in', 'name', 'env'] as const).filter((f) => k[f] === undefined);
    if (missing.length) {
      fail(
        at,
        'bad_auth',
        `further key ${i + 1} of the auth block needs ${missing.map((f) => `\`${f}\``).join(' and ')}`,
        'write each further key as {in: header, name: X-App-Token, env: ACME_APP_TOKEN}',
      );
      return;
    }
    if (seen.has(place(k)))
      fail(
        at,
        'bad_auth',
        `further key ${i + 1} of the auth block is sent in the ${k.in} as \`${k.name}\`, like an earlier key`,
        'each key needs a header or query parameter of its own: remove the duplicate or fix its name',
      );
    seen.add(place(k));
  });
}
