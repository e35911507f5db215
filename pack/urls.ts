/**
 * Backend URLs as svc shows them: never their userinfo (`user:password@`), query string or
 * fragment, which may hold credentials. Pure.
 */

const SCHEME_USERINFO = /([a-z][a-z0-9+.-]*:\/\/)[^\s/\\?#]*@/gi;

/**
 * The display form of a backend URL: `scheme://host:port/path`, never the userinfo
 * (`user:password@`), the query string or the fragment, which may hold credentials. For the
 * operator (start-up lines, `svc catalogs`); agent-facing errors name the entry instead.
 * Text that is not an absolute http(s) URL still loses anything between `://` and an `@`.
 *
 * @example displayUrl('http://admin:pw@127.0.0.1:3000/v2?key=k') // 'http://127.0.0.1:3000/v2'
 */
export function displayUrl(url: string): string {
  const u = parse(url);
  if (u && (u.protocol === 'http:' || u.protocol === 'https:'))
    return u.origin + (u.pathname === '/' ? '' : u.pathname);
  return url.replace(SCHEME_USERINFO, '$1').replace(/[?#].*$/s, '');
}

/** Whether a URL carries userinfo (`user@` or `user:password@`). */
export function hasUserinfo(url: string): boolean {
  const u = parse(url);
  return u ? u.username !== '' || u.password !== '' : new RegExp(SCHEME_USERINFO.source, 'i').test(url);
}

/**
 * `url` without its userinfo, otherwise as given. undici pools by origin and never sends userinfo,
 * so this changes nothing on the wire; it keeps the credential out of everything that shows the URL.
 */
export function withoutUserinfo(url: string): string {
  const u = parse(url);
  if (!u) return url.replace(SCHEME_USERINFO, '$1');
  if (u.username === '' && u.password === '') return url;
  u.username = '';
  u.password = '';
  return u.pathname === '/' && !u.search && !u.hash && !/^[^?#]*:\/\/[^/?#]*\/(?:[?#]|$)/.test(url)
    ? u.href.replace(/\/$/, '')
    : u.href;
}

function parse(url: string): URL | undefined {
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}
