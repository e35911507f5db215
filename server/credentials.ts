/**
 * The outbound credentials file (`SVC_OUTBOUND_CREDENTIALS_FILE`, JSON or YAML): read at start-up
 * (refused when group or others may read it, malformed, or naming an unknown catalog or scheme),
 * read again on SIGHUP (a bad file then keeps the one in force and is logged), and rotated OAuth2
 * refresh tokens written back into it atomically (a temporary file renamed over it, mode 0600).
 * The format is docs/auth.md "Outbound credentials"; checking it is runtime/credentials/parse.ts.
 */
import { createHash } from 'node:crypto';
import { readFile, rename, stat, writeFile } from 'node:fs/promises';
import { parse as parseYaml, parseDocument } from 'yaml';
import { fail, SvcFailure } from '../common/errors.js';
import type { Logger } from '../common/log.js';
import { errnoCode } from '../pack/errno.js';
import type { Registry } from '../pack/registry.js';
import {
  AuthResolver,
  defaultHttpClient,
  parseCredentials,
  type CredentialPlace,
  type CredentialsConfig,
} from '../runtime/index.js';
import type { OutboundAuth } from '../pack/cgs.js';

export const CREDENTIALS_ENV = 'SVC_OUTBOUND_CREDENTIALS_FILE';

/** Refuse a secret file group or others may read or write (its name is the operator's own setting). */
async function privateFile(path: string, what: string): Promise<void> {
  let mode: number;
  try {
    mode = (await stat(path)).mode;
  } catch (e) {
    return fail(
      'credentials_config_invalid',
      `${what} cannot be read (${errnoCode(e)})`,
      `point ${CREDENTIALS_ENV} at an existing file`,
    );
  }
  if (mode & 0o077)
    fail(
      'credentials_config_invalid',
      `${what} may be read or written by group or others (mode ${(mode & 0o777).toString(8).padStart(4, '0')})`,
      `it holds secrets: chmod 600 ${what === 'the credentials file' ? `"$${CREDENTIALS_ENV}"` : 'it'}`,
    );
}

async function readText(path: string, what: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    return fail(
      'credentials_config_invalid',
      `${what} cannot be read (${errnoCode(e)})`,
      'check the path and that svc may read it',
    );
  }
}

/** The file's data: JSON when it looks like JSON, else YAML (positions only, never the text). */
function decode(text: string): unknown {
  try {
    return parseYaml(text, { uniqueKeys: true, maxAliasCount: 100 }) as unknown;
  } catch (e) {
    const pos = (e as { linePos?: Array<{ line: number; col: number }> }).linePos?.[0];
    return fail(
      'credentials_config_invalid',
      `the credentials file is not valid JSON or YAML${pos ? ` (line ${pos.line}, column ${pos.col})` : ''}`,
      'fix the syntax; see docs/auth.md "Outbound credentials" for the format',
    );
  }
}

/** Read, check and resolve the credentials file against the catalogs of `registry`. */
export async function loadCredentials(path: string, registry: Registry): Promise<CredentialsConfig> {
  await privateFile(path, 'the credentials file');
  const data = decode(await readText(path, 'the credentials file'));
  const auths = new Map<string, OutboundAuth>(registry.list().map((e) => [e.entry_id, e.cgs.auth]));
  const text = parseCredentials(data, auths);
  const entries: CredentialsConfig['entries'] = {};
  for (const [id, e] of Object.entries(text.entries)) {
    const { tls, ...rest } = e;
    entries[id] = rest;
    if (!tls) continue;
    const what = (k: string) => `entries.${id}.tls.${k} of the credentials file`;
    await privateFile(tls.key, what('key'));
    const cert = await readText(tls.cert, what('cert'));
    const key = await readText(tls.key, what('key'));
    const ca = tls.ca === undefined ? undefined : await readText(tls.ca, what('ca'));
    if (!cert.includes('-----BEGIN') || !key.includes('-----BEGIN') || (ca !== undefined && !ca.includes('-----BEGIN')))
      fail(
        'credentials_config_invalid',
        `entries.${id}.tls names a file that is not PEM`,
        'give PEM files: cert, key and optionally ca',
      );
    const id16 = createHash('sha256')
      .update(`${cert}\0${key}\0${ca ?? ''}`)
      .digest('hex')
      .slice(0, 16);
    entries[id].tls = { id: id16, cert, key, ...(ca !== undefined ? { ca } : {}) };
  }
  return { entries, tenants: text.tenants };
}

/** The file in force: reload (SIGHUP) and the write-back of rotated refresh tokens, one at a time. */
export class CredentialsFile {
  private chain: Promise<void> = Promise.resolve();

  constructor(
    readonly path: string,
    private readonly logger: Logger,
  ) {}

  /** Read the file again; a problem is logged and the config in force stays (undefined). */
  async reload(registry: Registry): Promise<CredentialsConfig | undefined> {
    return this.serial(async () => {
      try {
        const c = await loadCredentials(this.path, registry);
        this.logger.info('outbound credentials reloaded', { tenants: Object.keys(c.tenants).length });
        return c;
      } catch (e) {
        const first = e instanceof SvcFailure ? e.errors[0] : undefined;
        this.logger.error('outbound credentials not reloaded: the file in force stays', {
          code: first?.code ?? 'internal_error',
          problem: first?.message ?? 'unexpected error',
        });
        return undefined;
      }
    });
  }

