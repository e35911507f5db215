/** `svc serve`: the HTTP routes and the MCP endpoint (`/mcp`) over the loaded catalogs, on one port. */
import { Command, Option } from 'commander';
import { svcError, SvcFailure } from '../../common/errors.js';
import { LOG_LEVELS, type Logger, type LogLevel } from '../../common/log.js';
import { createLogger } from '../../server/logger.js';
import { SvcApp } from '../../server/app.js';
import { DEFAULT_LIMITS, limitsFromEnv, type Limits } from '../../server/limits.js';
import { listen, DEFAULT_HOST, DEFAULT_PORT, type Listening } from '../../server/serve.js';
import { artifactSettingsFromEnv, storeFromUrl } from '../../runtime/artifacts/index.js';
import { s3SettingsFromEnv } from '../../runtime/artifacts/s3-settings.js';
import { blobsFromUrl } from '../../runtime/graph-blobs.js';
import { teachabilityCheck } from '../../compiler/teachable.js';
import {
  addCatalogOptions,
  loadFromFlags,
  parseBackendFlags,
  reportProblems,
  type CatalogFlags,
} from '../catalog-options.js';
import { describeRegistry } from './catalogs.js';
import { parsePort } from '../parse-port.js';
import { inboundAuthFromEnv } from '../../server/auth/inbound.js';
import { mcpConfigFromEnv } from '../../server/mcp/config.js';
import { allowedHostsFromEnv } from '../../server/http/host-policy.js';
import { sessionStoreFromEnv } from '../../server/stores.js';
import { readOnlyFromEnv } from '../../server/read-only-env.js';
import { CREDENTIALS_ENV, outboundFromEnv } from '../../server/credentials.js';
import { playgroundDir } from '../package-root.js';

interface ServeFlags extends CatalogFlags {
  http?: boolean;
  mcp?: boolean;
  /** The playground at `/` (with the HTTP surface); `--no-ui` sets false. Default: served. */
  ui?: boolean;
  port: number;
  host: string;
}

