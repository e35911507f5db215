/**
 * Compiled plans, by session and program, for one registry and domain revision: a dry-run and its
 * live run, a poll or a retry compile once. One process-wide LRU bounded by an estimate of the
 * bytes it holds, so no session (and no number of sessions) can grow it past its budget. Keys hold
 * a digest of a long program, never its text.
 */
import { createHash } from 'node:crypto';
import type { Plan, Review } from '../../compiler/plan.js';
import type { Registry } from '../../pack/registry.js';
import type { SessionState } from './state.js';

/** A compiled plan as the cache keeps it. */
export interface CompiledPlan {
  plan: Plan;
  commit_id: string;
  review: Review;
}

/** Bytes the cache may hold in all (an estimate: see `weight`). */
export const DEFAULT_PLAN_CACHE_BYTES = 32 * 1024 * 1024;
/** Programs up to this length key the cache by their own text; longer ones by a sha256. */
const TEXT_KEY_MAX = 128;

interface Item {
  registry: Registry;
  compiled: CompiledPlan;
  bytes: number;
}

export class PlanCache {
  private readonly items = new Map<string, Item>();
  private held = 0;
  /** One plan may take at most this share of the budget; larger ones are compiled every time. */
  private readonly maxItemBytes: number;

  constructor(readonly maxBytes = DEFAULT_PLAN_CACHE_BYTES) {
    this.maxItemBytes = Math.floor(maxBytes / 8);
  }

  /** The plan compiled earlier from `program` in `s`, when the registry and revision still hold. */
  get(s: SessionState, program: string, registry: Registry): CompiledPlan | undefined {
    const k = key(s, program);
    const item = this.items.get(k);
    if (!item || item.registry !== registry) return undefined;
    // Re-insert: the Map's order is the eviction order (least recently used first).
    this.items.delete(k);
    this.items.set(k, item);
    return item.compiled;
  }

  set(s: SessionState, program: string, registry: Registry, compiled: CompiledPlan): void {
    const bytes = weight(program, compiled.plan);
    if (bytes > this.maxItemBytes) return;
    const k = key(s, program);
    const old = this.items.get(k);
    if (old) {
      this.items.delete(k);
      this.held -= old.bytes;
    }
    this.items.set(k, { registry, compiled, bytes });
    this.held += bytes;
    for (const [oldest, item] of this.items) {
      if (this.held <= this.maxBytes) break;
      this.items.delete(oldest);
      this.held -= item.bytes;
    }
  }

  stats(): { entries: number; bytes: number; max_bytes: number } {
    return { entries: this.items.size, bytes: this.held, max_bytes: this.maxBytes };
  }
}

/** Session, domain revision (a new wave changes what symbols mean) and the program or its digest. */
function key(s: SessionState, program: string): string {
  const p = program.length <= TEXT_KEY_MAX ? program : createHash('sha256').update(program).digest('base64');
  return `${s.prompt_hash}/${s.session}#${s.symbols.domainRevision}#${p}`;
}

/**
 * Estimated bytes of a cached plan: its literals are about the program's size, held twice (the
 * plan and the review text, UTF-16), plus a fixed share per step.
 */
function weight(program: string, plan: Plan): number {
  return 4 * program.length + 512 * plan.steps.length + 256;
}
