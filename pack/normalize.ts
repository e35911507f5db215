/**
 * Authoring source (YAML files, shorthand allowed) -> CGS (normalized, every default explicit).
 * Records where each CGS node came from, so that semantic diagnostics found on the CGS can point
 * at file:line:col of the source.
 *
 * This module is the driver (files in order, duplicates across files, orphan mappings); the
 * parts are normalize-catalog.ts, normalize-entity.ts, normalize-capability.ts and
 * normalize-mapping.ts, sharing a NormalizeContext; dropping invalid items is prune-invalid.ts.
 */
import type { SvcError } from '../common/errors.js';
import { suggestHint } from '../common/suggest.js';
import type { Cgs } from './cgs.js';
import { SVC_CATALOG_FORMAT_VERSION } from './cgs.js';
import { normalizeCapability } from './normalize-capability.js';
import { normalizeCatalog } from './normalize-catalog.js';
import { isObj, NormalizeContext, type Obj, type Origin } from './normalize-context.js';
import { normalizeEntity } from './normalize-entity.js';
import { collectMappings } from './normalize-mapping.js';
import { isPoisoned } from './prune-invalid.js';
import type { SourceData } from './source.js';

export type { Origin } from './normalize-context.js';
export { pruneInvalid, isPoisoned } from './prune-invalid.js';
export { PAGINATION_KEYS } from './normalize-mapping.js';

export interface Normalized {
  cgs: Cgs;
  /** CGS JSON pointer -> where in the source it was written. */
  origins: Map<string, Origin>;
  /** Problems found while normalizing (duplicates across files, missing mappings, ...). */
  errors: Array<{ error: SvcError; at: string }>;
  /** Names of items dropped because they broke the schema; references to them are not re-reported. */
  poisoned: Set<string>;
}

export function normalize(files: SourceData[], poisoned = new Set<string>()): Normalized {
  const cx = new NormalizeContext(poisoned);
  const catalogs = files.filter((f) => isObj(f.data.catalog));
  const cgs: Cgs = {
    format_version: SVC_CATALOG_FORMAT_VERSION,
    entry_id: '',
    version: 0,
    label: '',
    tags: [],
    description: '',
    backend: { base_url: '' },
    auth: { scheme: 'none' },
    entities: [],
    capabilities: [],
  };
  if (catalogs.length === 0 && !isPoisoned(cx.poisoned, 'catalog')) {
    cx.fail(
      '',
      'missing_catalog_metadata',
      'no source file has a `catalog:` section',
      'add catalog.yaml with entry_id, version, label, description and backend.url',
    );
    cx.poisoned.add('catalog'); // the header checks would only repeat this problem
  }
  for (const extra of catalogs.slice(1)) {
    cx.mark('/#dup-catalog', extra, ['catalog']);
    cx.fail(
      '/#dup-catalog',
      'duplicate_name',
      `\`catalog\` is declared again (first in ${catalogs[0]!.file})`,
      'keep the catalog metadata in one file',
    );
  }
  if (catalogs[0]) normalizeCatalog(cx, cgs, catalogs[0]);
  cx.mark('', files[0]!, []);

  for (const f of files) {
    for (const [name, raw] of Object.entries(isObj(f.data.entities) ? f.data.entities : {})) {
      const at = `/entities/${cgs.entities.length}`;
      cx.mark(at, f, ['entities', name]);
      cgs.entities.push(normalizeEntity(cx, name, raw as Obj, f, at));
    }
  }
  const mappings = collectMappings(cx, files);
  for (const f of files) {
    for (const [name, raw] of Object.entries(isObj(f.data.capabilities) ? f.data.capabilities : {})) {
      const at = `/capabilities/${cgs.capabilities.length}`;
      cx.mark(at, f, ['capabilities', name]);
      const entity = cgs.entities.find((e) => e.name === (raw as Obj).entity);
      cgs.capabilities.push(normalizeCapability(cx, name, raw as Obj, entity, mappings.get(name), f, at));
    }
  }
  for (const [name, m] of mappings) {
    if (!cgs.capabilities.some((c) => c.name === name) && !isPoisoned(cx.poisoned, 'capabilities', name)) {
      const at = `/#mapping/${name}`;
      cx.mark(at, m.src, ['mappings', name]);
      cx.fail(
        at,
        'orphan_mapping',
        `mapping \`${name}\` names no capability`,
        suggestHint(
          name,
          cgs.capabilities.map((c) => c.name),
        ),
      );
    }
  }
  return { cgs, origins: cx.origins, errors: cx.errors, poisoned: cx.poisoned };
}
