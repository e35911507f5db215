/**
 * The discovery cache `.svc/hosts/<8hex>/discovery.tsv`: one row per (api, entity) ever seen in a
 * `svc search` answer, the newest answer winning. Columns (header row first):
 * `api  entity  label  description  capabilities  intent`; capabilities are comma-separated;
 * cells hold no tab or newline. Rows are sorted by api, then entity.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export const DISCOVERY_COLUMNS = ['api', 'entity', 'label', 'description', 'capabilities', 'intent'] as const;

export interface DiscoveryRow {
  api: string;
  entity: string;
  label: string;
  description: string;
  capabilities: string;
  intent: string;
}

const cell = (s: unknown) =>
  (typeof s === 'string' ? s : typeof s === 'number' ? String(s) : '').replace(/[\t\r\n]+/g, ' ').trim();

export function readDiscovery(file: string): DiscoveryRow[] {
  if (!existsSync(file)) return [];
  const [, ...lines] = readFileSync(file, 'utf8').split('\n');
  return lines
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const c = l.split('\t');
      return {
        api: c[0] ?? '',
        entity: c[1] ?? '',
        label: c[2] ?? '',
        description: c[3] ?? '',
        capabilities: c[4] ?? '',
        intent: c[5] ?? '',
      };
    });
}

/** Merge the rows of a discovery answer into the cache by (api, entity); returns the merged rows. */
export function mergeDiscovery(
  file: string,
  intent: string,
  rows: ReadonlyArray<Record<string, unknown>>,
): DiscoveryRow[] {
  const byKey = new Map(readDiscovery(file).map((r) => [`${r.api}:${r.entity}`, r]));
  for (const r of rows) {
    if (typeof r.api !== 'string' || typeof r.entity !== 'string') continue;
    byKey.set(`${r.api}:${r.entity}`, {
      api: cell(r.api),
      entity: cell(r.entity),
      label: cell(r.label),
      description: cell(r.description),
      capabilities: Array.isArray(r.capabilities) ? r.capabilities.map(cell).join(',') : '',
      intent: cell(intent),
    });
  }
  const merged = [...byKey.values()].sort((a, b) =>
    a.api === b.api ? (a.entity < b.entity ? -1 : 1) : a.api < b.api ? -1 : 1,
  );
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(
    file,
    [DISCOVERY_COLUMNS.join('\t'), ...merged.map((r) => DISCOVERY_COLUMNS.map((k) => r[k]).join('\t')), ''].join('\n'),
  );
  return merged;
}
