/**
 * The session symbol table: `e#` entities, `m#` capabilities, `r#` relations, assigned append-only
 * in order of first exposure. Exposing more seeds yields a wave holding only the new symbols;
 * `domain_revision` grows each time a wave adds entities. A symbol never changes meaning.
 * Federation: entities of several catalogs live in one table, keyed by (api, entity).
 */
import type { Capability, Entity, Relation } from '../pack/cgs.js';
import { READ_KINDS } from '../pack/cgs.js';
import type { Registry } from '../pack/registry.js';

export interface EntitySymbol {
  sym: string;
  api: string;
  entity: string;
}
export interface CapabilitySymbol {
  sym: string;
  api: string;
  capability: string;
  entity: string;
}
export interface RelationSymbol {
  sym: string;
  api: string;
  entity: string;
  relation: string;
  target: string;
}
export type AnySymbol =
  | ({ kind: 'entity' } & EntitySymbol)
  | ({ kind: 'capability' } & CapabilitySymbol)
  | ({ kind: 'relation' } & RelationSymbol);

/** A seed: an entity of a catalog, written `api:Entity`. */
export interface Seed {
  api: string;
  entity: string;
}

/** The symbols one exposure added, in assignment order. */
export interface Wave {
  entities: EntitySymbol[];
  capabilities: CapabilitySymbol[];
  relations: RelationSymbol[];
  /** Seeds that were already exposed (a repeated seed yields a notice, not rows). */
  repeated: Seed[];
  domain_revision: number;
}

export interface SymbolTableJson {
  entities: EntitySymbol[];
  capabilities: CapabilitySymbol[];
  relations: RelationSymbol[];
  domain_revision: number;
}

const key = (api: string, name: string) => `${api}:${name}`;

/**
 * Which read capabilities an entity expression `eN(...)` uses; the rest get `m#` symbols. A
 * singleton get (`GET /user`) is never the entity's get: `e1("id")` keeps meaning a get by id.
 */
export function defaultReads(
  registry: Registry,
  api: string,
  entity: string,
): { query?: Capability; get?: Capability; search?: Capability } {
  const caps = registry.capabilitiesOf(api, entity);
  return {
    query: caps.find((c) => c.kind === 'query'),
    get: caps.find((c) => c.kind === 'get' && !c.singleton),
    search: caps.find((c) => c.kind === 'search'),
  };
}

/** The first singleton get of an entity (`GET /user`): the row its `m#` reads when it has no get by id. */
export function singletonRead(registry: Registry, api: string, entity: string): Capability | undefined {
  return registry.capabilitiesOf(api, entity).find((c) => c.singleton);
}

/** The relation binds every required parameter of the capability it follows (a follow needs no more). */
export function bindsRequired(rel: Relation, cap: Capability): boolean {
  return cap.params.every((p) => !p.required || p.name in rel.bind);
}

export class SymbolTable {
  private readonly entities: EntitySymbol[] = [];
  private readonly capabilities: CapabilitySymbol[] = [];
  private readonly relations: RelationSymbol[] = [];
  private readonly bySym = new Map<string, AnySymbol>();
  private readonly entityKey = new Map<string, EntitySymbol>();
  private readonly capKey = new Map<string, CapabilitySymbol>();
  private readonly relKey = new Map<string, RelationSymbol>();
  private revision = 0;
  /** Set by `freeze`: `expose` refuses to change the table. */
  private frozen = false;

  get domainRevision(): number {
    return this.revision;
  }

  /**
   * Expose seeds (in the given order); returns the wave of new symbols. Unknown seeds must be
   * checked by the caller. Entities come first, then each new entity's capabilities and
   * relations (the counters are per kind, so numbering follows the seed order either way). A
   * list that an exposed relation follows with every required parameter bound
   * (`/customers/{customerId}/tickets`) gets no `m#`: the relation row teaches it.
   */
  expose(registry: Registry, seeds: Seed[]): Wave {
    if (this.frozen) throw new TypeError('this symbol table is frozen: expose symbols on a copy (clone)');
    const wave: Wave = { entities: [], capabilities: [], relations: [], repeated: [], domain_revision: this.revision };
    const added: Entity[] = [];
    for (const seed of seeds) {
      const entity = registry.entity(seed.api, seed.entity);
      if (!entity) continue;
      if (this.entityKey.has(key(seed.api, seed.entity))) {
        if (!wave.entities.some((e) => e.api === seed.api && e.entity === seed.entity)) wave.repeated.push(seed);
        continue;
      }
      wave.entities.push(this.addEntity(seed.api, entity));
      added.push(entity);
    }
    const reached = this.relationReached(registry);
    wave.entities.forEach((s, i) => {
      const reads = defaultReads(registry, s.api, s.entity);
      for (const cap of registry.capabilitiesOf(s.api, s.entity)) {
        if (cap === reads.query || cap === reads.get || cap === reads.search) continue;
        if (reached.has(key(s.api, cap.name))) continue;
        wave.capabilities.push(this.addCapability(s.api, cap));
      }
      for (const rel of added[i]!.relations) wave.relations.push(this.addRelation(s.api, added[i]!, rel));
    });
    if (wave.entities.length) wave.domain_revision = ++this.revision;
    return wave;
  }

