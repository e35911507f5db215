/**
 * A run's use of the session graph (graph.ts): a get by id of a row seen before (in this run, or
 * within the max age in the session) is answered without a vendor call, and the same get asked
 * twice at once in a run (a fan-out over rows naming one row) is sent once. Rows handed out are
 * copies: nests attached to them never reach the graph.
 */
import type { Plan, PlanStep } from '../compiler/plan.js';
import { READ_KINDS, WRITE_KINDS, type Capability, type Entity } from '../pack/cgs.js';
import type { Registry } from '../pack/registry.js';
import type { Row } from './decode.js';
import type { Fetched } from './fetch-rows.js';
import { isIdGet, keyable, RowGraph, type GraphView } from './graph.js';
import type { Values } from './request.js';

export class GraphFetch {
  /** The session's graph (rows of earlier runs, used when seen at or after its `since`). */
  private readonly view: GraphView | undefined;
  // The four below are made when first needed: a one-step read of a list needs none of them.
  /** This run's own rows: always used (whatever the session's max age). */
  private own: RowGraph | undefined;
  private inflight: Map<string, Promise<Fetched>> | undefined;
  private readonly off: boolean;
  /** Whether a read's rows may serve a later fetch of this run: there is a later step or a nest. */
  private readonly keepOwn: boolean;
  /** Rows this run was handed without a vendor call: never seen again as fetched (nor made whole, nor younger). */
  private handed: WeakSet<Row> | undefined;
  /** Per step with a projection: the fields its rows must hold (graph.ts `find`). */
  private needs: Map<string, string[]> | undefined;

  constructor(
    view: GraphView | false | undefined,
    private readonly registry: Registry,
    private readonly now: () => number,
    private readonly plan: Plan,
  ) {
    // Without a session graph a run still shares rows between its own steps (unless told not to).
    this.off = view === false;
    this.view = view || undefined;
    this.keepOwn = plan.steps.length > 1 || plan.steps.some((x) => x.nest?.length);
  }

  /** One value set's rows: from the graph (`graph: true`), from a get in flight, or `fetch()`. */
  async fetch(
    s: PlanStep,
    cap: Capability,
    values: Values,
    fetch: () => Promise<Fetched>,
  ): Promise<Fetched & { graph?: true }> {
    const id = cap.id_param === undefined ? undefined : values[cap.id_param];
    if (this.off || !isIdGet(cap) || id === undefined || id === null || typeof id === 'object') return fetch();
    const fields = this.fields(s);
    const v = this.view;
    const hit =
      this.own?.find('', s.api, cap.entity, id, -Infinity, fields) ??
      v?.graph.find(v.scope, s.api, cap.entity, id, v.since, fields, v.epoch?.(s.api, cap.entity));
    if (hit) return { rows: [this.hand({ ...hit })], calls: 0, pages: 0, graph: true };
    const key = `${s.api}\0${cap.entity}\0${typeof id}:${String(id)}`;
    const inflight = (this.inflight ??= new Map<string, Promise<Fetched>>());
    const running = inflight.get(key);
    if (running) {
      const f = await running;
      // The calls (and a failure's retries) were the first asker's: a waiter made none.
      if (f.error) return { ...f, calls: 0, pages: 0 };
      return { rows: f.rows.map((r) => this.hand({ ...r })), calls: 0, pages: 0, graph: true };
    }
    const p = fetch();
    inflight.set(key, p);
    return p;
  }

  /** A write is about to run (and has run): the session forgets the rows of its entity. */
  written(s: PlanStep, cap: Capability): void {
    if (!WRITE_KINDS.has(cap.kind)) return;
    this.own?.forget('', s.api, cap.entity);
    this.view?.graph.forget(this.view.scope, s.api, cap.entity);
    const prefix = `${s.api}\0${cap.entity}\0`;
    const inflight = this.inflight;
    if (inflight) for (const k of [...inflight.keys()]) if (k.startsWith(prefix)) inflight.delete(k);
  }

  /** A read's rows (before nests are attached), kept when their entity has a get by id alone. */
  read(s: PlanStep, cap: Capability, entity: Entity, rows: readonly Row[]): void {
    if (this.off || (!this.keepOwn && !this.view) || !READ_KINDS.has(cap.kind) || !rows.length) return;
    if (!keyable(this.registry, s.api, entity.name)) return;
    const handed = this.handed;
    const copies = (handed ? rows.filter((r) => !handed.has(r)) : rows).map((r) => ({ ...r }));
    if (!copies.length) return;
    const at = this.now();
    const whole = cap.kind === 'get';
    if (this.keepOwn) (this.own ??= new RowGraph(Infinity)).seen('', s.api, entity, copies, at, whole);
    const v = this.view;
    v?.graph.seen(v.scope, s.api, entity, copies, at, whole, v.epoch?.(s.api, entity.name));
  }

  private hand(row: Row): Row {
    (this.handed ??= new WeakSet<Row>()).add(row);
    return row;
  }

  /**
   * The fields a row of step `s` must hold to be answered from the graph: its projection (but the
   * relations nested, attached afterwards), what later steps read of it and what its nests follow
   * (undefined without a projection: every field).
   */
  private fields(s: PlanStep): string[] | undefined {
    if (!s.projection) return undefined;
    const needs = (this.needs ??= new Map<string, string[]>());
    let f = needs.get(s.id);
    if (!f) {
      const nested = new Set(s.nest?.map((n) => n.relation));
      const want = new Set(s.projection.filter((x) => !nested.has(x)));
      for (const o of this.plan.steps)
        for (const a of Object.values(o.args)) if ('ref' in a && a.ref.step === s.id) want.add(a.ref.field);
      for (const n of s.nest ?? []) for (const a of Object.values(n.args)) if ('field' in a) want.add(a.field);
      needs.set(s.id, (f = [...want]));
    }
    return f;
  }
}
