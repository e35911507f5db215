/**
 * Outbound auth from `securitySchemes`. The document's `security` (else the first operation's that
 * has one) lists requirements, any one of which will do; a requirement names schemes that are all
 * needed together. Among the requirements svc can send whole, the one a single secret fills wins,
 * in this order: HTTP bearer, an API key in a header, an API key in the query, then several API
 * keys sent together or HTTP basic (several values), then OAuth2 and OpenID Connect as a bearer
 * token read from the environment (last: an access token expires, and the import cannot obtain
 * one). Ties go to document order. A requirement naming several API keys becomes one `api_key`
 * block: its first key as `name`, the others as `also`. A requirement mixing kinds (an API key with
 * OAuth2, bearer with an API key) cannot be sent whole: it is used only when no other can, with a
 * review note naming what is not sent. The catalog names environment variables only:
 * `<ENTRY_ID>_TOKEN`, `_API_KEY`, `_USERNAME`, `_PASSWORD`, and for a further key
 * `<ENTRY_ID>_<SCHEME_NAME>` (`appToken` -> `ACME_APP_TOKEN`).
 */
import type { ImportAuth, ImportLog } from './model.js';
import { isObj, type Schema } from './schema.js';

/** How svc sends one scheme, and its rank: lower is preferred. */
interface How {
  auth: ImportAuth;
  rank: number;
  kind: string;
}

/** Rank of a requirement needing several API keys (after one key, with basic: several values). */
const SEVERAL_KEYS = 3;

