/**
 * Test helper: a real OAuth 2.0 authorization server (oidc-provider 9.x) on 127.0.0.1 and a free
 * port, in this process, with an in-memory store. Two clients: one for `client_credentials` and one
 * for `authorization_code` + `refresh_token` (refresh tokens rotate; a replayed one is refused with
 * `invalid_grant` and, per oidc-provider, revokes the whole grant). Access tokens are opaque;
 * `whoIs` looks them up in the server's own store, `revoke` destroys one. Client authentication:
 * `client_secret_basic` or `client_secret_post` (either works for both clients). A `resource` (RFC
 * 8707) or an Auth0-style `audience` parameter on a client_credentials request gives a token with
 * that audience. Nothing is logged (oidc-provider's "unsupported runtime" notice on Node 20 included).
 *
 * @example
 * const as = await startAuthServer({ accessTokenTtlSecs: 2 });
 * t.teardown(() => as.close());
 * // POST as.tokenUrl  grant_type=client_credentials&scope=read  (Basic svc-cc:cc-secret)
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Adapter, AdapterPayload, Configuration, KoaContextWithOIDC, Provider } from 'oidc-provider';

export interface ClientSpec {
  client_id: string;
  client_secret: string;
}

export interface AuthServerOptions {
  /** Lifetime of every access token (client_credentials and refresh_token grants); default 3600. */
  accessTokenTtlSecs?: number;
  /** Lifetime of refresh tokens (and their grants); default 86400. */
  refreshTokenTtlSecs?: number;
  clients?: {
    /** The client_credentials client; default `svc-cc` / `cc-secret`, scopes `read write`. */
    credentials?: Partial<ClientSpec> & { scope?: string };
    /** The authorization_code + refresh_token client; default `svc-rt` / `rt-secret`. */
    refresh?: Partial<ClientSpec>;
  };
}

export interface TokenOwner {
  clientId: string;
  /** Set for tokens of a user (refresh_token grant), absent for client_credentials tokens. */
  accountId?: string;
  scope?: string;
  /** The `aud` of a token issued for a `resource` / `audience`. */
  audience?: string;
}

export interface AuthServer {
  /** `http://127.0.0.1:<port>` */
  issuer: string;
  /** The token endpoint URL (`<issuer>/token`). */
  tokenUrl: string;
  /** The clients as configured (defaults filled in). */
  clients: { credentials: ClientSpec & { scope: string }; refresh: ClientSpec };
  /** How many token requests succeeded, per grant type ('client_credentials' | 'refresh_token'). */
  grants(type: string): number;
  /** Mint a refresh token for a user (account id) of the refresh client, as if the user had consented with offline_access; returns the refresh token string. */
  refreshTokenFor(accountId: string): Promise<string>;
  /** Who an access token belongs to, checked against the server's own stores: { clientId, accountId? } or undefined when unknown/expired/revoked. */
  whoIs(accessToken: string): Promise<TokenOwner | undefined>;
  /** Revoke (destroy) an access token so whoIs answers undefined (to provoke a vendor 401). */
  revoke(accessToken: string): Promise<void>;
  close(): Promise<void>;
}

type ProviderClass = typeof import('oidc-provider').default;
let loaded: Promise<ProviderClass> | undefined;

/** Import oidc-provider once, dropping the one warning it prints on import under Node 20. */
function loadProvider(): Promise<ProviderClass> {
  return (loaded ??= (async () => {
    const warn = console.warn;
    console.warn = (...args: unknown[]) => {
      if (!String(args[0]).includes('oidc-provider WARNING: Unsupported runtime')) warn(...args);
    };
    try {
      return (await import('oidc-provider')).default;
    } finally {
      console.warn = warn;
    }
  })());
}

/** An adapter class over one Map per server: `Model:id` → payload with its expiry. */
function memoryAdapter(): new (name: string) => Adapter {
  const store = new Map<string, { payload: AdapterPayload; until: number }>();
  const live = (key: string) => {
    const hit = store.get(key);
    if (hit && hit.until <= Date.now()) store.delete(key);
    return store.get(key)?.payload;
  };
  return class MemoryAdapter implements Adapter {
    constructor(private readonly name: string) {}
    private key(id: string) {
      return `${this.name}:${id}`;
    }
    async upsert(id: string, payload: AdapterPayload, expiresIn?: number) {
      store.set(this.key(id), { payload, until: expiresIn ? Date.now() + expiresIn * 1000 : Infinity });
    }
    async find(id: string) {
      return live(this.key(id));
    }
    async findByUid(uid: string) {
      for (const key of store.keys()) {
        if (key.startsWith(`${this.name}:`) && store.get(key)?.payload.uid === uid) return live(key);
      }
      return undefined;
    }
    async findByUserCode(userCode: string) {
      for (const key of store.keys()) {
        if (key.startsWith(`${this.name}:`) && store.get(key)?.payload.userCode === userCode) return live(key);
      }
      return undefined;
    }
    async consume(id: string) {
      const hit = live(this.key(id));
      if (hit) hit.consumed = Math.floor(Date.now() / 1000);
    }
    async destroy(id: string) {
      store.delete(this.key(id));
    }
    async revokeByGrantId(grantId: string) {
      for (const [key, { payload }] of store) {
        if (key.startsWith(`${this.name}:`) && payload.grantId === grantId) store.delete(key);
      }
    }
  };
}

