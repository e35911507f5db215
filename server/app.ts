/**
 * The svc HTTP application on node:http: one router, the execute service, the registry in force
 * (swapped by reload, see reload.ts), the route guard of inbound auth, and health. Failures become
 * answers in answer-errors.ts: no stack trace or secret ever reaches a client.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { requestUrl, type RequestUrl } from '../common/request-target.js';
import { svcError, SvcFailure } from '../common/errors.js';
import type { LoadOptions, Registry } from '../pack/index.js';
import { SILENT, type Logger } from '../common/log.js';
import type { ArtifactStore } from '../runtime/artifacts/index.js';
import type { ExecuteOptions } from '../runtime/execute.js';
import type { AuthResolver } from '../runtime/auth.js';
import type { Blobs } from '../runtime/graph-blobs.js';
import { withAuth } from './execute/caller.js';
import { ExecuteService } from './execute/service.js';
import { MemorySessionRepository } from './execute/memory-repository.js';
import type { SessionRepository } from './execute/repository.js';
import { localReplica, type ReplicaOptions } from './execute/replica.js';
import { DEFAULT_LIMITS, type Limits } from './limits.js';
import { Router } from './http/router.js';
import { sendErrors, sendJson } from './http/respond.js';
import { catalogRoutes } from './routes/catalog.js';
import { executeRoutes } from './routes/execute.js';
import { wwwAuthenticate } from './auth/auth-problem.js';
import { InboundAuth } from './auth/inbound-auth.js';
import { ANONYMOUS, whoOf, type Principal } from './auth/principal.js';
import { answerErrors, answerFailure } from './answer-errors.js';
import { reload } from './reload.js';
import { TenantScopes, TransportKeys, type McpConfig } from './mcp/config.js';
import { McpEndpoint } from './mcp/endpoint.js';
import type { SharedKv } from './kv.js';
import { PlaygroundFiles } from './ui.js';
import { HostPolicy, type AllowedHosts } from './http/host-policy.js';
import { repeatedCredential } from './auth/repeated-credential.js';
import { sendRpcRefusal } from './mcp/refusal.js';

export { sameSecret } from './reload.js';

export const SVC_VERSION = '0.1.0';

export interface AppOptions {
  registry: Registry;
  /** Set when catalogs came from `--catalog-dir`: reload reads it again. */
  catalogDir?: string;
  /** Options for reloading (backend overrides, extra checks). */
  loadOptions?: LoadOptions;
  artifacts: ArtifactStore;
  /** Base runtime options for vendor calls. */
  runtime?: ExecuteOptions;
  /** Limits (sessions, operations, vendor calls, deadlines); defaults: DEFAULT_LIMITS. */
  limits?: Partial<Limits>;
  /** Secret of the reload route (`SVC_CONTROL_PLANE_SECRET`); unset disables reload. */
  controlPlaneSecret?: string;
  now?: () => number;
  /** Inbound authentication (default: mode off, every caller anonymous). */
  auth?: InboundAuth;
  /** The operator log: unexpected failures (never sent to clients), client aborts, background failures. */
  logger?: Logger;
  /** Where sessions live (default: this process's memory, with the session limits). */
  sessions?: SessionRepository;
  /** This process among replicas sharing `sessions` (default: one process, no leases). */
  replica?: ReplicaOptions;
  /** What is served: HTTP routes, `/mcp`, or both (the default). `/v1/health` always answers. */
  surfaces?: { http: boolean; mcp: boolean };
  /** MCP settings (transport keys, tenant scopes, allowed hosts); default: open, unrestricted. */
  mcp?: McpConfig;
  /**
   * Host names and page origins every route answers besides loopback ones (`SVC_ALLOWED_HOSTS`,
   * `SVC_ALLOWED_ORIGINS`; see http/host-policy.ts); merged with `mcp`'s older lists.
   */
  allowed?: AllowedHosts;
  /** Where MCP transport sessions are shared with other replicas (with Redis); default: not shared. */
  shared?: SharedKv;
  /**
   * Whether callers of a tenant may only read (docs/auth.md "Read-only callers"): asked per compile,
   * teaching and tool model. `svc serve` builds it with `readOnlyFromEnv` (SVC_READ_ONLY, OR-ed with
   * a per-tenant predicate). Default: nobody.
   */
  readOnly?: (tenant: string) => boolean;
  /** Where the session graph persists (`SVC_GRAPH_CACHE_URL`); default: in memory only. */
  graphBlobs?: Blobs;
  /** The playground (docs/playground.md): `GET /` and `/ui/*` from the web build in `dir`; with the HTTP surface only. */
  ui?: { dir: string };
}

