/** Test helpers: a registry of the bundled fixture catalogs (compiled from source) and a session. */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  compileSource,
  Registry,
  readSourceDir,
  registryEntry,
  type Cgs,
  type RegistryEntry,
} from '../../pack/index.js';
import { SymbolTable, type Seed } from '../../compiler/symbols.js';

const ROOT = join(import.meta.dirname, '..', '..');

/** Every catalog under fixtures/catalogs, compiled in memory. */
export async function fixtureRegistry(): Promise<Registry> {
  const dir = join(ROOT, 'fixtures', 'catalogs');
  const entries: RegistryEntry[] = [];
  for (const name of readdirSync(dir).sort()) {
    const c = compileSource(await readSourceDir(join(dir, name)));
    if (!c.cgs || !c.cgs_hash)
      throw new Error(`fixture catalog ${name} does not compile: ${JSON.stringify(c.diagnostics)}`);
    entries.push(registryEntry(c.cgs, c.cgs_hash, `${name}.cgs.json`));
  }
  return new Registry(entries);
}

/** One catalog from a single YAML source text, compiled in memory, with its registry. */
export function sourceRegistry(text: string, file = 'catalog.yaml'): { cgs: Cgs; registry: Registry } {
  const c = compileSource([{ file, text }]);
  if (!c.cgs || !c.cgs_hash) throw new Error(`the catalog does not compile: ${JSON.stringify(c.diagnostics)}`);
  return { cgs: c.cgs, registry: new Registry([registryEntry(c.cgs, c.cgs_hash, file)]) };
}

/** The seeds of the golden session, in exposure order. */
export const GOLDEN_SEEDS: Seed[] = [
  { api: 'brewery', entity: 'Brewery' },
  { api: 'brewery', entity: 'Beer' },
  { api: 'brewery', entity: 'Review' },
  { api: 'helpdesk', entity: 'Ticket' },
];

export function sessionSymbols(registry: Registry, seeds: Seed[] = GOLDEN_SEEDS): SymbolTable {
  const t = new SymbolTable();
  t.expose(registry, seeds);
  return t;
}
