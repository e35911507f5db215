/**
 * Request targets (`/path?query`) that the WHATWG URL parser would leave exactly as they are, so
 * their path and query can be split off without running it: the inbound router's target and the
 * runtime's outgoing vendor requests. Pure.
 */

/** Unreserved characters, sub-delims but `'` (which a query percent-encodes), `:@/?%`, after a first `/`. */
const PLAIN_TARGET = /^\/[A-Za-z0-9\-._~!$&()*+,;=:@/?%]*$/;
/** `/.` or `/%2e` (a dot segment the URL parser would resolve; also catches `/.well-known`, harmlessly). */
const DOT_SEGMENT = /\/(\.|%2e)/i;

/**
 * True when `target` is a path (and query) that `new URL(target, base)` keeps byte for byte: it
 * starts with one `/` (`//host` would name a host), holds only characters no part of the URL
 * encodes, no backslash, fragment or space, and no dot segment.
 */
export function isPlainTarget(target: string): boolean {
  return target.charCodeAt(1) !== 47 && PLAIN_TARGET.test(target) && !DOT_SEGMENT.test(target);
}

/** What the server's routes read of a request's URL. */
export interface RequestUrl {
  /** The path, as the URL parser gives it (`/execute/ph/s1`). */
  readonly pathname: string;
  /** `?` and the query, or '' when there is none (or only `?`). */
  readonly search: string;
  /** The query's parameters (made when first read). */
  readonly searchParams: URLSearchParams;
}

/** A plain target split at its first `?`; its parameters parsed when first asked for. */
class PlainUrl implements RequestUrl {
  private params: URLSearchParams | undefined;

  constructor(
    readonly pathname: string,
    readonly search: string,
  ) {}

  get searchParams(): URLSearchParams {
    return (this.params ??= new URLSearchParams(this.search));
  }
}

/**
 * The URL of request target `target` (`req.url`) against `base`: split by hand when it is plain
 * (`isPlainTarget`), else parsed by `new URL` (which throws on what it cannot parse).
 * @example requestUrl('/v1/registry?q=beer', 'http://svc.invalid').pathname // '/v1/registry'
 */
export function requestUrl(target: string, base: string): RequestUrl {
  if (!isPlainTarget(target)) return new URL(target, base);
  const q = target.indexOf('?');
  if (q < 0) return new PlainUrl(target, '');
  return new PlainUrl(target.slice(0, q), q === target.length - 1 ? '' : target.slice(q));
}
