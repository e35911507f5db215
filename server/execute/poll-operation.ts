/**
 * Answers about an operation from its descriptor alone (any process can give them): finding it,
 * `wait(oN)` (a progress line while it runs, `~` when it moved since the last poll, `=` when not),
 * and the terminal answer with its rows read back from the run artifact.
 */
import { svcError, SvcFailure, type SvcError } from '../../common/errors.js';
import type { ArtifactStore, RunSnapshot, WriteState } from '../../runtime/artifacts/index.js';
import type { OpMeta, Outcome, ResultBlock } from './outcome.js';
import { opLine, opMeta, terminalSign, trimOperations, type OpEvent, type Sign } from './operations.js';
import type { SessionRepository } from './repository.js';
import type { OpDescriptor, SessionKey, SessionState } from './state.js';
import { failLost, lostOperation } from './replica.js';
import { totalsIgnored } from './finish-run.js';

export interface PollDeps {
  repo: SessionRepository;
  /** The run artifacts; `writeState` (WriteBehindStore) tells a held or lost snapshot from an absent one. */
  artifacts: ArtifactStore & { writeState?(id: string): WriteState | undefined };
  now: () => number;
}

export interface WaitDeps extends PollDeps {
  /** True when the operation `handle` of the session runs in this process. */
  local: (handle: string) => boolean;
  /** No lease counts as lapsed before this time (ms): see `lostOperation`. */
  leasesJudgedFrom?: () => number;
}

/** The operation `handle` of a session, or `unknown_operation_handle`. */
export async function findOperation(repo: SessionRepository, key: SessionKey, handle: string): Promise<OpDescriptor> {
  const s = await repo.get(key);
  return s?.ops.get(handle) ?? unknownOperation(handle, s);
}

function unknownOperation(handle: string, s: SessionState | undefined): never {
  const have = s ? [...s.ops.keys()] : [];
  throw new SvcFailure([
    svcError('unknown_operation_handle', `\`${handle}\` is not an operation of this session`, {
      hint: `operations are started as background runs; their handles come in the accept line${have.length ? `; this session has ${have.join(', ')}` : ''}`,
    }),
  ]);
}

/**
 * wait(oN): a progress line while running; the terminal answer once done. An operation that runs
 * in another process answers `~` with the code `operation_not_on_replica` (keep polling), or, when
 * its owner let the lease lapse, fails here with `operation_lost`.
 */
export async function pollOperation(deps: WaitDeps, key: SessionKey, handle: string): Promise<Outcome> {
  const now = deps.now();
  const polled = await deps.repo.update(key, (st): { ended: OpDescriptor } | Running => {
    trimOperations(st.ops, now);
    const d = st.ops.get(handle) ?? unknownOperation(handle, st);
    const local = deps.local(handle);
    if (lostOperation(d, now, local, deps.leasesJudgedFrom?.())) failLost(d, now);
    if (d.state !== 'running') return { ended: { ...d } };
    const sign: Sign = d.version !== d.seen || !local ? '~' : '=';
    d.seen = d.version;
    const line = opLine(d, sign, now);
    return { line, op: opMeta(d, sign, line), elsewhere: !local };
  });
  if ('ended' in polled) return terminalAnswer(deps, polled.ended);
  return {
    kind: 'report',
    results: [],
    errors: [],
    text: polled.line,
    meta: { op: polled.op, ...(polled.elsewhere ? { code: 'operation_not_on_replica' as const } : {}) },
  };
}

interface Running {
  line: string;
  op: OpMeta;
  elsewhere: boolean;
}

/**
 * The answer about an ended operation: its line, errors, and rows from its run artifact. Rows that
 * cannot be read are never answered as no rows without a word: a warning says whether they are
 * held here and not stored yet, lost, or not in the store (see `artifactWarning`).
 */
