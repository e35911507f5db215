/**
 * The run snapshot: what a stored run artifact holds, and its id: content-addressed (`pr` + sha256
 * hex of its JSON, `snapshotJson`), or minted (`mintArtifactId`) for a store that does not check
 * ids. Built from a `RunResult` (pure). Page states are left out on purpose: they carry vendor
 * cursors (and, for Link pagination, vendor URLs), which stay behind `pgN` handles and never
 * reach an artifact.
 */
import { randomBytes } from 'node:crypto';
import { sha256Hex } from '../../common/canonical.js';
import type { Plan } from '../../compiler/plan.js';
import type { Row } from '../decode.js';
import type { RunResult } from '../execute.js';
import type { RunStatus, StepPhase } from '../progress.js';

/** The snapshot format this build writes; part of the hashed content. */
export const SNAPSHOT_FORMAT = 1 as const;

/** `pr` followed by 64 lower-case hex digits. */
export const ARTIFACT_ID_PATTERN = /^pr[0-9a-f]{64}$/;

/** A step or run error as stored: no span, path or cause. */
export interface SnapshotError {
  /** Stable snake_case code (`vendor_error`, `step_skipped`, ...). */
  code: string;
  /** One line saying what went wrong (never a secret). */
  message: string;
  /** How to fix it, when the runtime gave one. */
  hint?: string;
}

/** One plan step as it ran. */
export interface SnapshotStep {
  /** Step id of the plan (`n1`, `n2`, ...). */
  id: string;
  /** Final phase: `done`, `failed`, `skipped` or `cancelled`. */
  status: StepPhase;
  /** entry_id of the catalog the step called. */
  api: string;
  /** Entity name within that catalog (not qualified; `api` qualifies it). */
  entity: string;
  /** Capability name the step invoked. */
  capability: string;
  /** Rows of the step: projected as the program asked for returned steps, every declared field otherwise. */
  rows: Row[];
  /** Total row count the vendor reported, when it reported one. */
  total?: number;
  /** Why the step did not complete. */
  error?: SnapshotError;
  /** Vendor HTTP calls made (retries included). */
  calls: number;
  /** Vendor pages decoded. */
  pages: number;
  /** Wall time of the step in ms. */
  ms: number;
}

/** The stored form of one run. Every field is part of the content hash. */
export interface RunSnapshot {
  /** Snapshot format version (`1`). */
  format: typeof SNAPSHOT_FORMAT;
  /** Commit id of the plan that ran (sha256 hex, see `planCommitId`). */
  plan_commit_id: string;
  /** Program text the plan was compiled from, when the caller had one and it is at most `PROGRAM_TEXT_MAX` long. */
  program?: string;
  /** For a longer program: the sha256 hex of its text (UTF-8) instead of the text, and its length in bytes. */
  program_sha256?: string;
  program_bytes?: number;
  /** Outcome of the run. */
  status: RunStatus;
  /** Every step that has a result, in plan order. */
  steps: SnapshotStep[];
  /** Step ids whose rows the program returns, in program order. */
  returns: string[];
  /**
   * Errors not attached to a stored step: those of a run refused before any step ran
   * (`write_not_accepted`, `catalog_mismatch`, `missing_secret`). Absent when there are none.
   */
  errors?: SnapshotError[];
  /** When the run started (ISO 8601, UTC). */
  started_at: string;
  /** Wall time of the whole run in ms. */
  elapsed_ms: number;
  /**
   * The execute session that ran it, when there was one, and its tenant ('' for anonymous
   * callers): a stored run stays readable by its tenant after the session is gone (a restart).
   */
  session?: SnapshotSession;
}

export interface SnapshotSession {
  prompt_hash: string;
  session: string;
  tenant?: string;
}

/** The session a snapshot belongs to, as one string (undefined for a run outside a session). */
export function ownerOf(s: RunSnapshot): string | undefined {
  const o = s.session;
  return o ? `${o.prompt_hash}/${o.session}` : undefined;
}

export interface SnapshotExtra {
  program?: string;
  /** When the run started: a Date, or its ISO 8601 text when the caller formatted it already. */
  startedAt: Date | string;
  session?: SnapshotSession;
}

/** Programs up to this many characters are stored as text; longer ones by digest and size. */
export const PROGRAM_TEXT_MAX = 16 * 1024;

function storedError(e: { code: string; message: string; hint?: string }): SnapshotError {
  return e.hint !== undefined
    ? { code: e.code, message: e.message, hint: e.hint }
    : { code: e.code, message: e.message };
}

