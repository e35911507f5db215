/**
 * The session graph of this process (runtime/graph.ts): one map of the rows every session's reads
 * have seen, capped by `SVC_GRAPH_HOT_MAX_ENTITIES`, and the view a run of a session gets: rows of
 * its own run always, rows of the session's earlier runs when younger than `SVC_GRAPH_MAX_AGE_SECS`.
 * With `SVC_GRAPH_CACHE_URL` the rows persist per session as a snapshot plus deltas (one delta
 * object per run that saw rows), read back when a session first runs in a process (after a
 * restart, or on another replica) and folded into a new snapshot when the deltas pile up. The
 * graph is a cache: a store that fails is logged, and the run goes on without it. A row is used
 * only while its entity's write count in the session (`SessionState.entity_writes`, in the shared
 * session store) is the one it was seen at: a write on any replica makes every replica forget.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from '../../common/log.js';
import type { Blobs } from '../../runtime/graph-blobs.js';
import { RowGraph, type GraphItem, type GraphView } from '../../runtime/graph.js';
import type { Limits } from '../limits.js';
import { entityKey, type SessionKey, type SessionState } from './state.js';

/** Deltas of a session past which a load writes a snapshot and removes them. */
const COMPACT_AFTER = 16;
/** Sessions remembered as loaded (older ones are read again when they come back). */
const LOADED_MAX = 10_000;

export class SessionGraphs {
  readonly graph: RowGraph;
  private readonly loaded = new Set<string>();
  private readonly writes = new Set<Promise<void>>();
  private readonly blobs: Blobs | undefined;

  constructor(
    private readonly limits: Pick<Limits, 'graphHotMaxEntities' | 'graphMaxAgeMs'>,
    private readonly now: () => number,
    blobs?: Blobs,
    private readonly logger?: Logger,
  ) {
    // With max age 0 no run uses another run's rows: there is nothing worth writing.
    this.blobs = limits.graphMaxAgeMs > 0 ? blobs : undefined;
    this.graph = new RowGraph(limits.graphHotMaxEntities, limits.graphMaxAgeMs, this.blobs !== undefined);
  }

  /**
   * What a run of session `s` (as read for the run) starting now may use (its persisted rows read
   * first, once per process).
   */
  async view(s: Pick<SessionState, 'prompt_hash' | 'session' | 'entity_writes'>): Promise<GraphView | undefined> {
    // Max age 0: no row of an earlier run is used, so none is kept for later runs either (a run
    // still shares rows between its own steps).
    const age = this.limits.graphMaxAgeMs;
    if (age <= 0) return undefined;
    const scope = scopeOf(s);
    if (this.blobs && !this.loaded.has(scope)) await this.load(scope);
    const writes = s.entity_writes;
    return { graph: this.graph, scope, since: this.now() - age, epoch: (api, e) => writes[entityKey(api, e)] ?? 0 };
  }

  /** After a run of session `s`: the rows it added are written as a delta (not awaited). */
  saved(s: SessionKey): void {
    if (!this.blobs) return;
    const scope = scopeOf(s);
    const items = this.graph.drain(scope);
    if (items.length === 0) return;
    const name = `d-${String(this.now()).padStart(13, '0')}-${randomBytes(4).toString('hex')}.json`;
    this.track(this.blobs.put(`${scope}/${name}`, JSON.stringify(items)), 'write a delta');
  }

  /** Resolves when every graph write started so far has settled. */
  async flush(): Promise<void> {
    while (this.writes.size) await Promise.all([...this.writes]);
  }

  /** For /v1/health. */
  stats(): { rows: number; max_rows: number; max_age_s: number; persisted: boolean } {
    return {
      rows: this.graph.size,
      max_rows: this.graph.max,
      max_age_s: Math.round(this.limits.graphMaxAgeMs / 1000),
      persisted: this.blobs !== undefined,
    };
  }

  private async load(scope: string): Promise<void> {
    const blobs = this.blobs!;
    if (this.loaded.size >= LOADED_MAX) this.loaded.clear();
    this.loaded.add(scope);
    try {
      const names = await blobs.list(scope);
      const texts = await Promise.all(names.map((n) => blobs.get(`${scope}/${n}`)));
      const since = this.now() - this.limits.graphMaxAgeMs;
      const items: GraphItem[] = [];
      for (const t of texts) for (const it of parseItems(t)) if (it[2] >= since) items.push(it);
      this.graph.load(scope, items);
      const deltas = names.filter((n) => n.startsWith('d-'));
      if (deltas.length > COMPACT_AFTER) {
        // The snapshot first, then the deltas it holds are removed: a crash in between loses nothing.
        const compact = blobs
          .put(`${scope}/snapshot.json`, JSON.stringify(this.graph.items(scope)))
          .then(() => blobs.delete(deltas.map((n) => `${scope}/${n}`)));
        this.track(compact, 'compact the deltas');
      }
    } catch (e) {
      this.logger?.warn('session graph: persisted rows could not be read; the session goes on without them', {
        problem: (e as Error)?.name ?? 'error',
      });
    }
  }

  private track(p: Promise<unknown>, what: string): void {
    const w = p.then(
      () => undefined,
      (e: unknown) => this.logger?.warn(`session graph: could not ${what}`, { problem: (e as Error)?.name ?? 'error' }),
    );
    this.writes.add(w);
    void w.finally(() => this.writes.delete(w));
  }
}

/** The items of a persisted object; a malformed one holds none. */
function parseItems(text: string | undefined): GraphItem[] {
  if (!text) return [];
  try {
    const v = JSON.parse(text) as unknown;
    return Array.isArray(v)
      ? (v.filter(
          (x) =>
            Array.isArray(x) &&
            typeof x[0] === 'string' &&
            x[1] !== null &&
            typeof x[1] === 'object' &&
            typeof x[2] === 'number' &&
            typeof x[3] === 'boolean' &&
            (x[4] === undefined || typeof x[4] === 'number'),
        ) as GraphItem[])
      : [];
  } catch {
    return [];
  }
}

export const scopeOf = (s: SessionKey): string => `${s.prompt_hash}/${s.session}`;
