/** The in-memory registry of loaded catalogs, with the lookups every later stage needs. */
import type { Capability, Cgs, Entity } from './cgs.js';

export interface RegistryEntry {
  entry_id: string;
  label: string;
  tags: string[];
  version: number;
  cgs: Cgs;
  cgs_hash: string;
  /** Backend URL in force: the CGS default or an override given at load time. */
  base_url: string;
  /** Artifact file the entry was loaded from (a base name, never an absolute path). */
  artifact: string;
}

/** The registry entry of a CGS (its backend URL the catalog's own; `artifact` a base name). */
export function registryEntry(cgs: Cgs, cgs_hash: string, artifact: string): RegistryEntry {
  return {
    entry_id: cgs.entry_id,
    label: cgs.label,
    tags: cgs.tags,
    version: cgs.version,
    cgs,
    cgs_hash,
    base_url: cgs.backend.base_url,
    artifact,
  };
}

interface Index {
  entities: Map<string, Entity>;
  capabilities: Map<string, Capability>;
  /** Capabilities per entity, in catalog order. */
  byEntity: Map<string, Capability[]>;
}

export class Registry {
  private readonly byId: Map<string, RegistryEntry>;
  private readonly index = new Map<string, Index>();

  constructor(entries: RegistryEntry[]) {
    const sorted = [...entries].sort((a, b) => (a.entry_id < b.entry_id ? -1 : 1));
    this.byId = new Map(sorted.map((e) => [e.entry_id, e]));
    for (const e of sorted) {
      const byEntity = new Map<string, Capability[]>();
      for (const c of e.cgs.capabilities) {
        const list = byEntity.get(c.entity);
        if (list) list.push(c);
        else byEntity.set(c.entity, [c]);
      }
      this.index.set(e.entry_id, {
        entities: new Map(e.cgs.entities.map((x) => [x.name, x])),
        capabilities: new Map(e.cgs.capabilities.map((x) => [x.name, x])),
        byEntity,
      });
    }
  }

  /** Entries sorted by entry_id. */
  list(): RegistryEntry[] {
    return [...this.byId.values()];
  }

  get size(): number {
    return this.byId.size;
  }

  get(entryId: string): RegistryEntry | undefined {
    return this.byId.get(entryId);
  }

  entity(entryId: string, name: string): Entity | undefined {
    return this.index.get(entryId)?.entities.get(name);
  }

  capability(entryId: string, name: string): Capability | undefined {
    return this.index.get(entryId)?.capabilities.get(name);
  }

  /** Capabilities about one entity, in catalog order. */
  capabilitiesOf(entryId: string, entity: string): Capability[] {
    return this.index.get(entryId)?.byEntity.get(entity) ?? [];
  }
}
