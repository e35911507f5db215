/** What an execute route answers, before it is rendered in the negotiated format. */
import type { SvcError } from '../../common/errors.js';
import type { Row } from '../../runtime/decode.js';

/** One returned expression: its rows and, when the vendor has more, the handle to continue. */
export interface ResultBlock {
  /** `api:Entity` */
  entity: string;
  rows: Row[];
  total?: number;
  /** `pgN` when more pages exist. */
  next?: string;
}

/** `_meta.svc` of an execute response. */
export interface SvcMeta {
  mode?: 'plan' | 'live';
  commit_id?: string;
  plan_commit_ref?: string;
  dry_verdict?: string;
  dry_review?: { verdict: string; flow: string | string[]; mutations: number; max_calls: number | null; summary: string };
  run_id?: string;
  status?: string;
  domain_revision?: number;
  code?: string;
  [k: string]: unknown;
}

export interface Outcome {
  /** HTTP status to answer with. */
  status: number;
  results: ResultBlock[];
  errors: SvcError[];
  /** A short text line for the reader (a notice, a dry-run summary, a teaching table). */
  text?: string;
  meta: SvcMeta;
  /** Extra top-level fields (session creation: prompt_hash, session, ...). */
  extra?: Record<string, unknown>;
}