export async function terminalAnswer(deps: Omit<PollDeps, 'repo'>, d: OpDescriptor): Promise<Outcome> {
  const sign = terminalSign(d.state);
  const line = opLine(d, sign, deps.now());
  const snap = d.run_id ? await deps.artifacts.get(d.run_id) : undefined;
  const results: ResultBlock[] = (d.blocks ?? []).map(({ step, ...b }) => ({
    ...b,
    rows: snap?.steps.find((x) => x.id === step)?.rows ?? [],
  }));
  const warning = d.blocks?.length ? artifactWarning(d, snap, deps.artifacts.writeState?.(d.run_id ?? '')) : undefined;
  const code = d.errors[0]?.code ?? warning?.code;
  const ignored = totalsIgnored(results);
  return {
    kind: 'report',
    results,
    errors: d.errors,
    ...(warning ? { warnings: [warning] } : {}),
    text: line,
    meta: {
      op: opMeta(d, sign, line),
      mode: 'live',
      ...(d.commit_id ? { commit_id: d.commit_id } : {}),
      ...(d.run_id ? { run_id: d.run_id } : {}),
      status: d.state,
      ...(code ? { code } : {}),
      ...(ignored ? { total_ignored: ignored } : {}),
    },
  };
}

/**
 * Why the rows of an ended operation `d` (which returned results) are not simply its stored run's:
 * held in this process's memory, its write retried (`run_artifact_pending`, rows answered); lost
 * (`run_artifact_lost`); not stored at all (`run_not_stored`); or not in the store, as on a replica
 * that did not run it while the one that did still holds it (`run_artifact_unavailable`).
 */
function artifactWarning(d: OpDescriptor, snap: RunSnapshot | undefined, state: WriteState | undefined) {
  const h = d.handle;
  const warn = (code: SvcError['code'], message: string, hint: string) => svcError(code, message, { hint });
  if (state === 'held' && snap)
    return warn(
      'run_artifact_pending',
      `the rows of \`${h}\` come from this server's memory: its run artifact is not stored yet`,
      `the artifact store did not take the write; it is retried with backoff, and wait(${h}) reads the stored run once it lands`,
    );
  if (snap) return undefined;
  if (state === 'lost')
    return warn(
      'run_artifact_lost',
      `the rows of \`${h}\` are lost: its run artifact could not be stored`,
      `the artifact store stayed unreachable while SVC_RUN_ARTIFACTS_PENDING_BYTES of held snapshots filled up (or the server stopped); run the program again`,
    );
  if (!d.run_id)
    return warn(
      'run_not_stored',
      `the rows of \`${h}\` were not stored: its run artifact could not be made`,
      'the server log has the details; run the program again',
    );
  return warn(
    'run_artifact_unavailable',
    `the rows of \`${h}\` are not in the artifact store`,
    `the server process that ran it may still hold them while the artifact store is down: wait(${h}) again in a minute; a run older than the retention is removed`,
  );
}

/**
 * Follow an operation that runs in another process (an SSE stream on a replica that does not run
 * it) by reading its descriptor every `everyMs`: a `progress` event when it moved, the `terminal`
 * event once it ended, or once its owner let the lease lapse (then it is failed here). A store
 * that does not answer is tried again at the next tick. Returns the function that stops following.
 */
export function followElsewhere(
  deps: WaitDeps,
  key: SessionKey,
  handle: string,
  listener: (e: OpEvent) => void,
  everyMs: number,
): () => void {
  let version: number | undefined;
  const end = (line: string) => {
    clearInterval(timer);
    listener({ kind: 'terminal', line });
  };
  const tick = async () => {
    let d: OpDescriptor;
    try {
      d = await findOperation(deps.repo, key, handle);
    } catch (e) {
      if (e instanceof SvcFailure && e.errors[0]?.code === 'store_unavailable') return;
      return end(`? ${handle} failed: the session is gone`);
    }
    const now = deps.now();
    if (lostOperation(d, now, deps.local(handle), deps.leasesJudgedFrom?.()))
      return end((await pollOperation(deps, key, handle)).text!);
    if (d.state !== 'running') return end(opLine(d, terminalSign(d.state), now));
    if (version !== undefined && d.version !== version) listener({ kind: 'progress', line: opLine(d, '~', now) });
    version = d.version;
  };
  const timer = setInterval(() => void tick().catch(() => undefined), everyMs);
  timer.unref();
  void tick().catch(() => undefined);
  return () => clearInterval(timer);
}
