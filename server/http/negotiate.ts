/**
 * Content negotiation, on `negotiator` (q values, wildcards, parameters, ties by the client's
 * order), for every route that negotiates: the four execute formats, and discovery's JSON or
 * Markdown. Accept headers repeat across requests, so answers are kept in a small map.
 */
import Negotiator from 'negotiator';

export type Format = 'toon' | 'plain' | 'json' | 'ndjson';

/**
 * The media types of the execute formats, in the order a wildcard picks them: TOON first (the
 * default), then JSON, plain text and NDJSON (`application/ndjson` is an alias).
 */
const EXECUTE_TYPES: Array<[string, Format]> = [
  ['text/toon', 'toon'],
  ['application/json', 'json'],
  ['text/plain', 'plain'],
  ['application/x-ndjson', 'ndjson'],
  ['application/ndjson', 'ndjson'],
];
const BY_TYPE = new Map(EXECUTE_TYPES);
const OFFERED = EXECUTE_TYPES.map(([t]) => t);

/** The types an execute route answers, for a 406's hint. */
export const EXECUTE_MEDIA_TYPES = 'text/toon (the default), application/json, text/plain, application/x-ndjson';

const seen = new Map<string, Format | undefined>();
const SEEN_MAX = 256;

/** The execute format for an Accept header; undefined when none is acceptable (406). No header: TOON. */
export function negotiate(accept: string | undefined): Format | undefined {
  if (!accept || !accept.trim()) return 'toon';
  if (seen.has(accept)) return seen.get(accept);
  const type = new Negotiator({ headers: { accept: withoutParameters(accept) } }).mediaType(OFFERED);
  const f = type === undefined ? undefined : BY_TYPE.get(type);
  if (seen.size >= SEEN_MAX) seen.delete(seen.keys().next().value!);
  seen.set(accept, f);
  return f;
}

/**
 * The Accept header with only the q of each range: svc's formats take no parameters, so a client
 * asking for `application/json; charset=utf-8` is asking for JSON.
 */
function withoutParameters(accept: string): string {
  if (!accept.includes(';')) return accept;
  return accept
    .split(',')
    .map((range) => {
      const [type, ...params] = range.split(';');
      const q = params.find((p) => /^\s*q\s*=/i.test(p));
      return q ? `${type};${q}` : type;
    })
    .join(',');
}

/** True when an Accept header prefers Markdown to JSON (JSON wins ties and wildcards; no header: JSON). */
export function prefersMarkdown(accept: string | undefined): boolean {
  if (!accept) return false;
  return (
    new Negotiator({ headers: { accept: withoutParameters(accept) } }).mediaType([
      'application/json',
      'text/markdown',
    ]) === 'text/markdown'
  );
}