function fromScheme(s: Schema, prefix: string): How | undefined {
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

/** The requirements of the document: its own `security`, else the first operation's that has one. */
function requirements(doc: Schema): string[][] {
  let found: Schema[] = Array.isArray(doc.security) ? doc.security.filter(isObj) : [];
  if (found.length === 0) {
    for (const item of Object.values(isObj(doc.paths) ? doc.paths : {}))
      for (const op of Object.values(isObj(item) ? item : {}))
        if (found.length === 0 && isObj(op) && Array.isArray(op.security)) found = op.security.filter(isObj);
  }
  // `{}` (no credentials) is no scheme to send.
  return found.map((r) => Object.keys(r)).filter((names) => names.length > 0);
}

/** A sendable scheme of the document, by its name. */
type Sendable = How & { name: string; s: Schema };

/** What svc would send for one requirement: its schemes, and whether that is all it asks for. */
interface Choice {
  /** The schemes sent (several only for API keys sent together). */
  sent: Sendable[];
  /** The requirement's schemes left out (a mixed requirement, or a scheme svc cannot send). */
  left: string[];
  auth: ImportAuth;
  rank: number;
}

/** `appToken`, `app-token` -> `APP_TOKEN`. */
const envPart = (name: string) =>
  name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toUpperCase()
    .replace(/[^A-Z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');

/** One `api_key` block for several API keys: the first as the key, the rest as `also`. */
function severalKeys(keys: Sendable[], prefix: string): { auth: ImportAuth; sent: Sendable[] } {
  const first = keys[0]!.auth as Extract<ImportAuth, { scheme: 'api_key' }>;
  const place = (a: { in: string; name: string }) => `${a.in} ${a.in === 'header' ? a.name.toLowerCase() : a.name}`;
  const places = new Set([place(first)]);
  const envs = new Set([first.env]);
  const also: NonNullable<typeof first.also> = [];
  const sent = [keys[0]!];
  for (const k of keys.slice(1)) {
    const a = k.auth as typeof first;
    if (places.has(place(a))) continue; // one header or parameter carries one value
    places.add(place(a));
    const base = `${prefix}_${envPart(k.name) || 'KEY'}`;
    let env = base;
    for (let n = 2; envs.has(env); n++) env = `${base}_${n}`;
    envs.add(env);
    also.push({ in: a.in, name: a.name, env });
    sent.push(k);
  }
  return { auth: also.length ? { ...first, also } : first, sent };
}

/** What svc sends for the requirement naming `names`, or undefined when it can send none of them. */
function choose(names: string[], how: Map<string, Sendable>, prefix: string): Choice | undefined {
  const unique = [...new Set(names)];
  const sendable = unique.flatMap((n) => (how.has(n) ? [how.get(n)!] : []));
  if (sendable.length === 0) return undefined;
  const keys = sendable.filter((x) => x.auth.scheme === 'api_key');
  const best = sendable.reduce((a, b) => (a.rank <= b.rank ? a : b));
  if (unique.length === 1) return { sent: [best], left: [], auth: best.auth, rank: best.rank };
  // Several API keys (alone, or the best of a mixed requirement): all of them, sent together.
  const many = keys.length > 1 && (keys.length === unique.length || best.auth.scheme === 'api_key');
  const { auth, sent } = many ? severalKeys(keys, prefix) : { auth: best.auth, sent: [best] };
  const left = unique.filter((n) => !sent.some((x) => x.name === n));
  return { sent, left, auth, rank: left.length === 0 ? SEVERAL_KEYS : best.rank };
}

/** The chosen requirement: one sent whole over one that is not, then by rank, then document order. */
function better(a: Choice, b: Choice): boolean {
  if ((a.left.length === 0) !== (b.left.length === 0)) return a.left.length === 0;
  return a.rank <= b.rank;
}

/**
 * The catalog's auth block, with a review note saying which scheme was chosen, why, and which
 * were not (and the chosen scheme's own description, which often says how to write the secret).
 */
export function importAuth(doc: Schema, entryId: string, log: ImportLog): ImportAuth {
  const schemes = isObj(doc.components) && isObj(doc.components.securitySchemes) ? doc.components.securitySchemes : {};
  const prefix = entryId.toUpperCase().replace(/[^A-Z0-9]+/g, '_');
  const reqs = requirements(doc);
  const names = [...new Set(reqs.flat())];
  const how = new Map<string, Sendable>();
  for (const name of names) {
    const s: unknown = schemes[name];
    const h = isObj(s) ? fromScheme(s, prefix) : undefined;
    if (h) how.set(name, { ...h, name, s: s as Schema });
  }
  const best = reqs
    .map((r) => choose(r, how, prefix))
    .reduce<Choice | undefined>((a, b) => (!b ? a : a && better(a, b) ? a : b), undefined);
  if (!best) {
    if (names.length) log.review.push({ what: 'auth', note: `no supported scheme among: ${names.join(', ')}` });
    return { scheme: 'none' };
  }
  log.review.push({ what: 'auth', note: chosenNote(best, [...how.values()], names) });
  if (best.left.length)
    log.review.push({
      what: 'auth',
      note:
        `the document requires ${[...best.sent.map((x) => x.name), ...best.left].map((n) => `\`${n}\``).join(' and ')} together, ` +
        `and svc sends ${best.sent.map((x) => `\`${x.name}\``).join(' and ')} only: calls may be refused until the catalog's auth is written by hand`,
    });
  if (best.sent[0]!.rank === 4)
    log.review.push({ what: 'auth', note: `OAuth2 is sent as a bearer token: put an access token in ${prefix}_TOKEN` });
  if (best.auth.scheme === 'basic')
    log.review.push({
      what: 'auth',
      note: `basic auth: an empty password is valid (set ${prefix}_PASSWORD to the empty string when the vendor takes a key as the user name)`,
    });
  return best.auth;
}

/** The review note of the chosen requirement: what is sent, why, and what else was offered. */
function chosenNote(best: Choice, sendable: Sendable[], names: string[]): string {
  const others = sendable.filter((x) => !best.sent.includes(x)).map((x) => `${x.name} (${x.kind})`);
  const unsupported = names.filter((n) => !sendable.some((x) => x.name === n));
  const one = best.sent[0]!;
  const what =
    best.sent.length === 1
      ? `scheme \`${one.name}\` (${one.kind}) chosen`
      : `schemes ${best.sent.map((x) => `\`${x.name}\` (${x.kind})`).join(' and ')} chosen, sent together`;
  const why =
    others.length === 0
      ? ''
      : best.sent.length > 1
        ? ': the document requires these keys together'
        : best.rank < 3
          ? ': of the schemes offered, one secret fills it'
          : best.rank === 3
            ? ': of the schemes offered, basic is preferred to an OAuth2 token, which expires'
            : '';
  const desc = typeof one.s.description === 'string' && one.s.description.trim() ? one.s.description.trim() : '';
  return (
    `${what}${why}` +
    `${others.length ? `; also offered: ${others.join(', ')}` : ''}` +
    `${unsupported.length ? `; not supported: ${unsupported.join(', ')}` : ''}` +
    `${desc ? `; its description: ${desc.replace(/\s+/g, ' ').slice(0, 200)}` : ''}`
  );
}

/** The environment variables an auth block reads. */
export function authEnv(a: ImportAuth): string[] {
  switch (a.scheme) {
    case 'none':
      return [];
    case 'basic':
      return [a.username_env, a.password_env];
    case 'api_key':
      return [a.env, ...(a.also ?? []).map((k) => k.env)];
    default:
      return [a.env];
  }
}

/** What goes out on every call, in words: `the header \`X-App-Key\` (ACME_API_KEY) and ...`. */
export function authSent(a: ImportAuth): string {
  if (a.scheme !== 'api_key') return '';
  return [a, ...(a.also ?? [])]
    .map((k) => `the ${k.in === 'header' ? 'header' : 'query parameter'} \`${k.name}\` (from \`${k.env}\`)`)
    .join(' and ');
}
