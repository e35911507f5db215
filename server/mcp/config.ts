/**
 * MCP settings read at start-up, each a clear `mcp_config_invalid` when malformed:
 * - `SVC_MCP_TRANSPORT_KEYS_FILE`: transport key rows, a JSON array of `{"key": "...", "label": "..."}`;
 *   when it holds any, `/mcp` requires `Authorization: Bearer <key>` (independent of inbound auth).
 * - `SVC_MCP_TENANTS_FILE`: the catalogs each tenant may use, a JSON object
 *   `{"<tenant_id>": {"apis": ["<entry_id>", ...]}, "*": {"apis": [...]}}`; a tenant not listed gets
 *   `"*"`, and with no `"*"` it is not restricted. The anonymous tenant is `""`.
 * - `SVC_MCP_ALLOWED_HOSTS` / `SVC_MCP_ALLOWED_ORIGINS`: older names of `SVC_ALLOWED_HOSTS` / `SVC_ALLOWED_ORIGINS`,
 *   merged into the one Host/Origin policy of every route (server/http/host-policy.ts).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Type } from '@sinclair/typebox';
import { fail } from '../../common/errors.js';
import { check } from '../../pack/ajv.js';
import { errnoCode } from '../../pack/errno.js';

const KeyRows = Type.Array(
  Type.Object({ key: Type.String({ minLength: 16, pattern: '^\\S+$' }), label: Type.Optional(Type.String()) }),
  { $id: 'svc:config/mcp-transport-keys' },
);
const Tenants = Type.Record(
  Type.String(),
  Type.Object({ apis: Type.Array(Type.String({ minLength: 1 })) }, { additionalProperties: false }),
  { $id: 'svc:config/mcp-tenants' },
);

async function readJson(name: string, path: string, example: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    return fail(
      'mcp_config_invalid',
      `${name} cannot be read (${errnoCode(e)})`,
      `point it at a JSON file such as ${example}`,
    );
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return fail('mcp_config_invalid', `${name} is not valid JSON`, `write for example ${example}`);
  }
}

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/**
 * A key's id: what a transport session records of the key that opened it (in memory and in the
 * shared store), never the key. A hash of the key under a label of its own, so that it matches
 * on every replica whatever the order of the keys file.
 */
const keyId = (key: string) => createHash('sha256').update('svc mcp transport key id\0').update(key).digest('hex');

/**
 * Transport keys: a bearer check in constant time against every key. Empty = /mcp is open.
 * Each key has an id (`idOf`): a transport session is bound to the id of the key that opened it.
 */
export class TransportKeys {
  private readonly digests: Buffer[];
  private readonly ids: string[];
  constructor(keys: readonly string[]) {
    this.digests = keys.map(digest);
    this.ids = keys.map(keyId);
  }
  get required(): boolean {
    return this.digests.length > 0;
  }
  /** True when `authorization` is `Bearer <one of the keys>` (or no key is provisioned). */
  accepts(authorization: string | undefined): boolean {
    return this.idOf(authorization) !== undefined;
  }
  /**
   * The id of the key `authorization` presents (`Bearer <key>`): `''` when no key is provisioned,
   * undefined when it presents none of the keys. Every key is compared, in constant time.
   */
  idOf(authorization: string | undefined): string | undefined {
    if (!this.required) return '';
    const m = /^Bearer +(\S+)$/i.exec(authorization ?? '');
    if (!m) return undefined;
    const d = digest(m[1]!);
    let found = -1;
    this.digests.forEach((k, i) => {
      if (timingSafeEqual(d, k)) found = i;
    });
    return found < 0 ? undefined : this.ids[found];
  }
}

/** True when two key ids (from `TransportKeys.idOf`) are the same key; compared in constant time. */
export function sameKey(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Which catalogs a tenant may use (undefined: any). */
export class TenantScopes {
  constructor(private readonly scopes: Record<string, { apis: string[] }> = {}) {}
  allowed(tenant: string): ReadonlySet<string> | undefined {
    // Own keys only: a tenant named like an Object.prototype member (`constructor`) is an unlisted tenant.
    const own = (k: string) => (Object.hasOwn(this.scopes, k) ? this.scopes[k] : undefined);
    const s = own(tenant) ?? own('*');
    return s ? new Set(s.apis) : undefined;
  }
}

export interface McpConfig {
  keys: TransportKeys;
  tenants: TenantScopes;
  /** Host names (no port) accepted in `Host`; unset: loopback names when bound to loopback, else any. */
  allowedHosts?: string[];
  /** Origins accepted in `Origin` besides those of an allowed host. */
  allowedOrigins?: string[];
}

const list = (v: string | undefined) =>
  v
    ?.split(',')
    .map((x) => x.trim())
    .filter(Boolean);

/** The MCP settings of an environment. */
export async function mcpConfigFromEnv(env: Record<string, string | undefined>): Promise<McpConfig> {
  let keys: string[] = [];
  if (env.SVC_MCP_TRANSPORT_KEYS_FILE) {
    const example = '[{"key": "<at least 16 characters>", "label": "laptop"}]';
    const rows = check(
      KeyRows,
      await readJson('SVC_MCP_TRANSPORT_KEYS_FILE', env.SVC_MCP_TRANSPORT_KEYS_FILE, example),
    );
    if (!rows.ok)
      fail(
        'mcp_config_invalid',
        `SVC_MCP_TRANSPORT_KEYS_FILE must be a JSON array of {"key", "label"} (problem at ${rows.errors[0]?.instancePath || 'the top'})`,
        `keys are at least 16 characters without white space; write ${example}`,
      );
    keys = rows.ok ? rows.value.map((r) => r.key) : [];
  }
  let scopes: Record<string, { apis: string[] }> | undefined;
  if (env.SVC_MCP_TENANTS_FILE) {
    const example = '{"acme": {"apis": ["brewery"]}, "*": {"apis": []}}';
    const t = check(Tenants, await readJson('SVC_MCP_TENANTS_FILE', env.SVC_MCP_TENANTS_FILE, example));
    if (!t.ok)
      fail(
        'mcp_config_invalid',
        `SVC_MCP_TENANTS_FILE must map tenant ids to {"apis": [entry_id, ...]} (problem at ${t.errors[0]?.instancePath || 'the top'})`,
        `write ${example}`,
      );
    scopes = t.ok ? t.value : undefined;
  }
  const hosts = list(env.SVC_MCP_ALLOWED_HOSTS);
  const origins = list(env.SVC_MCP_ALLOWED_ORIGINS);
  return {
    keys: new TransportKeys(keys),
    tenants: new TenantScopes(scopes),
    ...(hosts?.length ? { allowedHosts: hosts } : {}),
    ...(origins?.length ? { allowedOrigins: origins } : {}),
  };
}
