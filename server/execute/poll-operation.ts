/**
 * Answers about an operation from its descriptor alone (any process can give them): finding it,
 * `wait(oN)` (a progress line while it runs, `~` when it moved since the last poll, `=` when not),
 * and the terminal answer with its rows read back from the run artifact.
 */
import { svcError, SvcFailure } from '../../common/errors.js';
import type { ArtifactStore } from '../../runtime/artifacts/index.js';
import type { Outcome, ResultBlock } from './outcome.js';
import { opLine, opMeta, terminalSign, trimOperations, type Sign } from './operations.js';
import type { SessionRepository } from './repository.js';
import type { OpDescriptor, SessionKey, SessionState } from './state.js';

export interface PollDeps {
  repo: SessionRepository;
  artifacts: ArtifactStore;
  now: () => number;
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

/** wait(oN): a progress line while running; the terminal answer once done. */
export async function pollOperation(deps: PollDeps, key: SessionKey, handle: string): Promise<Outcome> {
  const now = deps.now();
  const polled = await deps.repo.update(
    key,
    (st): { ended: OpDescriptor } | { line: string; op: Record<string, string> } => {
      trimOperations(st.ops, now);
      const d = st.ops.get(handle) ?? unknownOperation(handle, st);
      if (d.state !== 'running') return { ended: { ...d } };
      const sign: Sign = d.version !== d.seen ? '~' : '=';
      d.seen = d.version;
      const line = opLine(d, sign, now);
      return { line, op: opMeta(d, sign, line) };
    },
  );
  if ('ended' in polled) return terminalAnswer(deps, polled.ended);
  return { kind: 'report', results: [], errors: [], text: polled.line, meta: { op: polled.op } };
}

/** The answer about an ended operation: its line, errors, and rows from its run artifact. */
export async function terminalAnswer(deps: Omit<PollDeps, 'repo'>, d: OpDescriptor): Promise<Outcome> {
  const sign = terminalSign(d.state);
  const line = opLine(d, sign, deps.now());
  const snap = d.run_id ? await deps.artifacts.get(d.run_id) : undefined;
  const results: ResultBlock[] = (d.blocks ?? []).map(({ step, ...b }) => ({
    ...b,
    rows: snap?.steps.find((x) => x.id === step)?.rows ?? [],
  }));
  return {
    kind: 'report',
    results,
    errors: d.errors,
    text: line,
    meta: {
      op: opMeta(d, sign, line),
      mode: 'live',
      ...(d.commit_id ? { commit_id: d.commit_id } : {}),
      ...(d.run_id ? { run_id: d.run_id } : {}),
      status: d.state,
      ...(d.errors[0] ? { code: d.errors[0].code } : {}),
    },
  };
}
