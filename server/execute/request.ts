/** The requests the execute core takes for programs and plans (surfaces decode theirs into these). */
import type { ProgressEvent } from '../../runtime/progress.js';

export interface ProgramRequest {
  program: string;
  mode: 'plan' | 'live';
  wait: boolean;
  force: boolean;
  plan_commit_ref?: string;
  /** An awaited run stops when this aborts (the client went away). */
  signal?: AbortSignal;
  /** Progress of an awaited run (MCP notifications, the terminal's display). */
  onProgress?: (e: ProgressEvent) => void;
}

/** The gate and run flags of a request, without the program. */
export type RunRequest = Omit<ProgramRequest, 'program'>;
