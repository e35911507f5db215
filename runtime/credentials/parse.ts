/**
 * The credentials file's content checked against the catalogs in force: every problem is one
 * `credentials_config_invalid` naming the place (`tenants.acme.credentials.github`), never a value.
 * Pure: reading the file, its mode and the TLS files is the server's (server/credentials.ts).
 */
import { svcError, SvcFailure } from '../../common/errors.js';
import type { OutboundAuth } from '../../pack/cgs.js';
import { FITS, type Credential, type CredentialScheme, type TenantSettings } from './types.js';

/** An entry's settings as written: TLS as file paths (read by the server). */
export interface EntryText {
  fallback: 'environment' | 'none';
  forward?: string;
  tls?: { cert: string; key: string; ca?: string };
}

export interface CredentialsText {
  entries: Record<string, EntryText>;
  tenants: Record<string, TenantSettings>;
}

/** The fields of each credential scheme: required, and optional. */
const FIELDS: Record<CredentialScheme, { need: string[]; may: string[] }> = {
  api_key: { need: ['key'], may: ['also'] },
  bearer: { need: ['token'], may: [] },
  basic: { need: ['username', 'password'], may: [] },
  oauth2_client_credentials: { need: ['client_id', 'client_secret'], may: ['token_url', 'scopes', 'audience'] },
  oauth2_refresh_token: { need: ['client_id', 'refresh_token'], may: ['client_secret', 'token_url', 'scopes'] },
};

const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;
/** Headers that carry svc's own credentials or the transport's: never a vendor credential. */
const NEVER_FORWARDED = new Set([
  'authorization',
  'x-api-key',
  'cookie',
  'proxy-authorization',
  'host',
  'mcp-session-id',
]);

export class CredentialsProblem extends SvcFailure {}

