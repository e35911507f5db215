/** What running a plan answers: each step's result, the returned rows and every error. */
import type { SvcError } from '../common/errors.js';
import type { Row } from './decode.js';
import type { PageState } from './fetch-rows.js';
import type { RunStatus, StepPhase } from './progress.js';

export interface StepResult {
  id: string;
  status: StepPhase;
  rows: Row[];
  total?: number;
  /** The vendor's total as sent when it was not a count (negative, not a number): ignored, no `total`. */
  total_ignored?: string;
  page?: PageState;
  error?: SvcError;
  /** A completed write that returns nothing: what it did (`deleted brewery:Beer 3`). */
  done?: string;
  calls: number;
  pages: number;
  ms: number;
  /** Rows answered from the session graph instead of a vendor call (a get of a row seen before). */
  graph?: number;
}

export interface ReturnedRows {
  step: string;
  /** `api:Entity` */
  entity: string;
  rows: Row[];
  total?: number;
  /** The vendor's total as sent when it was not a count: ignored (see StepResult). */
  total_ignored?: string;
  /** Present when the vendor has more pages: the server puts it behind a `pgN` handle. */
  page?: PageState;
  /** A write that returns nothing: the line confirming what it did. */
  done?: string;
}

export interface RunResult {
  status: RunStatus;
  steps: Record<string, StepResult>;
  returns: ReturnedRows[];
  /** Every step error, each with `path` `/steps/<id>`. */
  errors: SvcError[];
  elapsed_ms: number;
}
