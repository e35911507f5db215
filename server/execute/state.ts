/**
 * What an execute session holds, as plain state kept by a `SessionRepository`: the address and
 * tenant, pinned catalogs, the symbol table and teaching text, plan tokens (pcN), page handles
 * (pgN), operation descriptors (oN), the runs made and the counters that mint handles. Nothing
 * here is process-local: the live part of an operation (its abort controller and listeners) stays
 * with the process that runs it (see background.ts).
 */
import { canonicalHash } from '../../common/canonical.js';
import type { SvcError } from '../../common/errors.js';
import type { Review } from '../../compiler/plan.js';
import { SymbolTable } from '../../compiler/symbols.js';
import type { PageState } from '../../runtime/fetch-rows.js';
import type { ResultBlock } from './outcome.js';

/** Where a session lives: its two address segments. */
export interface SessionKey {
  prompt_hash: string;
  session: string;
}

/** A dry-run's acceptance token: what the review gate needs, never the plan or the program. */
export interface PlanToken {
  commit_id: string;
  verdict: Review['verdict'];
  /** Remote-mutation steps of the plan (a token of a plan with writes is single use). */
  mutations: number;
  minted_at: number;
  /** Set when a live run consumed it. */
  consumed_at?: number;
  /** The program dry-run, kept (within a per-session budget) so the token alone can run it. */
  program?: string;
}

export interface RunRecord {
  run_id: string;
  commit_id: string;
  status: string;
  at: string;
  rows: number;
}

/** Where a result continues; `next` is the handle minted when it was first continued. */
export type PageEntry = PageState & { entity: string; used?: boolean; next?: string };

export type OpState = 'running' | 'succeeded' | 'failed' | 'cancelled';

/** Progress of one step of a background run, as the runtime last reported it. */
export interface StepProgress {
  phase: string;
  pages: number;
  rows: number;
  calls: number;
}

/**
 * The descriptor of a background operation: what any process can answer about it. The run itself
 * (abort controller, listeners, the promise) is local to the process that started it.
 */
export interface OpDescriptor {
  handle: string;
  state: OpState;
  started: number;
  ended?: number;
  /** Steps of the plan. */
  steps: number;
  /** Write steps of the plan (absent: none); an `operation_lost` answer says they may have landed. */
  writes?: number;
  /** Ids of the steps whose rows the program returns: progress lines count their rows only. */
  returns: string[];
  /** Step id -> latest progress. */
  progress: Record<string, StepProgress>;
  /** Grows with every progress change; `seen` is the version the last poll reported. */
  version: number;
  seen: number;
  run_id?: string;
  /** Commit id of the plan it runs. */
  commit_id?: string;
  /** The server process (replica) that runs it: only it can cancel it. */
  owner?: string;
  /**
   * While running: the owner renews this (ms since the epoch) every third of the lease; a replica
   * that finds it past treats the owner as gone and fails the operation (`operation_lost`).
   */
  lease_until?: number;
  /** The run is awaited by its caller (MCP svc_run): its lines say no poll. */
  awaited?: boolean;
  /** Result blocks (page handles minted) without rows: rows are read back from the run artifact. */
  blocks?: Array<Omit<ResultBlock, 'rows'> & { step: string }>;
  errors: SvcError[];
}

export interface SessionState extends SessionKey {
  /** Tenant scope ('' when inbound auth is off or the caller is anonymous). */
  tenant: string;
  intent: string;
  created_at: number;
  last_used: number;
  /** entry_id -> cgs_hash pinned when the entry joined the session (the first is the primary). */
  pins: Map<string, string>;
  symbols: SymbolTable;
  /** Rules + every wave, as taught so far. */
  teaching: string;
  tokens: Map<string, PlanToken>;
  /** pgN -> where the result continues. */
  pages: Map<string, PageEntry>;
  runs: RunRecord[];
  /** Background operations oN (running and recently ended). */
  ops: Map<string, OpDescriptor>;
  /** Logical session refs (`l_<token>`, MCP) bound to this session. */
  logical: string[];
  /** The last number minted of each kind of handle (pcN counts from 0, pgN and oN from 1). */
  counters: Record<Counter, number>;
  /**
   * Runs with a write step per entity (`api:Entity` -> count; absent: 0). The session graph of
   * every replica uses a row of an earlier run only when it was seen at the count the session has
   * now, so a write on one replica makes every other forget the rows of its entity (graphs.ts).
   */
  entity_writes: Record<string, number>;
}

export type Counter = 'pc' | 'pg' | 'o';

/** Bounds of what one session holds (oldest dropped first). */
export const SESSION_HOLDS = {
  /** Page handles kept. */
  maxPages: 256,
  /** Plan tokens kept. */
  maxTokens: 256,
  /** Characters of dry-run programs kept with their tokens (newest first; older tokens lose theirs). */
  tokenProgramBytes: 64 * 1024,
  /** Runs listed. */
  maxRuns: 100,
  /** Terminal operations kept. */
  maxTerminalOps: 32,
  /** A terminal operation is kept at most this long after it ended. */
  terminalOpTtlMs: 60 * 60 * 1000,
} as const;

/** `prompt_hash` of a session: 16 hex of the sha256 of the entry and the intent. */
export function promptHash(entryId: string, intent: string): string {
  return canonicalHash({ entry_id: entryId, intent }).slice(0, 16);
}

/** A fresh session's state. */
export function newSession(
  key: SessionKey,
  init: { entry_id: string; cgs_hash: string; intent: string; tenant: string; now: number },
): SessionState {
  return {
    ...key,
    tenant: init.tenant,
    intent: init.intent,
    created_at: init.now,
    last_used: init.now,
    pins: new Map([[init.entry_id, init.cgs_hash]]),
    symbols: new SymbolTable(),
    teaching: '',
    tokens: new Map(),
    pages: new Map(),
    runs: [],
    ops: new Map(),
    logical: [],
    counters: { pc: -1, pg: 0, o: 0 },
    entity_writes: {},
  };
}

/** True when an operation of the session is still running. */
export function runsOperations(s: SessionState): boolean {
  for (const o of s.ops.values()) if (o.state === 'running') return true;
  return false;
}

/** `map` without its oldest entries beyond `max` (insertion order). */
export function trimMap<K, V>(map: Map<K, V>, max: number): void {
  while (map.size > max) map.delete(map.keys().next().value as K);
}

/** The key of an entity in `SessionState.entity_writes`. */
export const entityKey = (api: string, entity: string): string => `${api}:${entity}`;

/** A key's text form: `prompt_hash/session`. */
export function keyText(k: SessionKey): string {
  return `${k.prompt_hash}/${k.session}`;
}
