/** `svc catalogs --catalog-dir <dir>`: load packed catalogs and list what would be served. */
import { Command } from 'commander';
import { addCatalogOptions, loadFromFlags, reportProblems, type CatalogFlags } from '../catalog-options.js';
import type { Registry } from '../../pack/index.js';
import { displayUrl } from '../../pack/urls.js';

export function catalogsCommand(): Command {
  const cmd = new Command('catalogs')
    .description('load packed catalogs exactly as the server would and list them (entries, versions, hashes, backends)')
    .option('--json', 'print the list as JSON');
  addCatalogOptions(cmd).action(async (opts: CatalogFlags & { json?: boolean }) => {
    const result = await loadFromFlags(opts);
    reportProblems(result);
    process.stdout.write(
      opts.json ? JSON.stringify(listing(result.registry), null, 2) + '\n' : describeRegistry(result.registry),
    );
    if (result.registry.size === 0 || result.problems.length > 0) process.exitCode = 1;
  });
  return cmd;
}

export function listing(registry: Registry) {
  return registry.list().map((e) => ({
    entry_id: e.entry_id,
    version: e.version,
    label: e.label,
    tags: e.tags,
    cgs_hash: e.cgs_hash,
    base_url: displayUrl(e.base_url),
    artifact: e.artifact,
    entities: e.cgs.entities.length,
    capabilities: e.cgs.capabilities.length,
  }));
}

/** One line per entry: what was loaded, from where, against which backend (its display form: no userinfo, no query). */
export function describeRegistry(registry: Registry): string {
  return registry
    .list()
    .map(
      (e) =>
        `${e.entry_id} v${e.version} ${e.cgs_hash.slice(0, 12)}  ${e.label}  [${e.cgs.entities.map((x) => x.name).join(', ')}]  ${e.cgs.capabilities.length} capabilities  -> ${displayUrl(e.base_url)}\n`,
    )
    .join('');
}
