/**
 * The session graph: rows the reads of a session have seen, keyed by (api, entity, id), so that a
 * get by id of a row already fetched is answered without a vendor call. Within one run that is
 * always done (the rows are of the same moment: a fan-out over bound rows that names the same row
 * twice, or a row a list of the same program fetched already); across a session's runs only for
 * rows younger than the deployment's max age (`SVC_GRAPH_MAX_AGE_SECS`, default 0: never). A write
 * to an entity forgets the session's rows of it: in this process at once, and in every process
 * sharing the session through the entity's write count (`epoch`): a row is used only when it was
 * seen at the count the session has now. Only entities whose get takes the id alone are
 * kept (their ids name one row; a get scoped by more parameters is never answered from here).
 * One process-wide map holds every session's rows, least recently used dropped past `max`.
 */
import type { Capability, Entity, JsonValue } from '../pack/cgs.js';
import type { Registry } from '../pack/registry.js';
import type { Row } from './decode.js';

interface Seen {
  row: Row;
  at: number;
  /** Seen by a get (the vendor's whole row), not only by a list. */
  whole: boolean;
  /** The write count of its entity in the session when it was seen. */
  epoch: number;
}

/**
 * A graph entry as persisted: its key within the session, the row, when and how it was seen, and
 * its entity's write count then (absent in entries written before counts were kept: 0).
 */
export type GraphItem = [key: string, row: Row, at: number, whole: boolean, epoch?: number];

export class RowGraph {
  private readonly rows = new Map<string, Seen>();
  /** Rows added per session since its last `drain` (what persistence writes as a delta). */
  private readonly fresh = new Map<string, Map<string, Seen>>();

  constructor(
    readonly max = 2048,
    readonly maxAgeMs = 0,
    private readonly persist = false,
  ) {}

  get size(): number {
    return this.rows.size;
  }

  /**
   * Rows of `entity` a read of session `scope` fetched at `at` (whole rows when it was a get), when
   * the entity's write count in the session was `epoch`.
   */
  seen(scope: string, api: string, entity: Entity, rows: readonly Row[], at: number, whole: boolean, epoch = 0): void {
    for (const row of rows) {
      const id = row[entity.id_field];
      if (id === undefined || id === null || typeof id === 'object') continue;
      const key = itemKey(api, entity.name, id);
      const full = `${scope}\0${key}`;
      const old = this.rows.get(full);
      // A list's partial row never replaces the whole row a get fetched at the same moment or later.
      const s: Seen = !whole && old?.whole && old.at >= at && old.epoch === epoch ? old : { row, at, whole, epoch };
      this.rows.delete(full);
      this.rows.set(full, s);
      if (this.persist) {
        let d = this.fresh.get(scope);
        if (!d) this.fresh.set(scope, (d = new Map<string, Seen>()));
        d.set(key, s);
      }
    }
    for (const k of this.rows.keys()) {
      if (this.rows.size <= this.max) break;
      this.rows.delete(k);
    }
  }

  /**
   * The row of session `scope` with this id, seen at or after `since` when its entity's write count
   * was `epoch`, holding every field of `fields` (every field the vendor sends: a whole row only,
   * when there is no projection).
   */
  find(
    scope: string,
    api: string,
    entity: string,
    id: JsonValue,
    since: number,
    fields?: string[],
    epoch = 0,
  ): Row | undefined {
    const full = `${scope}\0${itemKey(api, entity, id)}`;
    const s = this.rows.get(full);
    if (!s || s.at < since || s.epoch !== epoch) return undefined;
    if (fields ? !fields.every((f) => f in s.row) : !s.whole) return undefined;
    this.rows.delete(full);
    this.rows.set(full, s);
    return s.row;
  }

  /** A write of session `scope` touched `entity`: its rows are forgotten. */
  forget(scope: string, api: string, entity: string): void {
    const prefix = `${scope}\0${api}\0${entity}\0`;
    for (const k of [...this.rows.keys()]) if (k.startsWith(prefix)) this.rows.delete(k);
    const d = this.fresh.get(scope);
    if (d) for (const k of [...d.keys()]) if (k.startsWith(`${api}\0${entity}\0`)) d.delete(k);
  }

  /** The rows session `scope` added since the last drain (persistence), taken. */
  drain(scope: string): GraphItem[] {
    const d = this.fresh.get(scope);
    this.fresh.delete(scope);
    return d ? [...d].map(([k, s]) => [k, s.row, s.at, s.whole, s.epoch]) : [];
  }

  /** Every row of session `scope` held now (a snapshot). */
  items(scope: string): GraphItem[] {
    const prefix = `${scope}\0`;
    const out: GraphItem[] = [];
    for (const [k, s] of this.rows)
      if (k.startsWith(prefix)) out.push([k.slice(prefix.length), s.row, s.at, s.whole, s.epoch]);
    return out;
  }

  /** Rows read back from persistence (older than what this process saw itself never wins). */
  load(scope: string, items: readonly GraphItem[]): void {
    for (const [key, row, at, whole, epoch = 0] of items) {
      const full = `${scope}\0${key}`;
      const cur = this.rows.get(full);
      if (!cur || cur.at < at) this.rows.set(full, { row, at, whole, epoch });
    }
    for (const k of this.rows.keys()) {
      if (this.rows.size <= this.max) break;
      this.rows.delete(k);
    }
  }
}

/** A row's key within its session; ids are strings, numbers or booleans (others are never keyed). */
const itemKey = (api: string, entity: string, id: JsonValue) =>
  `${api}\0${entity}\0${typeof id}:${typeof id === 'object' ? JSON.stringify(id) : String(id)}`;

/**
 * What a run asks of the graph: the process's graph, the session, and how old a usable row of an
 * earlier run may be (the run's own rows are always used: graph-fetch.ts).
 */
export interface GraphView {
  graph: RowGraph;
  scope: string;
  /** Rows seen before this instant are not used (now minus the max age; Infinity: none). */
  since: number;
  /** The session's write count of an entity now: rows seen at another count are not used (absent: 0). */
  epoch?(api: string, entity: string): number;
}

const simple = new WeakMap<Registry, Map<string, boolean>>();

/** Whether an entity's rows are kept: it has a get that takes the row's id and nothing else. */
export function keyable(registry: Registry, api: string, entity: string): boolean {
  let m = simple.get(registry);
  if (!m) simple.set(registry, (m = new Map<string, boolean>()));
  const k = `${api}\0${entity}`;
  let v = m.get(k);
  if (v === undefined) {
    v = registry.capabilitiesOf(api, entity).some((c) => isIdGet(c));
    m.set(k, v);
  }
  return v;
}

/** A get whose only parameter is the id of the row. */
export function isIdGet(c: Capability): boolean {
  return c.kind === 'get' && c.id_param !== undefined && c.params.length === 1 && c.params[0]!.name === c.id_param;
}
