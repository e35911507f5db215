/** Registry and discovery routes: GET /v1/registry, /v1/registry/:id, tool-model, /v1/discover. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestUrl } from '../../common/request-target.js';
import { svcError } from '../../common/errors.js';
import type { Registry, RegistryEntry } from '../../pack/registry.js';
import { discover, discoverMarkdown } from '../catalog/discover.js';
import { resolveFocus, toolModel } from '../catalog/tool-model.js';
import type { Router } from '../http/router.js';
import { prefersMarkdown } from '../http/negotiate.js';
import { send, sendJson, sendProblem } from '../http/respond.js';

/** One row of the registry list. */
export function registryRow(e: RegistryEntry): Record<string, unknown> {
  return {
    entry_id: e.entry_id,
    label: e.label,
    tags: e.tags,
    version: e.version,
    cgs_hash: e.cgs_hash,
    description: e.cgs.description,
    entities: e.cgs.entities.map((x) => x.name),
    capabilities: e.cgs.capabilities.length,
    auth: e.cgs.auth.scheme,
  };
}

/** Discovery's two forms, JSON first: it wins ties (any type, no Accept). */
/**
 * Markdown when `format=markdown`, or when Accept prefers it over JSON (q values, wildcards,
 * order; `q=0` refuses). An Accept naming neither still gets JSON.
 */
export function wantsMarkdown(req: IncomingMessage, url: RequestUrl): boolean {
  if (url.searchParams.get('format') === 'markdown') return true;
  return prefersMarkdown(req.headers.accept);
}

/** The 404 of an unknown entry, the same on every registry and discovery route. */
export function unknownEntry(res: ServerResponse, registry: Registry, id: string): void {
  sendProblem(
    res,
    404,
    'svc-unknown-entry',
    svcError('unknown_entry', `no catalog \`${id}\` is loaded`, {
      hint: `GET /v1/registry lists the catalogs: ${registry
        .list()
        .map((e) => e.entry_id)
        .join(', ')}`,
    }),
  );
}

/** The routes; `readOnly` says whether a request's caller may only read (its tool model and discovery then show no write). */
export function catalogRoutes(
  router: Router,
  registry: () => Registry,
  readOnly: (req: IncomingMessage) => boolean = () => false,
): void {
  router.add('GET', '/v1/registry', (_req, res) => sendJson(res, 200, { entries: registry().list().map(registryRow) }));
  router.add('GET', '/v1/registry/:id', (_req, res, p, url) => {
    const e = registry().get(p.id!);
    if (!e) return unknownEntry(res, registry(), p.id!);
    sendJson(res, 200, {
      ...registryRow(e),
      ...(url.searchParams.get('include_cgs') === 'true' ? { cgs: e.cgs } : {}),
    });
  });
  router.add('GET', '/v1/registry/:id/tool-model', (req, res, p, url) => {
    const reg = registry();
    const e = reg.get(p.id!);
    if (!e) return unknownEntry(res, reg, p.id!);
    const focus = url.searchParams.get('focus') ?? undefined;
    const r = resolveFocus(e, { ...(focus !== undefined ? { focus } : {}), entity: url.searchParams.getAll('entity') });
    if ('problem' in r) return sendProblem(res, 400, 'svc-tool-model-bad-request', r.problem);
    sendJson(res, 200, toolModel(reg, e, r.mode, r.entities, readOnly(req)));
  });
  router.add('GET', '/v1/discover', (req, res, _p, url) => {
    const reg = registry();
    const q = url.searchParams.get('q') ?? url.searchParams.get('intent') ?? '';
    const limitText = url.searchParams.get('limit') ?? '20';
    const limit = Number(limitText);
    if (!/^\d+$/.test(limitText) || limit < 1 || limit > 200) {
      return sendProblem(
        res,
        400,
        'svc-discover-bad-request',
        svcError('bad_arguments', '`limit` must be a whole number from 1 to 200', {
          hint: 'for example /v1/discover?q=beer&limit=10',
        }),
      );
    }
    const entry = url.searchParams.get('entry');
    if (entry && !reg.get(entry)) return unknownEntry(res, reg, entry);
    // Filter by entry before the limit, or rows of other entries (sorted first) would eat it.
    const rows = discover(reg, q, { limit: Infinity, readsOnly: readOnly(req) })
      .filter((r) => !entry || r.api === entry)
      .slice(0, limit);
    if (wantsMarkdown(req, url)) return send(res, 200, 'text/markdown; charset=utf-8', discoverMarkdown(q, rows));
    sendJson(res, 200, { intent: q, rows });
  });
}
