/**
 * The catalog reload route (`POST /internal/catalog-registry/v1/reload`): its control-plane secret,
 * compared in constant time, then the catalog directory read again and the new registry put in
 * force. A reload that loads nothing keeps the registry in force; the directory's path never
 * reaches the caller.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHash, timingSafeEqual } from 'node:crypto';
import { svcError, SvcFailure, type SvcError } from '../common/errors.js';
import type { Logger } from '../common/log.js';
import { loadCatalogDir, type LoadOptions, type Registry } from '../pack/index.js';
import { sendJson } from './http/respond.js';

/** What the reload route reads and swaps: the app's settings and the registry in force. */
export interface ReloadContext {
  /** `SVC_CONTROL_PLANE_SECRET`; unset disables reload. */
  controlPlaneSecret: string | undefined;
  /** The `--catalog-dir` to read again; unset when the server started with `--schema`. */
  catalogDir: string | undefined;
  loadOptions: LoadOptions | undefined;
  logger: Logger;
  /** The registry in force. */
  registry: () => Registry;
  /** Put a registry in force. */
  swap: (registry: Registry) => void;
}

/** POST /internal/catalog-registry/v1/reload: check the secret, load the directory again, swap, answer. */
export async function reload(req: IncomingMessage, res: ServerResponse, ctx: ReloadContext): Promise<void> {
  checkSecret(req.headers['x-svc-control-plane-secret'], ctx.controlPlaneSecret);
  if (!ctx.catalogDir)
    throw new SvcFailure([
      svcError('reload_unavailable', 'this server was started with --schema: there is no catalog directory to reload', {
        hint: 'start it with --catalog-dir <dir> to reload catalogs without a restart',
      }),
    ]);
  const dir = ctx.catalogDir;
  const before = ctx.registry();
  ctx.logger.info('catalog reload requested', { dir: '<catalog-dir>' });
  // An entry whose artifacts went bad keeps the version in force (`kept`); see loadCatalogDir.
  const loaded = await loadCatalogDir(dir, { ...ctx.loadOptions, previous: before });
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
  ctx.swap(loaded.registry);
  const changed = loaded.registry
    .list()
    .filter((e) => before.get(e.entry_id)?.cgs_hash !== e.cgs_hash)
    .map((e) => e.entry_id);
  const removed = before
    .list()
    .filter((e) => !loaded.registry.get(e.entry_id))
    .map((e) => e.entry_id);
  ctx.logger.info('catalogs reloaded', {
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

/** Throws unless `given` (the x-svc-control-plane-secret header) is the configured secret. */
function checkSecret(given: string | string[] | undefined, secret: string | undefined): void {
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
}

/** A load problem as a reload caller sees it: the server's catalog directory path reads `<catalog-dir>`. */
function withoutDir(e: SvcError, dir: string): SvcError {
  const redact = (s: string) => s.split(dir).join('<catalog-dir>');
  return { ...e, message: redact(e.message), ...(e.hint !== undefined ? { hint: redact(e.hint) } : {}) };
}

/**
 * Constant-time comparison of two secrets of any lengths: their SHA-256 digests (always 32 bytes)
 * are compared, so neither the time taken nor an early return tells the secret's length.
 */
export function sameSecret(a: string, b: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(a), digest(b));
}
