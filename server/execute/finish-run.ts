/**
 * What a finished run leaves in its session: its stored snapshot (a run artifact), the page
 * handles of results that continue, and its run record. A store that fails (the run may have
 * written to the vendor) is logged and answered as a warning with the run's own result, never as
 * a failure that would hide what the run did. With `write: 'later'` (a waited read) the snapshot
 * is written after the answer: its id is answered at once, a read of it waits for the write, and a
 * failed write is logged and counted in `/v1/health` instead. With `write: 'hold'` (a background
 * run, whose artifact is the only copy of its rows) a failed write keeps the snapshot in memory
 * and retries it (runtime/artifacts/held.ts): the run keeps its id, and the warning is
 * `run_artifact_pending`. The session write (page handles, the run record) has landed before
 * this resolves: a handle answered is a handle stored.
 */
import { svcError, type SvcError } from '../../common/errors.js';
import type { Logger } from '../../common/log.js';
import type { Plan } from '../../compiler/plan.js';
import { snapshotOf, type SnapshotExtra, type WriteBehindStore } from '../../runtime/artifacts/index.js';
import type { RunResult } from '../../runtime/execute.js';
import type { Outcome, ResultBlock, SvcMeta } from './outcome.js';
import { mintPage } from './pages.js';
import type { SessionRepository } from './repository.js';
import { entityKey, SESSION_HOLDS, type SessionState } from './state.js';

export interface FinishDeps {
  /** Only its update (a background run's end passes one retried while the store is away: write-back.ts). */
  repo: Pick<SessionRepository, 'update'>;
  artifacts: WriteBehindStore;
  logger: Logger;
}

export interface Finished {
  /** The stored snapshot's id; '' when it could not be stored (and is not held). */
  run_id: string;
  blocks: ResultBlock[];
  /** `run_not_stored` when the store failed; `run_artifact_pending` when the snapshot is held. */
  warning?: SvcError;
}

/**
 * When the snapshot is written: before the answer (`now`: a waited run, whose answer carries its
 * rows), after it (`later`: a clean read), or before and held on failure (`hold`, the default: a
 * background run, the `FinishRun` the background runner is given).
 */
export type ArtifactWrite = 'now' | 'later' | 'hold';

/** How a run is finished. */
export interface FinishOptions {
  /** When the run started: its record's and its snapshot's `started_at`. */
  startedAt: Date;
  /** The program text, stored with the snapshot (none for a client-compiled plan). */
  program?: string | undefined;
  /** When the snapshot is written (default `hold`). */
  write?: ArtifactWrite;
}

/** What a run leaves in its session, as the background runner is given it. */
export type FinishRun = (
  s: SessionState,
  plan: Plan,
  commit_id: string,
  run: RunResult,
  opts: Pick<FinishOptions, 'startedAt' | 'program'>,
) => Promise<Finished>;

export async function finishRun(
  deps: FinishDeps,
  s: SessionState,
  plan: Plan,
  commit_id: string,
  run: RunResult,
  { startedAt, program, write = 'hold' }: FinishOptions,
): Promise<Finished> {
  let run_id = '';
  let warning: SvcError | undefined;
  /** The run's `started_at`, for its run record and its snapshot (`toISOString` is not cheap). */
  const at = startedAt.toISOString();
  try {
    const extra: SnapshotExtra = {
      startedAt: at,
      session: { prompt_hash: s.prompt_hash, session: s.session, tenant: s.tenant },
    };
    if (program !== undefined) extra.program = program;
    const make = () => snapshotOf(plan, commit_id, run, extra);
    // Written later (and with the memory store, built later): a failure is logged and counted by
    // the store (/v1/health), not answered.
    if (write === 'later') run_id = deps.artifacts.putLater(make);
    else if (write === 'now') run_id = await deps.artifacts.put(make());
    else {
      run_id = await deps.artifacts.putOrHold(make());
      if (deps.artifacts.writeState(run_id) === 'held') warning = heldWarning();
    }
  } catch (e) {
    deps.logger.error(`the run artifact of session ${s.prompt_hash}/${s.session} could not be stored`, {
      error: (e as Error)?.message ?? String(e),
    });
    warning = svcError('run_not_stored', 'the run completed but its artifact could not be stored', {
      hint: "the rows above are the run's result; it is not listed in the session's runs",
    });
  }
  const blocks = await deps.repo.update(s, (st) => {
    const out = run.returns.map((r) => {
      const b: ResultBlock = { entity: r.entity, rows: r.rows };
      if (r.total !== undefined) b.total = r.total;
      if (r.total_ignored !== undefined) b.total_ignored = r.total_ignored;
      if (r.page) b.next = mintPage(st, r.page, r.entity);
      if (r.done) b.done = r.done;
      return b;
    });
    // A write to an entity: every replica's session graph forgets its rows (graphs.ts).
    for (const x of plan.steps) {
      if (x.effect !== 'write') continue;
      const k = entityKey(x.api, x.entity);
      st.entity_writes[k] = (st.entity_writes[k] ?? 0) + 1;
    }
    if (run_id) {
      const rows = out.reduce((n, b) => n + b.rows.length, 0);
      st.runs.push({ run_id, commit_id, status: run.status, at, rows });
      while (st.runs.length > SESSION_HOLDS.maxRuns) st.runs.shift();
    }
    return out;
  });
  const finished: Finished = { run_id, blocks };
  if (warning) finished.warning = warning;
  return finished;
}

function heldWarning(): SvcError {
  return svcError('run_artifact_pending', 'the run completed but its artifact is not stored yet', {
    hint: 'the rows are held in memory by this server and their write is retried with backoff',
  });
}

/**
 * The answer of an awaited live run: its blocks, errors, the storage warning, and `_meta.svc`.
 * `reads`: the plan has no write step (then a run without errors or warnings is a clean read).
 */
export function liveOutcome(
  commit_id: string,
  run: RunResult,
  done: { run_id?: string; blocks: ResultBlock[]; warning?: SvcError },
  { reads = false }: { reads?: boolean } = {},
): Outcome {
  const { run_id, blocks, warning } = done;
  const ignored = totalsIgnored(blocks);
  const meta: SvcMeta = {
    mode: 'live',
    commit_id,
    ...(run_id ? { run_id } : {}),
    status: run.status,
    ...(run.errors[0] ? { code: run.errors[0].code } : {}),
    ...(ignored ? { total_ignored: ignored } : {}),
  };
  const clean = reads && run.status === 'succeeded' && !run.errors.length && !warning && !ignored;
  return {
    kind: 'result',
    ...(clean ? { clean: true } : {}),
    results: blocks,
    errors: run.errors,
    ...(warning ? { warnings: [warning] } : {}),
    meta,
  };
}

/**
 * `_meta.svc.total_ignored`: each returned list whose vendor total was not a count (negative, not
 * a number), with the total as sent. No `total` is answered for it, so no "3 of -75905565" line;
 * saying so keeps the reader from taking the missing total for a vendor that sends none.
 */
export function totalsIgnored(
  blocks: readonly Omit<ResultBlock, 'rows'>[],
): Array<{ entity: string; total: string }> | undefined {
  const out = blocks.flatMap((b) =>
    b.total_ignored === undefined ? [] : [{ entity: b.entity, total: b.total_ignored }],
  );
  return out.length ? out : undefined;
}