  /**
   * Write a rotated refresh token where its credential sits (temp file + rename, mode 0600).
   * `replaces`: the tokens of its chain (the one loaded, and those written back since); when the
   * file holds another token there, an operator put it there, and it is kept (nothing written).
   */
  writeBack(place: CredentialPlace, token: string, replaces?: readonly string[]): Promise<void> {
    return this.serial(async () => {
      try {
        const text = await readFile(this.path, 'utf8');
        const at = [
          'tenants',
          place.tenant,
          ...(place.subject !== undefined ? ['users', place.subject] : []),
          'credentials',
          place.entry,
          'refresh_token',
        ];
        const out = /^\s*[{[]/.test(text) ? setJson(text, at, token, replaces) : setYaml(text, at, token, replaces);
        const where = { tenant: place.tenant, entry: place.entry };
        if (out === undefined) {
          // Changed since it was loaded (a reload raced a refresh): writing would leave a broken credential.
          this.logger.warn('a rotated refresh token was not written back: no refresh-token credential there', where);
          return;
        }
        if (out === KEPT) {
          this.logger.warn(
            'a rotated refresh token was not written back: the file holds another token there, set since it was loaded (SIGHUP reloads it)',
            where,
          );
          return;
        }
        const tmp = `${this.path}.${process.pid}.tmp`;
        await writeFile(tmp, out, { mode: 0o600 });
        await rename(tmp, this.path);
        this.logger.info('rotated refresh token written back', { tenant: place.tenant, entry: place.entry });
      } catch (e) {
        this.logger.error('a rotated refresh token could not be written back; it is kept in memory', {
          tenant: place.tenant,
          entry: place.entry,
          problem: errnoCode(e),
        });
      }
    });
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.chain.then(fn);
    this.chain = p.then(
      () => undefined,
      () => undefined,
    );
    return p;
  }
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What a setter answers when the file holds a token outside the chain being written (kept). */
const KEPT = Symbol('kept');

/** Whether the token found in the file may be replaced by a token of the chain `replaces`. */
function replaceable(found: unknown, replaces: readonly string[] | undefined): boolean {
  return replaces === undefined || (typeof found === 'string' && replaces.includes(found));
}

/** The JSON with the token at `at`; undefined when no refresh-token credential is there. */
function setJson(
  text: string,
  at: string[],
  value: string,
  replaces?: readonly string[],
): string | typeof KEPT | undefined {
  const data = JSON.parse(text) as unknown;
  let o: unknown = data;
  for (const k of at.slice(0, -1)) o = isObj(o) && Object.hasOwn(o, k) ? o[k] : undefined;
  if (!isObj(o) || o.scheme !== 'oauth2_refresh_token') return undefined;
  const key = at[at.length - 1]!;
  if (!replaceable(o[key], replaces)) return KEPT;
  o[key] = value;
  return `${JSON.stringify(data, null, 2)}\n`;
}

/** The YAML with the token at `at` (comments kept); undefined when no refresh-token credential is there. */
function setYaml(
  text: string,
  at: string[],
  value: string,
  replaces?: readonly string[],
): string | typeof KEPT | undefined {
  const doc = parseDocument(text);
  if (doc.getIn([...at.slice(0, -1), 'scheme']) !== 'oauth2_refresh_token') return undefined;
  if (!replaceable(doc.getIn(at), replaces)) return KEPT;
  doc.setIn(at, value);
  // The operator's layout stays: no folding of long lines, flow mappings written as they were.
  return doc.toString({ lineWidth: 0, flowCollectionPadding: false });
}

/** The outbound auth of a server: one resolver for all runs, and the credentials file behind it. */
export interface Outbound {
  auth: AuthResolver;
  file?: CredentialsFile;
  /** Read the file again (what SIGHUP does); false when it was refused and the one in force stays. */
  reload(registry: Registry): Promise<boolean>;
}

/** The resolver of `env` (and of `SVC_OUTBOUND_CREDENTIALS_FILE` when set; refused at start-up when bad). */
export async function outboundFromEnv(
  env: Record<string, string | undefined>,
  registry: Registry,
  logger: Logger,
): Promise<Outbound> {
  const path = env[CREDENTIALS_ENV]?.trim();
  if (!path) {
    const auth = new AuthResolver(env, defaultHttpClient());
    return { auth, reload: () => Promise.resolve(false) };
  }
  const file = new CredentialsFile(path, logger);
  const auth = new AuthResolver(env, defaultHttpClient(), Date.now, {
    config: await loadCredentials(path, registry),
    onRotate: (place, token, replaces) => void file.writeBack(place, token, replaces),
  });
  return {
    auth,
    file,
    reload: async (r) => {
      const c = await file.reload(r);
      if (c) auth.use(c);
      return c !== undefined;
    },
  };
}
