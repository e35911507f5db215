/**
 * `importOpenApi`: a dereferenced OpenAPI 3.x document -> an authored catalog source (four YAML
 * files) and `import-report.md`. Pure: the caller reads the document and passes the packing check
 * (so the result is a catalog `svc pack` accepts, teachability included).
 */
import { svcError, SvcFailure } from '../../common/errors.js';
import { importAuth } from './auth.js';
import { buildCapabilities } from './capabilities.js';
import { EntityTable, componentNames } from './entities.js';
import type { ImportCapability, ImportCatalog, ImportEntity, ImportLog } from './model.js';
import { oneLine } from './names.js';
import { collectOperations, filterOperations } from './operations.js';
import { dropLinkFields } from './links.js';
import { economize, economizeRelations } from './economy.js';
import { buildRelations } from './relations.js';
import { renderReport } from './report.js';
import { isObj, type Schema } from './schema.js';
import { settle, type PackFiles } from './settle.js';

export interface ImportOptions {
  entryId?: string;
  baseUrl?: string;
  include?: string[];
  exclude?: string[];
}

export interface ImportResult {
  /** File name -> text: catalog.yaml, entities.yaml, capabilities.yaml, mappings.yaml, import-report.md. */
  files: Record<string, string>;
  catalog: ImportCatalog;
  log: ImportLog;
}

/** `GitHub v3 REST API` -> `github-v3-rest-api`, cut to the entry_id pattern. */
export function entryIdOf(title: string): string {
  const s = title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^[^a-z]+|-+$/g, '')
    .slice(0, 40)
    .replace(/-+$/, '');
  return s || 'imported';
}

function baseUrlOf(doc: Schema, given: string | undefined, log: ImportLog): string {
  if (given) return given.replace(/\/+$/, '');
  const server = Array.isArray(doc.servers) && isObj(doc.servers[0]) ? doc.servers[0] : undefined;
  let url = typeof server?.url === 'string' ? server.url : '';
  const vars = isObj(server?.variables) ? server.variables : {};
  url = url.replace(/\{([^}]+)\}/g, (m: string, v: string) => (isObj(vars[v]) ? String(vars[v].default ?? m) : m));
  if (/^https?:\/\/[^{}\s]+$/.test(url)) return url.replace(/\/+$/, '');
  const path = url.startsWith('/') ? url.replace(/\/+$/, '') : '';
  log.review.push({
    what: 'backend',
    note: `the document names no absolute server URL (${url || 'none'}): the catalog uses https://example.invalid${path}; pass --base-url or override at load time`,
  });
  return `https://example.invalid${path}`;
}

/**
 * Capabilities grouped by entity (in entity order), each group led by its plain list (a query
 * without required parameters) and its get by the id field: an entity symbol (`e1(...)`,
 * `e1("id")`) uses the first query and get of its entity, so the plain ones must come first.
 * Otherwise document order.
 */
function sortCapabilities(caps: ImportCapability[], entities: ImportEntity[]): void {
  const order = new Map(entities.map((e, i) => [e.name, i]));
  const ids = new Map(entities.map((e) => [e.name, e.id]));
  // A get by the id field leads (its row's id is what row capabilities pass); then other gets.
  const rank = (c: ImportCapability) =>
    c.kind === 'query' && c.params.every((p) => !p.required)
      ? 0
      : c.kind === 'get'
        ? c.id_param === ids.get(c.entity)
          ? 1
          : 2
        : c.kind === 'query'
          ? 3
          : 4;
  const index = new Map(caps.map((c, i) => [c, i]));
  caps.sort(
    (a, b) => order.get(a.entity)! - order.get(b.entity)! || rank(a) - rank(b) || index.get(a)! - index.get(b)!,
  );
}

/** Import a dereferenced OpenAPI 3.x document; `pack` checks the emitted files. */
export function importOpenApi(doc: Schema, pack: PackFiles, opts: ImportOptions = {}): ImportResult {
  const log: ImportLog = { skipped: [], review: [] };
  const info = isObj(doc.info) ? doc.info : {};
  const title = typeof info.title === 'string' && info.title.trim() ? info.title.trim() : 'Imported API';
  const entry_id = opts.entryId ?? entryIdOf(title);
  const { ops: all, other } = collectOperations(doc);
  for (const o of other)
    log.skipped.push({ what: o, reason: 'method', why: 'HEAD, OPTIONS and TRACE operations are not imported' });
  const selected = filterOperations(all, opts.include ?? [], opts.exclude ?? []);
  const ops = selected.filter((op) => {
    if (op.deprecated) log.skipped.push({ what: op.label, reason: 'deprecated', why: 'deprecated in the document' });
    return !op.deprecated;
  });
  const table = new EntityTable(componentNames(doc), log);
  const capabilities = buildCapabilities(ops, table, log);
  const used = new Set(capabilities.map((c) => c.entity));
  const entities = table.list.filter((e) => used.has(e.name));
  sortCapabilities(capabilities, entities);
  dropLinkFields(entities, capabilities, log);
  economize(entities, capabilities, log);
  buildRelations(entities, capabilities, log);
  economizeRelations(entities);
  const catalog: ImportCatalog = {
    entry_id,
    label: oneLine(title, 80),
    description: oneLine(info.description) || oneLine(title),
    base_url: baseUrlOf(doc, opts.baseUrl, log),
    auth: importAuth(doc, entry_id, log),
    entities,
    capabilities,
  };
  if (capabilities.length === 0)
    throw new SvcFailure([
      svcError('openapi_nothing_importable', `no operation of \`${title}\` could be mapped to a capability`, {
        hint:
          selected.length === 0
            ? 'check --include/--exclude: they left no operation'
            : ops.length === 0
              ? 'every operation is marked deprecated in the document'
              : 'svc imports reads answering JSON or text (files are skipped as file_answer) and writes on what they read; see the skips in docs/import.md',
      }),
    ]);
  const { files, diagnostics } = settle(catalog, pack, log);
  if (diagnostics.length) throw new SvcFailure(diagnostics);
  const report = renderReport({ catalog, log, title, openapi: String(doc.openapi ?? ''), operations: selected.length });
  return { files: { ...files, 'import-report.md': report }, catalog, log };
}