export class SvcApp {
  registry: Registry;
  readonly sessions: SessionRepository;
  readonly service: ExecuteService;
  readonly router = new Router();
  private readonly started: number;
  private readonly auth: InboundAuth;
  private readonly principals = new WeakMap<IncomingMessage, Principal>();
  /** Runtime options of every run, with the outbound credentials resolver they share. */
  private readonly runtime: ExecuteOptions & { auth: AuthResolver };
  readonly logger: Logger;
  readonly limits: Limits;
  /** Requests that failed so far: numbers the request ids of log lines and error answers. */
  private requests = 0;
  /** The MCP endpoint, when MCP is served. */
  readonly mcp?: McpEndpoint;
  readonly surfaces: { http: boolean; mcp: boolean };
  /** This process among the replicas sharing its session store. */
  readonly replica: ReplicaOptions;
  /** The Host/Origin policy of every request (told the listening address by serve.ts). */
  readonly hostPolicy: HostPolicy;

  constructor(private readonly opts: AppOptions) {
    const now = opts.now ?? Date.now;
    this.started = now();
    this.registry = opts.registry;
    this.logger = opts.logger ?? SILENT;
    this.limits = { ...DEFAULT_LIMITS, ...opts.limits };
    this.auth = opts.auth ?? new InboundAuth({ mode: 'off' });
    this.replica = opts.replica ?? localReplica();
    this.hostPolicy = new HostPolicy({
      hosts: [...(opts.allowed?.hosts ?? []), ...(opts.mcp?.allowedHosts ?? [])],
      origins: [...(opts.allowed?.origins ?? []), ...(opts.mcp?.allowedOrigins ?? [])],
    });
    this.sessions =
      opts.sessions ??
      new MemorySessionRepository(
        { maxSessions: this.limits.maxSessions, maxSessionsPerTenant: this.limits.maxSessionsPerTenant },
        now,
      );
    this.runtime = withAuth(opts.runtime ?? {});
    this.service = new ExecuteService({
      registry: () => this.registry,
      sessions: this.sessions,
      artifacts: opts.artifacts,
      runtime: this.runtime,
      now,
      limits: this.limits,
      logger: this.logger,
      replica: this.replica,
      ...(opts.readOnly ? { readOnly: opts.readOnly } : {}),
      ...(opts.graphBlobs ? { graphBlobs: opts.graphBlobs } : {}),
    });
    this.surfaces = opts.surfaces ?? { http: true, mcp: true };
    if (this.surfaces.mcp)
      this.mcp = new McpEndpoint(
        {
          service: this.service,
          registry: () => this.registry,
          auth: this.auth,
          tenants: opts.mcp?.tenants ?? new TenantScopes(),
          logger: this.logger,
          ...(opts.readOnly ? { readOnly: opts.readOnly } : {}),
        },
        opts.mcp ?? { keys: new TransportKeys([]), tenants: new TenantScopes() },
        {
          version: SVC_VERSION,
          maxSessions: this.limits.maxMcpSessions,
          idleMs: this.limits.mcpSessionIdleMs,
          freshIdleMs: this.limits.mcpFreshIdleMs,
          newSessionsPerMin: this.limits.mcpNewSessionsPerMin,
          now,
          ...(opts.shared ? { shared: opts.shared } : {}),
        },
      );
    this.router.add('GET', '/v1/health', async (_req, res) => sendJson(res, 200, await this.health(now)));
    if (!this.surfaces.http) return;
    const readOnly = opts.readOnly ?? (() => false);
    catalogRoutes(
      this.router,
      () => this.registry,
      (req) => readOnly(this.principal(req).tenant),
    );
    executeRoutes(this.router, {
      service: this.service,
      tenant: (req) => this.principal(req).tenant,
      who: (req) => whoOf(this.principal(req), req.headers),
    });
    this.router.add('GET', '/v1/incoming-auth/context', (req, res) => {
      const p = this.principal(req);
      sendJson(res, 200, {
        mode: this.auth.mode,
        authenticated: p.method !== 'anonymous',
        method: p.method,
        subject: p.subject ?? null,
        tenant_id: p.method === 'anonymous' ? null : p.tenant,
      });
    });
    this.router.add('POST', '/internal/catalog-registry/v1/reload', (req, res) =>
      reload(req, res, {
        controlPlaneSecret: this.opts.controlPlaneSecret,
        catalogDir: this.opts.catalogDir,
        loadOptions: this.opts.loadOptions,
        logger: this.logger,
        registry: () => this.registry,
        swap: (registry) => (this.registry = registry),
      }),
    );
    if (opts.ui) new PlaygroundFiles(opts.ui.dir).routes(this.router);
  }

