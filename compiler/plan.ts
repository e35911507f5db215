/**
 * The plan IR: a typed DAG compiled from a program. Symbols never reach it: steps name catalogs
 * (pinned by `cgs_hash`), entities and capabilities by their real names and arguments by wire
 * names, so one program yields one commit id on every surface.
 */
import { canonicalJson, sha256Hex } from '../common/canonical.js';
import type { CapabilityKind, JsonValue, SortOrder } from '../pack/cgs.js';

/** Bumped on any change of the plan format; part of the commit id. */
export const PLAN_VERSION = 1 as const;

/** The order of a list: one of the fields its capability sorts by, and the direction. */
export interface PlanSort {
  field: string;
  order: SortOrder;
}

/** An argument value: a literal, or a field of the rows of an earlier step. */
export type PlanArg = { lit: JsonValue } | { ref: { step: string; field: string } };
/** An argument of a nest: a literal, or a field of the row the nest hangs from. */
export type NestArg = { lit: JsonValue } | { field: string };

export interface PlanStep {
  /** `n1`, `n2`, ... in program order. */
  id: string;
  op: CapabilityKind;
  /** entry_id of the catalog. */
  api: string;
  /** The catalog content the step was compiled against. */
  cgs_hash: string;
  entity: string;
  capability: string;
  /** Wire name -> value; absent optional parameters are simply not here. */
  args: Record<string, PlanArg>;
  /** Fields to keep; absent = every declared field. */
  projection?: string[];
  /** Steps whose results this one needs (refs and relation sources). */
  depends_on: string[];
  effect: 'read' | 'write';
  /** Rows wanted from a rows-returning step: absent = one vendor page. */
  limit?: number;
  /** The order asked of a list that sorts (`sort="createdAt", order="desc"`): absent = the vendor's. */
  sort?: PlanSort;
  /** Set when the step follows a relation: its name and the step it starts from (absent when the parent was folded into a literal id). */
  via?: { relation: string; from?: string };
  /** Set when a ref argument takes its values from a step returning many rows: one call per row. */
  fanout?: { from: string; max: number };
  /** Relations fetched for each row and attached to it under the relation's name (`[id, r6[name]]`). */
  nest?: PlanNest[];
}

/**
 * A relation followed from every row of a step and attached to the row (a nested projection):
 * one vendor call per distinct set of argument values (rows that share a related id share the
 * call). Its `args` take literals, or fields of the row it hangs from.
 */
export interface PlanNest {
  /** Relation of the parent entity (its wire name): the key the related row or rows get. */
  relation: string;
  entity: string;
  capability: string;
  /** `one`: the related row or null; `many`: a list of rows. */
  card: 'one' | 'many';
  args: Record<string, NestArg>;
  projection?: string[];
  /** Rows wanted per parent row (many only): absent = one vendor page. */
  limit?: number;
  /** The order of the related rows (many only), as a step's `sort`. */
  sort?: PlanSort;
  /** Most distinct calls the nest may make (one per distinct argument set). */
  max: number;
  nest?: PlanNest[];
}

export interface Plan {
  version: typeof PLAN_VERSION;
  steps: PlanStep[];
  /** Binding name -> step id. */
  bind: Record<string, string>;
  /** Step ids whose rows the program returns, in program order. */
  return: string[];
  /** Session-local name (not hashed). */
  name?: string;
  /** Dry-run review (not hashed). */
  summary?: Review;
}

export type Verdict = 'proceed' | 'review';
/**
 * `unbounded_list`: a list may yield more than 1000 rows; `large_fanout`: a fan-out over more than
 * 25 rows; `over_call_budget`: the plan may make more vendor calls than its budget.
 */
export type FlowWarning = 'unbounded_list' | 'large_fanout' | 'over_call_budget';

export interface Review {
  verdict: Verdict;
  /** `clean`, or the warnings found. */
  flow: 'clean' | FlowWarning[];
  /** Steps that change the vendor's state. */
  mutations: number;
  /**
   * Upper bound of the vendor HTTP calls the plan makes (pages and fan-out calls; retries not
   * counted); null when no bound can be given (then the flow has `over_call_budget`).
   */
  max_calls: number | null;
  /** Short human-readable account of the DAG, one line per step. */
  text: string;
}

/**
 * The content-addressed commit id: sha256 of the canonical JSON of {version, steps, bind, return}.
 */
export function planCommitId(plan: Plan): string {
  const { version, steps, bind, return: ret } = plan;
  return sha256Hex(canonicalJson({ version, steps, bind, return: ret }));
}

/** Catalog pins of a plan: api -> cgs_hash. */
export function planCatalogs(plan: Plan): Record<string, string> {
  const out: Record<string, string> = {};
  for (const s of plan.steps) out[s.api] = s.cgs_hash;
  return out;
}
