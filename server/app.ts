/**
 * The svc HTTP application on node:http: one router, the execute service, the registry in force
 * (swapped by reload), and the one place where failures become answers. No stack trace or
 * secret ever reaches a client.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHash, timingSafeEqual } from 'node:crypto';
import { svcError, SvcFailure, type SvcError } from '../common/errors.js';
import { loadCatalogDir, type LoadOptions, type Registry } from '../pack/index.js';
import { SILENT, type Logger } from '../common/log.js';
import type { ArtifactStore } from '../runtime/artifacts/index.js';
import type { ExecuteOptions } from '../runtime/execute.js';
import { ExecuteService } from './execute/service.js';
import { MemorySessionRepository } from './execute/memory-repository.js';
import type { SessionRepository } from './execute/repository.js';
import { DEFAULT_LIMITS, type Limits } from './limits.js';
import { negotiate } from './http/negotiate.js';
import { canonicalPath, Router } from './http/router.js';
import { sendErrors, sendFormattedErrors, sendJson } from './http/respond.js';
import { catalogRoutes } from './routes/catalog.js';
import { executeRoutes } from './routes/execute.js';
import { ANONYMOUS, InboundAuth, wwwAuthenticate, type Principal } from './auth/inbound.js';

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
}

export class SvcApp {
  registry: Registry;
  readonly sessions: SessionRepository;
  readonly service: ExecuteService;
  readonly router = new Router();
  private readonly started: number;
  private readonly auth: InboundAuth;
  private readonly principals = new WeakMap<IncomingMessage, Principal>();
  readonly logger: Logger;
  readonly limits: Limits;
  /** Requests that failed so far: numbers the request ids of log lines and error answers. */
  private requests = 0;

  constructor(private readonly opts: AppOptions) {
    const now = opts.now ?? Date.now;
    this.started = now();
    this.registry = opts.registry;
    this.logger = opts.logger ?? SILENT;
    this.limits = { ...DEFAULT_LIMITS, ...opts.limits };
    this.auth = opts.auth ?? new InboundAuth({ mode: 'off' });
    this.sessions =
      opts.sessions ??
      new MemorySessionRepository(
        { maxSessions: this.limits.maxSessions, maxSessionsPerTenant: this.limits.maxSessionsPerTenant },
        now,
      );
    this.service = new ExecuteService({
      registry: () => this.registry,
      sessions: this.sessions,
      artifacts: opts.artifacts,
      runtime: opts.runtime ?? {},
      now,
      limits: this.limits,
      logger: this.logger,
    });
    this.router.add('GET', '/v1/health', async (_req, res) => sendJson(res, 200, await this.health(now)));
    catalogRoutes(this.router, () => this.registry);
    executeRoutes(this.router, { service: this.service, tenant: (req) => this.principal(req).tenant });
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
    this.router.add('POST', '/internal/catalog-registry/v1/reload', (req, res) => this.reload(req, res));
  }

  /** The request listener. */
  readonly handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://svc.invalid');
    } catch {
      return sendErrors(res, [
        svcError('not_found', 'malformed request target', { hint: 'see docs/http.md for the routes' }),
      ]);
    }
    try {
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
        const p = await this.auth.authenticate(req.headers);
        if (!('method' in p)) return answerErrors(req, res, url, [p], { 'www-authenticate': wwwAuthenticate(p) });
        this.principals.set(req, p);
      }
      await m.handler(req, res, m.params, url);
    } catch (e) {
      const where = { req: requestId(req, ++this.requests), method: req.method, path: shortPath(url.pathname) };
      if (!(e instanceof SvcFailure) && clientGone(req, e)) {
        // Not a failure of ours: the client hung up or node's request timeout ended the upload.
        this.logger.info(
          `client closed the connection during ${req.method} ${where.path} (${(e as NodeJS.ErrnoException)?.code ?? 'aborted'})`,
          where,
        );
        return;
      }
      const errors: SvcError[] =
        e instanceof SvcFailure
          ? e.errors
          : [
              svcError('internal_error', 'the server failed on this request', {
                hint: `this is a bug in svc; the server log has the details (request ${where.req})`,
              }),
            ];
      if (!(e instanceof SvcFailure))
        this.logger.error(`internal error on ${req.method} ${where.path}: ${(e as Error)?.stack ?? String(e)}`, where);
      // The rest of a body over the limit is never read: the connection cannot be reused.
      const headers: Record<string, string> = {
        'x-request-id': where.req,
        ...(errors[0]?.code === 'body_too_large' ? { connection: 'close' } : {}),
      };
      answerErrors(req, res, url, errors, headers);
    }
  };

  /** GET /v1/health: what the process holds against its budgets. */
  private async health(now: () => number): Promise<Record<string, unknown>> {
    await this.sessions.sweep();
    return {
      status: 'ok',
      version: SVC_VERSION,
      entries: this.registry.size,
      sessions: await this.sessions.size(),
      uptime_s: Math.round((now() - this.started) / 1000),
      operations: { running: this.service.background.runningCount, max: this.limits.maxRunningOps },
      plan_cache: this.service.plans.stats(),
      artifacts: this.opts.artifacts.stats(),
    };
  }

  /** Resolves when no background operation runs (shutdown waits for it, up to the grace). */
  idle(): Promise<void> {
    return this.service.idle();
  }

  /** Shutdown after the grace: cancel every run still going and let them store what they did. */
  cancelRunning(settleMs: number): Promise<void> {
    return this.service.cancelAll(settleMs);
  }

  private principal(req: IncomingMessage): Principal {
    return this.principals.get(req) ?? ANONYMOUS;
  }

  private async reload(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const given = req.headers['x-svc-control-plane-secret'];
    const secret = this.opts.controlPlaneSecret;
    if (typeof given !== 'string' || !given)
      throw new SvcFailure([
        svcError('auth_required', 'the reload route needs the x-svc-control-plane-secret header', {
          hint: 'send the value of SVC_CONTROL_PLANE_SECRET set on the server',
        }),
      ]);
    if (!secret || !sameSecret(given, secret))
      throw new SvcFailure([
        svcError('forbidden', secret ? 'the control-plane secret is wrong' : 'reload is disabled on this server', {
          hint: secret
            ? 'send the value of SVC_CONTROL_PLANE_SECRET'
            : 'start the server with SVC_CONTROL_PLANE_SECRET set to enable reload',
        }),
      ]);
    if (!this.opts.catalogDir)
      throw new SvcFailure([
        svcError(
          'reload_unavailable',
          'this server was started with --schema: there is no catalog directory to reload',
          { hint: 'start it with --catalog-dir <dir> to reload catalogs without a restart' },
        ),
      ]);
    const dir = this.opts.catalogDir;
    const before = this.registry;
    this.logger.info('catalog reload requested', { dir: '<catalog-dir>' });
    // An entry whose artifacts went bad keeps the version in force (`kept`); see loadCatalogDir.
    const loaded = await loadCatalogDir(dir, { ...this.opts.loadOptions, previous: before });
    const problems = loaded.problems.map((p) => withoutDir(p, dir));
    if (loaded.registry.size === 0)
      throw new SvcFailure(
        problems.length
          ? problems
          : [
              svcError('catalog_dir_empty', 'the catalog directory holds no loadable catalog', {
                hint: 'the previous catalogs stay loaded',
              }),
            ],
      );
    this.registry = loaded.registry;
    const changed = loaded.registry
      .list()
      .filter((e) => before.get(e.entry_id)?.cgs_hash !== e.cgs_hash)
      .map((e) => e.entry_id);
    const removed = before
      .list()
      .filter((e) => !loaded.registry.get(e.entry_id))
      .map((e) => e.entry_id);
    this.logger.info('catalogs reloaded', {
      entries: loaded.registry.size,
      changed,
      removed,
      kept: loaded.kept,
      problems: problems.map((p) => p.code),
    });
    sendJson(res, 200, {
      reloaded: true,
      entries: loaded.registry.list().map((e) => ({
        entry_id: e.entry_id,
        version: e.version,
        cgs_hash: e.cgs_hash,
        changed: before.get(e.entry_id)?.cgs_hash !== e.cgs_hash,
      })),
      removed,
      kept: loaded.kept,
      problems: problems.map((p) => ({
        code: p.code,
        message: p.message,
        ...(p.file ? { file: p.file.split(/[\\/]/).pop() } : {}),
      })),
    });
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

/** Execute routes answer errors in the negotiated format; decided on the canonical path. */
function isExecutePath(pathname: string): boolean {
  const p = canonicalPath(pathname);
  return p !== undefined && (p === '/execute' || p.startsWith('/execute/'));
}

/** Errors in the shape of the route: the negotiated format under /execute (JSON when none fits), JSON elsewhere. */
function answerErrors(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  errors: SvcError[],
  headers: Record<string, string> = {},
): void {
  if (isExecutePath(url.pathname)) sendFormattedErrors(res, errors, negotiate(req.headers.accept) ?? 'json', headers);
  else sendErrors(res, errors, headers);
}

/** A load problem as a reload caller sees it: the server's catalog directory path reads `<catalog-dir>`. */
function withoutDir(e: SvcError, dir: string): SvcError {
  const redact = (s: string) => s.split(dir).join('<catalog-dir>');
  return { ...e, message: redact(e.message), ...(e.hint !== undefined ? { hint: redact(e.hint) } : {}) };
}

/** True when a failure only means the client went away (hang-up, reset, node's request timeout). */
function clientGone(req: IncomingMessage, e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException | null)?.code;
  return (
    req.destroyed ||
    code === 'ECONNRESET' ||
    code === 'ERR_STREAM_PREMATURE_CLOSE' ||
    (e as Error | null)?.message === 'aborted'
  );
}

/** The id of a request in log lines and error answers: the client's `x-request-id` when it is a short token, else `r<n>`. */
function requestId(req: IncomingMessage, n: number): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && /^[A-Za-z0-9._-]{1,64}$/.test(given) ? given : `r${n}`;
}

/** A request path as a log line shows it: at most 200 characters. */
function shortPath(p: string): string {
  return p.length > 200 ? `${p.slice(0, 200)}…` : p;
}

/**
 * Constant-time comparison of two secrets of any lengths: their SHA-256 digests (always 32 bytes)
 * are compared, so neither the time taken nor an early return tells the secret's length.
 */
export function sameSecret(a: string, b: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(a), digest(b));
}
