/** `svc serve`: the HTTP surface over the loaded catalogs (MCP surface: see --mcp). */
import { Command, Option } from 'commander';
import { svcError, SvcFailure } from '../../common/errors.js';
import { SvcApp } from '../../server/app.js';
import { listen, DEFAULT_HOST, DEFAULT_PORT, SHUTDOWN_GRACE_MS, type Listening } from '../../server/serve.js';
import { artifactSettingsFromEnv, storeFromUrl } from '../../runtime/artifacts/index.js';
import { teachabilityCheck } from '../../compiler/teachable.js';
import { addCatalogOptions, loadFromFlags, parseBackendFlags, reportProblems, type CatalogFlags } from '../catalog-options.js';
import { describeRegistry } from './catalogs.js';
import { parsePort } from './demo.js';
import { inboundAuthFromEnv } from '../../server/auth/inbound.js';

interface ServeFlags extends CatalogFlags { http?: boolean; mcp?: boolean; port: number; host: string }

export function serveCommand(): Command {
  const cmd = new Command('serve')
    .description('serve the HTTP surface (registry, discovery, tool-model, execute sessions) over packed catalogs')
    .option('--http', 'enable the HTTP surface (with --mcp: only the named surfaces; neither: both)')
    .option('--mcp', 'enable the MCP surface (Streamable HTTP)')
    .addOption(new Option('--port <n>', 'port to listen on').default(DEFAULT_PORT).argParser(parsePort))
    .addOption(new Option('--host <addr>', 'address to listen on; 0.0.0.0 exposes the server to the network').default(DEFAULT_HOST))
    .addHelpText('after', `
Environment:
  SVC_MAX_RUNNING_OPS_PER_SESSION   background operations (wait=false) running at once per session (default 16)
  SVC_INCOMING_AUTH_MODE            off (default), optional or required (see docs/auth.md)
  SVC_AUTH_JWT_SECRET               HMAC secret of HS256 bearer JWTs; SVC_AUTH_JWT_ISSUER / SVC_AUTH_JWT_AUDIENCE check iss / aud
  SVC_AUTH_API_KEYS_FILE            JSON array of {key, tenant_id, subject} for X-API-Key
  SVC_CONTROL_PLANE_SECRET          enables POST /internal/catalog-registry/v1/reload (header x-svc-control-plane-secret)
  SVC_BACKEND_URL_<ENTRY_ID>        backend URL override of one catalog (--backend wins)
  SVC_RUN_ARTIFACTS_URL             memory: (default) or file:///abs/dir for run snapshots
  SVC_RUN_ARTIFACTS_RETENTION_SECS  snapshot retention (default 604800 = 7 days)
  SVC_RUN_ARTIFACTS_GC_INTERVAL_SECS  snapshot GC interval (default 300)
SIGINT/SIGTERM stop accepting, let running requests finish (${SHUTDOWN_GRACE_MS / 1000} s grace), then exit 0.

Example:
  svc pack fixtures/catalogs/* --out catalogs && svc serve --catalog-dir catalogs --port 7311`);
  addCatalogOptions(cmd).action(async (flags: ServeFlags) => {
    const running = await startServe(flags, process.env);
    process.stdout.write(`press Ctrl-C to stop\n`);
    await untilSignal();
    process.stdout.write('stopping: finishing running requests\n');
    await running.stop();
  });
  return cmd;
}

export interface Running { listening: Listening; app: SvcApp; stop(): Promise<void> }

/** Load catalogs, build the app, listen; prints what it loaded and where it listens. */
export async function startServe(flags: ServeFlags, env: Record<string, string | undefined>, out: (s: string) => void = (s) => process.stdout.write(s)): Promise<Running> {
  const mcp = flags.mcp ?? !flags.http;
  const http = flags.http ?? !flags.mcp;
  const loaded = await loadFromFlags(flags);
  reportProblems(loaded);
  if (loaded.registry.size === 0) throw new SvcFailure([svcError('catalog_dir_empty', 'no catalog could be loaded', { hint: 'pack catalogs with `svc pack <src> --out <dir>` and pass --catalog-dir <dir>' })]);
  const auth = await inboundAuthFromEnv(env);
  const settings = artifactSettingsFromEnv(env);
  const artifacts = await storeFromUrl(settings.url, settings);
  const app = new SvcApp({
    registry: loaded.registry,
    ...(flags.catalogDir ? { catalogDir: flags.catalogDir } : {}),
    loadOptions: { extraChecks: [teachabilityCheck], backendOverrides: parseBackendFlags(flags.backend), env },
    artifacts,
    runtime: { env },
    maxRunningOps: maxRunningOpsFromEnv(env),
    auth,
    ...(env.SVC_CONTROL_PLANE_SECRET ? { controlPlaneSecret: env.SVC_CONTROL_PLANE_SECRET } : {}),
    log: (l) => process.stderr.write(l + '\n'),
  });
  out(`loaded ${loaded.registry.size} catalog${loaded.registry.size === 1 ? '' : 's'}:\n${describeRegistry(loaded.registry)}`);
  const listening = await listen(app, flags.port, flags.host);
  out(`inbound auth: ${auth.mode}${auth.mode === 'off' ? '' : ` (${[auth.config.jwtSecret ? 'JWT HS256' : '', auth.config.apiKeys ? `${auth.config.apiKeys.length} API keys` : ''].filter(Boolean).join(', ')})`}\n`);
  out(`svc ${http ? 'HTTP' : ''}${http && mcp ? ' + ' : ''}${mcp ? 'MCP' : ''} listening on ${listening.url}\n`);
  if (mcp) out('note: the MCP surface is not part of this build yet; only the HTTP routes answer\n');
  return { listening, app, stop: async () => { await listening.close(); await artifacts.close(); } };
}

/** SVC_MAX_RUNNING_OPS_PER_SESSION: a positive whole number, default 16. */
export function maxRunningOpsFromEnv(env: Record<string, string | undefined>): number {
  const v = env.SVC_MAX_RUNNING_OPS_PER_SESSION;
  if (v === undefined || v === '') return 16;
  if (!/^\d+$/.test(v) || Number(v) < 1) throw new SvcFailure([svcError('bad_arguments', `SVC_MAX_RUNNING_OPS_PER_SESSION=${JSON.stringify(v)} is not a positive whole number`, { hint: 'unset it for the default 16, or write for example 32' })]);
  return Number(v);
}

/** Resolves on the first SIGINT or SIGTERM. */
export function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    const done = () => { process.off('SIGINT', done); process.off('SIGTERM', done); resolve(); };
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
  });
}
