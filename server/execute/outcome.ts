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

/** `_meta.svc.op`: `n` handle, `~` sign, `s` state, `l` the line, `r` run artifact id (when ended). */
export interface OpMeta {
  n: string;
  '~': string;
  s: string;
  l: string;
  r?: string;
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
  /** A vendor total that was not a count, by result block (finish-run.ts totalsIgnored). */
  total_ignored?: Array<{ entity: string; total: string }>;
  /** A background operation's line: see OpMeta. */
  op?: OpMeta;
}

/**
 * What kind of answer an outcome is, for the surface to render (the HTTP layer maps it to a
 * status): `created` a new session; `started` a background run accepted; `report` an answer about
 * an operation (its errors are part of the report, not a failure of the request); `result`
 * anything else, a failure of the request when it carries errors.
 */
export type OutcomeKind = 'created' | 'started' | 'report' | 'result';

/**
 * What a teaching answer adds at the top level of the body: the catalogs pinned, the wave of the
 * table taught now; for a new session its keys and the rules too (`TeachingOpened`).
 */
export interface TeachingFields {
  domain_revision: number;
  entries: Array<{ entry_id: string; cgs_hash: string }>;
  wave: string;
  notice?: string;
  /** The caller may only read: the table leaves out every write. */
  read_only?: true;
}

/** The top-level fields of a new session's answer. */
export interface TeachingOpened extends TeachingFields {
  prompt_hash: string;
  session: string;
  rules: string;
}

interface OutcomeBase {
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
}

/** A new session (POST /v1/execute without a session, svc_context): its keys and its first table. */
export interface CreatedOutcome extends OutcomeBase {
  kind: 'created';
  extra: TeachingOpened;
}

/** More of the table for a session (expand or federate). */
export interface TaughtOutcome extends OutcomeBase {
  kind: 'result';
  extra: TeachingFields;
}

/** A background run accepted: its `+` line, and the operation in `meta.op`. */
export interface StartedOutcome extends OutcomeBase {
  kind: 'started';
  meta: SvcMeta & { op: OpMeta };
  extra?: undefined;
}

/** Any other answer: a run's results, a dry-run, a report on an operation. */
export interface PlainOutcome extends OutcomeBase {
  kind: 'report' | 'result';
  extra?: undefined;
}

/**
 * What the execute core answers. A surface switches on `kind` (and reads `extra`, the teaching
 * fields, only where a teaching answer has them).
 */
export type Outcome = CreatedOutcome | TaughtOutcome | StartedOutcome | PlainOutcome;
