/** The requests the execute core takes for programs and plans (surfaces decode theirs into these). */
import type { ProgressEvent } from '../../runtime/progress.js';

export interface ProgramRequest {
  program: string;
  /**
   * `plan` dry-runs (mints a pcN); `live` runs; `auto` runs a clean read at once (review verdict
   * proceed, clean flow, no write: dry-run and run fused) and dry-runs anything else; `check`
   * compiles and reviews only (no pcN, no run, the session unchanged: an editor's diagnostics).
   */
  mode: 'plan' | 'live' | 'auto' | 'check';
  wait: boolean;
  force: boolean;
  plan_commit_ref?: string;
  /** An awaited run stops when this aborts (the client went away). */
  signal?: AbortSignal;
  /** Progress of an awaited run (MCP notifications, the terminal's display). */
  onProgress?: (e: ProgressEvent) => void;
  /** A page continuation answers at most this many rows; the rest come with its next handle (MCP). */
  pageRows?: number;
  /** Who sends it (per-user credentials, forwarded vendor credentials); the tenant is the session's. */
  who?: Who;
}

/**
 * The sender of a request as its surface knows it: the subject inbound auth decided, and a reader
 * of its headers (the core reads only the forwarding headers the credentials file names).
 */
export interface Who {
  subject?: string;
  header?: (name: string) => string | undefined;
}

/** The gate and run flags of a request, without the program. */
export type RunRequest = Omit<ProgramRequest, 'program'>;

/** How a caller follows a run it awaits (MCP svc_run): its progress lines, and its own abort. */
export interface Follow {
  /** The run is cancelled when this aborts (the client cancelled the request or went away). */
  signal?: AbortSignal;
  /** Each progress line: the accept line (`+`, with the commit id), running lines (`~`), the terminal one. */
  onLine?: (e: FollowLine) => void;
  /** A page handle answers at most this many rows; the rest come with its next handle (MCP). */
  pageRows?: number;
  /** Who asks (credentials of the run's vendor calls). */
  who?: Who;
}

/** One line of an awaited run: the line, the operation's handle, and on the accept line the plan's commit id. */
export interface FollowLine {
  line: string;
  handle: string;
  commit_id?: string;
}