export function serveCommand(): Command {
  const cmd = new Command('serve')
    .description(
      'serve packed catalogs over HTTP (registry, discovery, tool-model, execute sessions) and MCP (Streamable HTTP at /mcp) on one port',
    )
    .option('--http', 'serve the HTTP routes (with --mcp too: both; alone: HTTP only)')
    .option('--mcp', 'serve the MCP endpoint /mcp (with --http too: both; alone: MCP only)')
    .option('--no-ui', 'do not serve the playground web page at / (served with the HTTP surface by default)')
    .addOption(new Option('--port <n>', 'port to listen on').default(DEFAULT_PORT).argParser(parsePort))
    .addOption(
      new Option('--host <addr>', 'address to listen on; 0.0.0.0 exposes the server to the network').default(
        DEFAULT_HOST,
      ),
    )
    .addHelpText(
      'after',
      `
Without --http or --mcp both surfaces are served; /v1/health always answers. With the HTTP
surface the playground (a web page over the public HTTP API, docs/playground.md) answers at /
unless --no-ui is given.

Environment (limits: see docs/http.md "Limits"):
  SVC_INCOMING_AUTH_MODE            off (default), optional or required (see docs/auth.md)
  SVC_AUTH_JWT_SECRET               HMAC secret of HS256 bearer JWTs; SVC_AUTH_JWT_ISSUER / SVC_AUTH_JWT_AUDIENCE check iss / aud
  SVC_AUTH_API_KEYS_FILE            JSON array of {key, tenant_id, subject} for X-API-Key
  SVC_OUTBOUND_CREDENTIALS_FILE     vendor credentials per tenant and user, forwarding, mTLS (JSON or YAML, mode 600; SIGHUP reloads)
  SVC_READ_ONLY                     true: every caller may only read (writes are refused with read_only); false (default)
  SVC_CONTROL_PLANE_SECRET          enables POST /internal/catalog-registry/v1/reload (header x-svc-control-plane-secret)
  SVC_BACKEND_URL_<ENTRY_ID>        backend URL override of one catalog (--backend wins)
  SVC_MCP_TRANSPORT_KV_URL          redis://host:port/db: sessions, tokens, page handles and operations shared by replicas (default: this process)
  SVC_GRAPH_CACHE_URL               file:///abs/dir or s3://bucket/prefix: the session graph persists there (default: in memory)
  SVC_GRAPH_HOT_MAX_ENTITIES        rows the session graph holds in this process (default 2048)
  SVC_GRAPH_MAX_AGE_SECS            rows a session saw in earlier runs answer its gets by id for this long (default 0: same run only)
  SVC_OPERATION_LEASE_SECS          with Redis: lease of a running operation, renewed every third (default 15)
  SVC_RUN_ARTIFACTS_URL             memory: (default), file:///abs/dir or s3://bucket/prefix for run snapshots
  SVC_S3_ENDPOINT                   S3-compatible endpoint (MinIO, ...); credentials from the AWS SDK chain (AWS_ACCESS_KEY_ID, ...)
  SVC_S3_FORCE_PATH_STYLE           true/false (default true with SVC_S3_ENDPOINT); SVC_S3_REGION (default AWS_REGION, us-east-1)
  SVC_RUN_ARTIFACTS_RETENTION_SECS  snapshot retention (default 604800 = 7 days)
  SVC_RUN_ARTIFACTS_GC_INTERVAL_SECS  snapshot GC interval (default 300)
  SVC_RUN_ARTIFACTS_MEMORY_MAX_BYTES  byte budget of the memory store, oldest dropped first (default 268435456 = 256 MiB)
  SVC_RUN_ARTIFACTS_MEMORY_PER_SESSION  snapshots the memory store keeps per session, oldest dropped first (default 256)
  SVC_RUN_ARTIFACTS_PENDING_BYTES   background-run snapshots held while the store fails, retried; oldest lost first (default 67108864 = 64 MiB)
  SVC_MAX_SESSIONS                  execute sessions held in all (default 10000)
  SVC_MAX_SESSIONS_PER_TENANT       execute sessions per tenant; with auth off all callers are one tenant (default 1000)
  SVC_MAX_RUNNING_OPS_PER_SESSION   background operations (wait=false) running at once per session (default ${DEFAULT_LIMITS.maxRunningOpsPerSession})
  SVC_MAX_RUNNING_OPS               background operations running at once in the server (default ${DEFAULT_LIMITS.maxRunningOps})
  SVC_BACKGROUND_DEADLINE_SECS      overall deadline of a background run (default 1800)
  SVC_MAX_VENDOR_CALLS              vendor calls a program may make without review (default 200)
  SVC_SHUTDOWN_GRACE_SECS           grace on SIGINT/SIGTERM before running work is cancelled (default 10)
  SVC_LOG_LEVEL                     debug, info (default), warn or error; lines go to stderr
  SVC_MCP_TRANSPORT_KEYS_FILE       JSON array of {key, label}: /mcp then requires Authorization: Bearer <key>
  SVC_MCP_TENANTS_FILE              JSON {"<tenant_id>": {"apis": [entry_id, ...]}, "*": {...}}: catalogs per tenant on MCP
  SVC_ALLOWED_HOSTS                 Host names every route answers besides loopback ones, e.g. behind a proxy (default: loopback names when listening on loopback, any on another address)
  SVC_ALLOWED_ORIGINS               page origins (https://app.example) that may call every route besides those of allowed hosts
  SVC_MCP_ALLOWED_HOSTS, SVC_MCP_ALLOWED_ORIGINS  older names of SVC_ALLOWED_HOSTS / SVC_ALLOWED_ORIGINS (merged into them)
  SVC_MCP_MAX_SESSIONS              MCP transport sessions held at once (default 1000)
  SVC_MCP_SESSION_IDLE_SECS         an idle MCP transport session is closed after this (default 3600)
  SVC_MCP_FRESH_IDLE_SECS           an MCP transport session that sent no request since initialize, after this (default 30)
  SVC_MCP_NEW_SESSIONS_PER_MIN      new MCP sessions one client address may open per minute (default 120, 0: off)
SIGINT/SIGTERM stop accepting, let running requests and operations finish within the grace, then
cancel what still runs (streams get their terminal event, runs are stored) and exit 0.

Example:
  svc pack fixtures/catalogs/* --out catalogs && svc serve --catalog-dir catalogs --port 7311`,
    );
  addCatalogOptions(cmd).action(async (flags: ServeFlags) => {
    const running = await startServe(flags, process.env);
    process.stdout.write(`press Ctrl-C to stop\n`);
    await untilSignal();
    process.stdout.write('stopping: finishing running requests\n');
    await running.stop();
  });
  return cmd;
}