/**
 * The snapshot of `run`, a run of `plan` whose commit id is `commitId`. Rows are shared with
 * `run`, not copied: stores serialize the snapshot when it is put.
 * @example const id = await store.put(snapshotOf(plan, planCommitId(plan), run, { startedAt }));
 */
export function snapshotOf(plan: Plan, commitId: string, run: RunResult, extra: SnapshotExtra): RunSnapshot {
  const steps: SnapshotStep[] = [];
  for (const s of plan.steps) {
    const r = run.steps[s.id];
    if (!r) continue;
    const step: SnapshotStep = {
      id: s.id,
      status: r.status,
      api: s.api,
      entity: s.entity,
      capability: s.capability,
      rows: returnedRows(run, s.id) ?? r.rows,
      calls: r.calls,
      pages: r.pages,
      ms: r.ms,
    };
    if (r.total !== undefined) step.total = r.total;
    if (r.error) step.error = storedError(r.error);
    steps.push(step);
  }
  const snap: RunSnapshot = {
    format: SNAPSHOT_FORMAT,
    plan_commit_id: commitId,
    status: run.status,
    steps,
    returns: run.returns.map((r) => r.step),
    started_at: typeof extra.startedAt === 'string' ? extra.startedAt : extra.startedAt.toISOString(),
    elapsed_ms: run.elapsed_ms,
  };
  if (run.errors.length) {
    const stored = new Set(steps.map((s) => `/steps/${s.id}`));
    const unattached = run.errors.filter((e) => e.path === undefined || !stored.has(e.path));
    if (unattached.length) snap.errors = unattached.map(storedError);
  }
  if (extra.program !== undefined && extra.program.length <= PROGRAM_TEXT_MAX) snap.program = extra.program;
  else if (extra.program !== undefined) {
    snap.program_sha256 = sha256Hex(extra.program);
    snap.program_bytes = Buffer.byteLength(extra.program);
  }
  if (extra.session) {
    snap.session = { prompt_hash: extra.session.prompt_hash, session: extra.session.session };
    if (extra.session.tenant !== undefined) snap.session.tenant = extra.session.tenant;
  }
  return snap;
}

/** The rows the run returns for step `id` (the last return naming it); a plan returns a few steps, so no Map. */
function returnedRows(run: RunResult, id: string): RunResult['returns'][number]['rows'] | undefined {
  for (let i = run.returns.length - 1; i >= 0; i--) if (run.returns[i]!.step === id) return run.returns[i]!.rows;
  return undefined;
}

/**
 * The stored form of a snapshot: its JSON, keys in the order `snapshotOf` writes them (fixed
 * for the snapshot's own fields; a row's as the runtime shaped it: the catalog's field order, or
 * the projection's). So the same run always serializes to the same bytes, without the sorted deep
 * copy canonical JSON would take on every answer's path.
 */
export function snapshotJson(snapshot: RunSnapshot): string {
  return JSON.stringify(snapshot);
}

/** The content-addressed id of a snapshot: `pr` + sha256 hex of its stored form (`snapshotJson`). */
export function artifactId(snapshot: RunSnapshot): string {
  return 'pr' + sha256Hex(snapshotJson(snapshot));
}

/** Random bytes for minted ids, drawn 32 at a time from a pool refilled for 128 ids. */
let pool = Buffer.alloc(0);
let drawn = 0;

/**
 * A new artifact id, `pr` + 64 hex of 32 random bytes: the id of a snapshot not serialized yet,
 * for a store that reads back what it was given without checking it against the id (memory).
 */
export function mintArtifactId(): string {
  if (drawn + 32 > pool.length) {
    pool = randomBytes(32 * 128);
    drawn = 0;
  }
  drawn += 32;
  return 'pr' + pool.toString('hex', drawn - 32, drawn);
}

/** True when `id` has the form of an artifact id (checked before any store lookup). */
export function isArtifactId(id: unknown): id is string {
  return typeof id === 'string' && ARTIFACT_ID_PATTERN.test(id);
}

/**
 * The snapshot a store holds as `bytes` under `id`: undefined unless the bytes hash to `id`
 * (`pr` + sha256 hex) and parse to a snapshot object of this format. How a store that reads
 * bytes back (file, S3) answers a corrupt or altered object: as absent.
 */
export function verifiedSnapshot(id: string, bytes: Uint8Array): RunSnapshot | undefined {
  if ('pr' + sha256Hex(bytes) !== id) return undefined;
  try {
    const v = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')) as unknown;
    if (
      v === null ||
      typeof v !== 'object' ||
      Array.isArray(v) ||
      (v as { format?: unknown }).format !== SNAPSHOT_FORMAT
    )
      return undefined;
    return v as RunSnapshot;
  } catch {
    return undefined;
  }
}
