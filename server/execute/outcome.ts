/** What the execute core answers, before a surface renders it (no protocol status in it). */
import type { SvcError } from '../../common/errors.js';
import type { Row } from '../../runtime/decode.js';

/** One returned expression: its rows and, when the vendor has more, the handle to continue. */
export interface ResultBlock {
  /** `api:Entity` */
  entity: string;
  rows: Row[];
  total?: number;
  /** The vendor's total as sent when it was not a count: ignored, said in `_meta.svc.total_ignored`. */
  total_ignored?: string;
  /** `pgN` when more pages exist. */
  next?: string;
  /** A write that returns nothing: what it did (`deleted brewery:Beer 3`). */
  done?: string;
}

/** `_meta.svc` of an execute response. */
export interface SvcMeta {
  mode?: 'plan' | 'live' | 'check';
  commit_id?: string;
  plan_commit_ref?: string;
  dry_verdict?: string;
  dry_review?: {
    verdict: string;
    flow: string | string[];
    mutations: number;
    max_calls: number | null;
    summary: string;
  };
  run_id?: string;
  status?: string;
  domain_revision?: number;
  code?: string;
  [k: string]: unknown;
}

/**
 * What kind of answer an outcome is, for the surface to render (the HTTP layer maps it to a
 * status): `created` a new session; `started` a background run accepted; `report` an answer about
 * an operation (its errors are part of the report, not a failure of the request); `result`
 * anything else, a failure of the request when it carries errors.
 */
export type OutcomeKind = 'created' | 'started' | 'report' | 'result';

export interface Outcome {
  kind: OutcomeKind;
  results: ResultBlock[];
  errors: SvcError[];
  /** Problems that did not fail the request (for example a run whose artifact could not be stored). */
  warnings?: SvcError[];
  /** A short text line for the reader (a notice, a dry-run summary, a teaching table). */
  text?: string;
  meta: SvcMeta;
  /**
   * A live run of reads only that succeeded without errors or warnings: its audit fields
   * (`commit_id`, `run_id`, `mode`, `status`) are for logs and the stored run, not for the reader,
   * so a compact surface may leave them out.
   */
  clean?: boolean;
  /** Extra top-level fields (session creation: prompt_hash, session, ...). */
  extra?: Record<string, unknown>;
}