export interface Running {
  listening: Listening;
  app: SvcApp;
  stop(): Promise<void>;
}

/** Load catalogs, build the app, listen; prints what it loaded and where it listens. */
export async function startServe(
  flags: ServeFlags,
  env: Record<string, string | undefined>,
  out: (s: string) => void = (s) => process.stdout.write(s),
): Promise<Running> {
  const surfaces = { http: Boolean(flags.http) || !flags.mcp, mcp: Boolean(flags.mcp) || !flags.http };
  const ui = surfaces.http && flags.ui !== false;
  const logger = loggerFromEnv(env);
  const limits = limitsFromEnv(env);
  // The first load and every reload read the same settings (backend overrides, SVC_BACKEND_URL_*, checks).
  const loadOptions = { extraChecks: [teachabilityCheck], backendOverrides: parseBackendFlags(flags.backend), env };
  const loaded = await loadFromFlags(flags, loadOptions);
  reportProblems(loaded);
  if (loaded.registry.size === 0)
    throw new SvcFailure([
      svcError('catalog_dir_empty', 'no catalog could be loaded', {
        hint: 'pack catalogs with `svc pack <src> --out <dir>` and pass --catalog-dir <dir>',
      }),
    ]);
  const auth = await inboundAuthFromEnv(env);
  const outbound = await outboundFromEnv(env, loaded.registry, logger);
  const readOnly = readOnlyFromEnv(env, outbound.file ? (t) => outbound.auth.readOnly(t) : undefined);
  const mcp = surfaces.mcp ? await mcpConfigFromEnv(env) : undefined;
  const allowed = allowedHostsFromEnv(env);
  const settings = artifactSettingsFromEnv(env);
  const store = await sessionStoreFromEnv(env, limits, logger);
  const artifacts = await storeFromUrl(settings.url, { ...settings, logger }).catch(async (e: unknown) => {
    await store.close();
    throw e;
  });
  const graphUrl = env.SVC_GRAPH_CACHE_URL?.trim();
  const graphBlobs = graphUrl
    ? await blobsFromUrl(graphUrl, s3SettingsFromEnv(env, [])).catch(async (e: unknown) => {
        await artifacts.close();
        await store.close();
        throw e;
      })
    : undefined;
  const app = new SvcApp({
    sessions: store.sessions,
    replica: store.replica,
    ...(store.shared ? { shared: store.shared } : {}),
    registry: loaded.registry,
    ...(flags.catalogDir ? { catalogDir: flags.catalogDir } : {}),
    loadOptions,
    artifacts,
    runtime: { env, auth: outbound.auth },
    ...(graphBlobs ? { graphBlobs } : {}),
    limits,
    auth,
    surfaces,
    ...(readOnly ? { readOnly } : {}),
    ...(mcp ? { mcp } : {}),
    allowed,
    ...(ui ? { ui: { dir: playgroundDir() } } : {}),
    ...(env.SVC_CONTROL_PLANE_SECRET ? { controlPlaneSecret: env.SVC_CONTROL_PLANE_SECRET } : {}),
    logger,
  });
  out(
    `loaded ${loaded.registry.size} catalog${loaded.registry.size === 1 ? '' : 's'}:\n${describeRegistry(loaded.registry)}`,
  );
  logger.info('catalogs loaded', {
    entries: loaded.registry.list().map((e) => `${e.entry_id} v${e.version} ${e.cgs_hash.slice(0, 12)}`),
    problems: loaded.problems.map((p) => p.code),
  });
  const listening = await listen(app, flags.port, flags.host);
  logger.info('listening', { url: listening.url, auth: auth.mode, http: surfaces.http, mcp: surfaces.mcp });
  out(
    `inbound auth: ${auth.mode}${auth.mode === 'off' ? '' : ` (${[auth.config.jwtSecret ? 'JWT HS256' : '', auth.config.apiKeys ? `${auth.config.apiKeys.length} API keys` : ''].filter(Boolean).join(', ')})`}\n`,
  );
  if (env.SVC_READ_ONLY?.trim() === 'true') out('read-only: every caller may only read (SVC_READ_ONLY)\n');
  if (outbound.file) out(`outbound credentials: ${CREDENTIALS_ENV} (reloaded on SIGHUP)\n`);
  out(`session graph: ${graphLine(limits, graphUrl)}\n`);
  const onHup = () => void outbound.reload(app.registry);
  if (outbound.file) process.on('SIGHUP', onHup);
  out(
    store.kind === 'redis'
      ? `sessions: shared in Redis; this replica is ${store.replica.id}\n`
      : 'sessions: in this process\n',
  );
  if (mcp)
    out(
      `MCP transport keys: ${mcp.keys.required ? 'required (Authorization: Bearer <key>)' : 'none (open)'}${env.SVC_MCP_TENANTS_FILE ? '; tenant scopes from SVC_MCP_TENANTS_FILE' : ''}\n`,
    );
  const served = [
    surfaces.http ? 'HTTP (/v1, /execute)' : '',
    surfaces.mcp ? `MCP (Streamable HTTP at ${listening.url}/mcp)` : '',
  ].filter(Boolean);
  out(`svc listening on ${listening.url}\nsurfaces: ${served.join(' and ')}\n`);
  if (ui) out(`playground: ${listening.url}/\n`);
  return {
    listening,
    app,
    stop: async () => {
      process.off('SIGHUP', onHup);
      await listening.close(limits.shutdownGraceMs);
      await artifacts.close();
      graphBlobs?.close();
      await store.close();
    },
  };
}