  /** The request listener. */
  readonly handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    let url: RequestUrl;
    try {
      // A plain target (the common case) is split by hand: no URL parse per request.
      url = requestUrl(req.url ?? '/', 'http://svc.invalid');
    } catch {
      return sendErrors(res, [
        svcError('not_found', 'malformed request target', { hint: 'see docs/http.md for the routes' }),
      ]);
    }
    // Before any route, /mcp included: a foreign Host or Origin (DNS rebinding), a repeated credential.
    const refused = this.hostPolicy.check(req) ?? repeatedCredential(req.rawHeaders);
    if (refused)
      return url.pathname === '/mcp' && this.mcp
        ? sendRpcRefusal(res, refused)
        : answerErrors(req, res, url, [refused]);
    try {
      if (url.pathname === '/mcp' && this.mcp) return await this.mcp.handle(req, res);
      const m = this.router.match(req.method ?? 'GET', url.pathname);
      if (m.kind === 'none')
        throw new SvcFailure([
          svcError('not_found', `no route ${url.pathname}`, {
            hint: 'see docs/http.md for the routes; public ones are under /v1',
          }),
        ]);
      if (m.kind === 'method') {
        return answerErrors(
          req,
          res,
          url,
          [
            svcError('method_not_allowed', `${req.method} is not allowed on ${url.pathname}`, {
              hint: `use ${m.allow.join(' or ')}`,
            }),
          ],
          { allow: m.allow.join(', ') },
        );
      }
      if (isProtected(m.pattern)) {
        // Mode off (the default): anonymous, without the await of an async call.
        const p = this.auth.mode === 'off' ? ANONYMOUS : await this.auth.authenticate(req.headers);
        if (!('method' in p)) return answerErrors(req, res, url, [p], { 'www-authenticate': wwwAuthenticate(p) });
        // Anonymous is what `principal()` answers for a request not in the map: no WeakMap entry.
        if (p !== ANONYMOUS) this.principals.set(req, p);
      }
      await m.handler(req, res, m.params, url);
    } catch (e) {
      answerFailure(req, res, url, e, ++this.requests, this.logger);
    }
  };

  /** GET /v1/health: what the process holds against its budgets. */
  private async health(now: () => number): Promise<Record<string, unknown>> {
    await this.sessions.sweep();
    return {
      status: 'ok',
      version: SVC_VERSION,
      replica: this.replica.id,
      entries: this.registry.size,
      sessions: await this.sessions.size(),
      ...(this.mcp ? { mcp_sessions: this.mcp.size } : {}),
      uptime_s: Math.round((now() - this.started) / 1000),
      operations: { running: this.service.background.runningCount, max: this.limits.maxRunningOps },
      plan_cache: this.service.plans.stats(),
      artifacts: this.service.artifacts.stats(),
      outbound: this.runtime.auth.stats(),
      graph: this.service.graphs.stats(),
    };
  }

  /** Resolves when no background operation runs (shutdown waits for it, up to the grace). */
  idle(): Promise<void> {
    return this.service.idle();
  }

  /** Shutdown after the grace: cancel every run still going, let them store what they did, close MCP sessions. */
  async cancelRunning(settleMs: number): Promise<void> {
    await this.service.cancelAll(settleMs);
    await this.mcp?.close();
  }

  /** Shutdown begins: MCP's standing event streams end (clients reconnect elsewhere); running calls go on. */
  stopping(): void {
    this.mcp?.endStreams();
  }

  private principal(req: IncomingMessage): Principal {
    return this.principals.get(req) ?? ANONYMOUS;
  }
}

/**
 * Routes that need credentials when inbound auth is on (SPEC): all but /v1/health and the reload
 * route (which has its own secret). `pattern` is the matched route pattern, so no spelling of a path
 * (`/v1//registry`, `/v1/%72egistry`, a trailing slash) can reach a protected handler without a check.
 */
export function isProtected(pattern: string): boolean {
  return (
    pattern === '/v1/registry' ||
    pattern.startsWith('/v1/registry/') ||
    pattern === '/v1/discover' ||
    pattern === '/v1/incoming-auth/context' ||
    pattern === '/execute' ||
    pattern.startsWith('/execute/')
  );
}