  /** Capabilities (`api:name`) that a relation of an exposed entity follows with every required parameter bound. */
  private relationReached(registry: Registry): Set<string> {
    const out = new Set<string>();
    for (const e of this.entities) {
      const entity = registry.entity(e.api, e.entity);
      if (!entity || !(defaultReads(registry, e.api, e.entity).get ?? singletonRead(registry, e.api, e.entity)))
        continue;
      for (const rel of entity.relations) {
        const cap = registry.capability(e.api, rel.capability);
        if (cap && READ_KINDS.has(cap.kind) && bindsRequired(rel, cap)) out.add(key(e.api, cap.name));
      }
    }
    return out;
  }

  private addEntity(api: string, e: Entity): EntitySymbol {
    const s = { sym: `e${this.entities.length + 1}`, api, entity: e.name };
    this.entities.push(s);
    this.entityKey.set(key(api, e.name), s);
    this.bySym.set(s.sym, { kind: 'entity', ...s });
    return s;
  }

  private addCapability(api: string, c: Capability): CapabilitySymbol {
    const existing = this.capKey.get(key(api, c.name));
    if (existing) return existing;
    const s = { sym: `m${this.capabilities.length + 1}`, api, capability: c.name, entity: c.entity };
    this.capabilities.push(s);
    this.capKey.set(key(api, c.name), s);
    this.bySym.set(s.sym, { kind: 'capability', ...s });
    return s;
  }

  private addRelation(api: string, e: Entity, r: Relation): RelationSymbol {
    const s = { sym: `r${this.relations.length + 1}`, api, entity: e.name, relation: r.name, target: r.target };
    this.relations.push(s);
    this.relKey.set(`${api}:${e.name}.${r.name}`, s);
    this.bySym.set(s.sym, { kind: 'relation', ...s });
    return s;
  }

  lookup(sym: string): AnySymbol | undefined {
    return this.bySym.get(sym);
  }

  entitySymbol(api: string, entity: string): EntitySymbol | undefined {
    return this.entityKey.get(key(api, entity));
  }

  capabilitySymbol(api: string, capability: string): CapabilitySymbol | undefined {
    return this.capKey.get(key(api, capability));
  }

  relationSymbol(api: string, entity: string, relation: string): RelationSymbol | undefined {
    return this.relKey.get(`${api}:${entity}.${relation}`);
  }

  /** Every symbol, in assignment order per kind. */
  all(): AnySymbol[] {
    return [...this.bySym.values()];
  }

  /** Catalogs with at least one exposed entity, in first-exposure order. */
  apis(): string[] {
    return [...new Set(this.entities.map((e) => e.api))];
  }

  toJSON(): SymbolTableJson {
    return {
      entities: [...this.entities],
      capabilities: [...this.capabilities],
      relations: [...this.relations],
      domain_revision: this.revision,
    };
  }

  /** A table with the same symbols that can be changed on its own (symbols are never changed once made). */
  clone(): SymbolTable {
    return SymbolTable.fromJSON(this.toJSON());
  }

  /** Refuse any change from now on (a session snapshot's table; its drafts change a clone). */
  freeze(): this {
    this.frozen = true;
    return this;
  }

  /** Rebuild a table from `toJSON()` output (the client workspace and the server session persist it). */
  static fromJSON(j: SymbolTableJson): SymbolTable {
    const t = new SymbolTable();
    for (const e of j.entities) {
      t.entities.push(e);
      t.entityKey.set(key(e.api, e.entity), e);
      t.bySym.set(e.sym, { kind: 'entity', ...e });
    }
    for (const c of j.capabilities) {
      t.capabilities.push(c);
      t.capKey.set(key(c.api, c.capability), c);
      t.bySym.set(c.sym, { kind: 'capability', ...c });
    }
    for (const r of j.relations) {
      t.relations.push(r);
      t.relKey.set(`${r.api}:${r.entity}.${r.relation}`, r);
      t.bySym.set(r.sym, { kind: 'relation', ...r });
    }
    t.revision = j.domain_revision;
    return t;
  }
}