/** The start-up line of the session graph: its cap, max age and where it persists (the URL's scheme only). */
function graphLine(limits: Limits, url: string | undefined): string {
  const age = limits.graphMaxAgeMs
    ? `rows of earlier runs used for ${limits.graphMaxAgeMs / 1000} s`
    : 'rows of the same run only';
  const where = !url
    ? 'in memory'
    : limits.graphMaxAgeMs
      ? `persisted in ${url.split(':')[0]}:`
      : 'not persisted (max age 0)';
  return `${limits.graphHotMaxEntities} rows hot, ${age}, ${where}`;
}

/** SVC_LOG_LEVEL (debug, info, warn, error; default info): JSON lines on stderr, pretty on a terminal. */
export function loggerFromEnv(env: Record<string, string | undefined>): Logger {
  const level = (env.SVC_LOG_LEVEL ?? '').trim() || 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(level))
    throw new SvcFailure([
      svcError(
        'bad_arguments',
        `SVC_LOG_LEVEL=${JSON.stringify(level.slice(0, 20))} is not debug, info, warn or error`,
        { hint: 'unset it for info' },
      ),
    ]);
  return createLogger({ level: level as LogLevel });
}

/** Resolves on the first SIGINT or SIGTERM. */
export function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      process.off('SIGINT', done);
      process.off('SIGTERM', done);
      resolve();
    };
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
  });
}