function fail(where: string, message: string, hint: string): never {
  throw new CredentialsProblem([
    svcError('credentials_config_invalid', `the credentials file: ${where ? `${where} ` : ''}${message}`, { hint }),
  ]);
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function object(v: unknown, where: string): Obj {
  if (v === undefined || v === null) return {};
  if (!isObj(v)) fail(where, 'must be a mapping', 'see docs/auth.md "Outbound credentials" for the format');
  return v;
}

function only(o: Obj, where: string, keys: string[]): void {
  for (const k of Object.keys(o))
    if (!keys.includes(k))
      fail(where, `has an unknown key \`${k.slice(0, 40)}\``, `the keys here are ${keys.join(', ')}`);
}

/** A string value; `emptyOk` where an empty one is valid (a basic-auth password). */
function text(v: unknown, where: string, { emptyOk = false } = {}): string {
  if (typeof v === 'string' && (emptyOk || v !== '')) return v;
  if (emptyOk) fail(where, 'must be a string (it may be empty)', 'write the value in quotes, "" for none');
  fail(where, 'must be a non-empty string', 'write the value as a string');
}

/**
 * Check the file's data (parsed JSON or YAML) against the auth of each loaded catalog
 * (`auths`): entries must exist, each credential must fit its catalog's scheme.
 */
export function parseCredentials(data: unknown, auths: ReadonlyMap<string, OutboundAuth>): CredentialsText {
  const top = object(data, '');
  only(top, 'the top level', ['entries', 'tenants']);
  const entries: Record<string, EntryText> = {};
  for (const [id, raw] of Object.entries(object(top.entries, 'entries'))) {
    const where = `entries.${id}`;
    const auth = knownEntry(id, where, auths);
    entries[id] = entrySettings(object(raw, where), where, auth);
  }
  const tenants: Record<string, TenantSettings> = {};
  for (const [tenant, raw] of Object.entries(object(top.tenants, 'tenants'))) {
    const where = `tenants.${tenant}`;
    const t = object(raw, where);
    only(t, where, ['read_only', 'credentials', 'users']);
    if (t.read_only !== undefined && typeof t.read_only !== 'boolean')
      fail(`${where}.read_only`, 'must be true or false', 'write read_only: true');
    const users: Record<string, Record<string, Credential>> = {};
    for (const [subject, u] of Object.entries(object(t.users, `${where}.users`))) {
      const uw = `${where}.users.${subject}`;
      const uo = object(u, uw);
      only(uo, uw, ['credentials']);
      users[subject] = credentials(uo.credentials, `${uw}.credentials`, auths);
    }
    tenants[tenant] = {
      read_only: t.read_only === true,
      credentials: credentials(t.credentials, `${where}.credentials`, auths),
      users,
    };
  }
  return { entries, tenants };
}

function knownEntry(id: string, where: string, auths: ReadonlyMap<string, OutboundAuth>): OutboundAuth {
  const auth = auths.get(id);
  if (!auth)
    fail(
      where,
      `names catalog \`${id.slice(0, 60)}\`, which is not loaded`,
      `loaded catalogs: ${[...auths.keys()].join(', ') || 'none'}; remove the entry or load its catalog`,
    );
  return auth;
}

function entrySettings(o: Obj, where: string, auth: OutboundAuth): EntryText {
  only(o, where, ['fallback', 'forward', 'tls']);
  const out: EntryText = { fallback: 'environment' };
  if (o.fallback !== undefined) {
    if (o.fallback !== 'environment' && o.fallback !== 'none')
      fail(
        `${where}.fallback`,
        'must be environment or none',
        'none refuses callers without a credential of their own',
      );
    out.fallback = o.fallback;
  }
  if (o.forward !== undefined) {
    const f = object(o.forward, `${where}.forward`);
    only(f, `${where}.forward`, ['header']);
    const header = text(f.header, `${where}.forward.header`);
    if (!HEADER_NAME.test(header)) fail(`${where}.forward.header`, 'is not a header name', 'write e.g. X-Vendor-Token');
    if (NEVER_FORWARDED.has(header.toLowerCase()))
      fail(
        `${where}.forward.header`,
        `is \`${header}\`, which carries svc's own or the transport's credentials`,
        'name a header of its own, e.g. X-Vendor-Token',
      );
    if (auth.scheme === 'none' || auth.scheme === 'basic')
      fail(
        `${where}.forward`,
        `cannot forward to a catalog whose auth scheme is ${auth.scheme}`,
        'forwarding fits api_key, bearer and oauth2_client_credentials catalogs',
      );
    if (auth.scheme === 'api_key' && auth.also)
      fail(
        `${where}.forward`,
        `cannot forward to a catalog that sends ${auth.also.length + 1} API keys together (a header carries one)`,
        'give each tenant or user its keys under credentials instead',
      );
    out.forward = header.toLowerCase();
  }
  if (o.tls !== undefined) {
    const tw = `${where}.tls`;
    const tls = object(o.tls, tw);
    only(tls, tw, ['cert', 'key', 'ca']);
    out.tls = { cert: text(tls.cert, `${tw}.cert`), key: text(tls.key, `${tw}.key`) };
    if (tls.ca !== undefined) out.tls.ca = text(tls.ca, `${tw}.ca`);
  }
  return out;
}

function credentials(v: unknown, where: string, auths: ReadonlyMap<string, OutboundAuth>): Record<string, Credential> {
  const out: Record<string, Credential> = {};
  for (const [id, raw] of Object.entries(object(v, where))) {
    const cw = `${where}.${id}`;
    out[id] = credential(object(raw, cw), cw, knownEntry(id, cw, auths));
  }
  return out;
}

function credential(o: Obj, where: string, auth: OutboundAuth): Credential {
  const scheme = o.scheme;
  if (typeof scheme !== 'string' || !Object.hasOwn(FIELDS, scheme))
    fail(
      `${where}.scheme`,
      typeof scheme === 'string' ? `names an unknown scheme \`${scheme.slice(0, 40)}\`` : 'is missing',
      `write one of ${Object.keys(FIELDS).join(', ')}`,
    );
  const s = scheme as CredentialScheme;
  if (!FITS[auth.scheme]!.includes(s))
    fail(
      where,
      `is a ${s} credential, and the catalog's auth scheme is ${auth.scheme}`,
      auth.scheme === 'none'
        ? 'this catalog sends no credentials; remove the entry'
        : `a ${auth.scheme} catalog takes ${FITS[auth.scheme]!.join(' or ')}`,
    );
  const { need, may } = FIELDS[s];
  only(o, where, ['scheme', ...need, ...may]);
  const out: Obj = { scheme: s };
  // A basic credential's password may be empty (a key as the user name, `key:`).
  for (const k of need) out[k] = text(o[k], `${where}.${k}`, { emptyOk: s === 'basic' && k === 'password' });
  for (const k of may) {
    if (o[k] === undefined) continue;
    if (k === 'also') out.also = alsoKeys(o.also, `${where}.also`, auth);
    else if (k === 'scopes') {
      if (!Array.isArray(o[k]) || !(o[k] as unknown[]).every((x) => typeof x === 'string' && x !== ''))
        fail(`${where}.scopes`, 'must be a list of strings', 'write scopes: [read, write]');
      out[k] = [...(o[k] as string[])];
    } else out[k] = text(o[k], `${where}.${k}`);
  }
  if (s === 'api_key' && auth.scheme === 'api_key' && auth.also && out.also === undefined)
    fail(
      `${where}.also`,
      `is missing (the catalog sends ${auth.also.map((k) => `\`${k.name}\``).join(', ')} with the key)`,
      `write also: {${auth.also.map((k) => `${k.name}: "..."`).join(', ')}}`,
    );
  const tokenUrl = out.token_url as string | undefined;
  if (tokenUrl !== undefined && !/^https?:\/\/[^/]/i.test(tokenUrl))
    fail(`${where}.token_url`, 'must be an absolute http(s) URL', 'write the token endpoint of the vendor');
  if (
    (s === 'oauth2_client_credentials' || s === 'oauth2_refresh_token') &&
    !tokenUrl &&
    auth.scheme !== 'oauth2_client_credentials'
  )
    fail(
      `${where}.token_url`,
      'is missing (the catalog names no token endpoint)',
      'write the token endpoint of the vendor',
    );
  return out as unknown as Credential;
}

/**
 * The values of an `api_key` credential's further keys, by the catalog's names (`auth.also`): a
 * mapping with every one of them and no other (a header name matches whatever its case).
 */
function alsoKeys(v: unknown, where: string, auth: OutboundAuth): Record<string, string> {
  const wanted = auth.scheme === 'api_key' ? (auth.also ?? []) : [];
  if (wanted.length === 0) fail(where, 'is not used: the catalog sends one key', 'remove `also`');
  const given = object(v, where);
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(given)) {
    const k = wanted.find((w) => w.name === name || (w.in === 'header' && w.name.toLowerCase() === name.toLowerCase()));
    if (!k)
      fail(
        where,
        `has an unknown key \`${name.slice(0, 40)}\``,
        `the catalog's further keys are ${wanted.map((w) => w.name).join(', ')}`,
      );
    out[k.name] = text(value, `${where}.${k.name}`);
  }
  const missing = wanted.filter((w) => out[w.name] === undefined).map((w) => w.name);
  if (missing.length)
    fail(
      where,
      `lacks ${missing.map((n) => `\`${n}\``).join(', ')}`,
      `the catalog sends every further key with the key: write ${missing.map((n) => `${n}: "..."`).join(', ')}`,
    );
  return out;
}