/** An absolute http(s) URL, else undefined. */
const httpUrl = (v: unknown): string | undefined =>
  typeof v === 'string' && /^https?:\/\/[^#]+$/.test(v) && URL.canParse(v) ? v : undefined;

function configuration(
  clients: AuthServer['clients'],
  ttl: number,
  rtTtl: number,
  Adapter: new (name: string) => Adapter,
): Configuration {
  const ccScopes = clients.credentials.scope.split(' ').filter(Boolean);
  const signing = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' });
  return {
    adapter: Adapter,
    clients: [
      {
        client_id: clients.credentials.client_id,
        client_secret: clients.credentials.client_secret,
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        scope: clients.credentials.scope,
        token_endpoint_auth_method: 'client_secret_basic',
      },
      {
        client_id: clients.refresh.client_id,
        client_secret: clients.refresh.client_secret,
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        redirect_uris: ['https://client.invalid/callback'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    clientDefaults: { id_token_signed_response_alg: 'ES256' }, // the one key is a P-256 key (fast to make)
    scopes: ['openid', 'offline_access', ...ccScopes],
    jwks: { keys: [{ ...signing, kid: 'test', alg: 'ES256', use: 'sig' }] },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
    rotateRefreshToken: true,
    ttl: {
      AccessToken: ttl,
      ClientCredentials: ttl,
      IdToken: ttl,
      RefreshToken: rtTtl,
      Grant: rtTtl,
      AuthorizationCode: 60,
      Interaction: 600,
      Session: rtTtl,
    },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        // An Auth0-style `audience` body parameter stands for `resource` on the token endpoint.
        defaultResource: (ctx: KoaContextWithOIDC, _client, oneOf) =>
          oneOf ??
          (ctx.oidc.route === 'token' ? httpUrl((ctx.oidc.body as { audience?: unknown })?.audience) : undefined),
        getResourceServerInfo: (_ctx, resource) => ({
          scope: ccScopes.join(' '),
          audience: resource,
          accessTokenTTL: ttl,
          accessTokenFormat: 'opaque',
        }),
        useGrantedResource: () => false,
      },
    },
  };
}

/** Start an authorization server; resolves once it listens. */
export async function startAuthServer(opts: AuthServerOptions = {}): Promise<AuthServer> {
  const Provider = await loadProvider();
  const ttl = opts.accessTokenTtlSecs ?? 3600;
  const cc = opts.clients?.credentials;
  const rt = opts.clients?.refresh;
  const clients: AuthServer['clients'] = {
    credentials: {
      client_id: cc?.client_id ?? 'svc-cc',
      client_secret: cc?.client_secret ?? 'cc-secret',
      scope: cc?.scope ?? 'read write',
    },
    refresh: { client_id: rt?.client_id ?? 'svc-rt', client_secret: rt?.client_secret ?? 'rt-secret' },
  };

  // Listen first: the issuer names the port.
  const app: { handle?: (req: IncomingMessage, res: ServerResponse) => void } = {};
  const server = createServer((req, res) => (app.handle ? app.handle(req, res) : res.writeHead(503).end()));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  let provider: Provider;
  try {
    const config = configuration(clients, ttl, opts.refreshTokenTtlSecs ?? 86400, memoryAdapter());
    provider = new Provider(issuer, config);
  } catch (e) {
    server.close();
    throw e;
  }
  provider.silent = true;
  const counts = new Map<string, number>();
  provider.on('grant.success', (ctx: KoaContextWithOIDC) => {
    const type = String(ctx.oidc.params?.grant_type);
    counts.set(type, (counts.get(type) ?? 0) + 1);
  });
  const callback = provider.callback();
  app.handle = (req, res) => void callback(req, res);

  /** The stored token behind an access token value: a user's or a client's. */
  const find = async (value: string, ignoreExpiration = false) =>
    (await provider.AccessToken.find(value, { ignoreExpiration })) ??
    (await provider.ClientCredentials.find(value, { ignoreExpiration }));

  let closed: Promise<void> | undefined;
  return {
    issuer,
    tokenUrl: `${issuer}/token`,
    clients,
    grants: (type) => counts.get(type) ?? 0,
    refreshTokenFor: async (accountId) => {
      const client = await provider.Client.find(clients.refresh.client_id);
      if (!client) throw new Error('the refresh client is not configured');
      const scope = 'openid offline_access';
      const grant = new provider.Grant({ accountId, clientId: client.clientId });
      grant.addOIDCScope(scope);
      const grantId = await grant.save();
      const authTime = Math.floor(Date.now() / 1000);
      const token = new provider.RefreshToken({
        client,
        accountId,
        grantId,
        scope,
        gty: 'authorization_code',
        authTime,
      });
      return token.save();
    },
    whoIs: async (accessToken) => {
      const token = await find(accessToken);
      if (!token?.clientId) return undefined;
      const owner: TokenOwner = { clientId: token.clientId };
      if ('accountId' in token && token.accountId) owner.accountId = token.accountId;
      if (token.scope) owner.scope = token.scope;
      if (typeof token.aud === 'string') owner.audience = token.aud;
      return owner;
    },
    revoke: async (accessToken) => {
      await (await find(accessToken, true))?.destroy();
    },
    close: () =>
      (closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
}
