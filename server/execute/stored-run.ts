/**
 * Stored runs of a session, read back by their id: the snapshot must name the session and the
 * caller's tenant. Works when the session itself is gone (a restart with a file store). A
 * background run's snapshot held in memory (its write retried) answers from there; one that was
 * lost before it could be stored answers `run_artifact_lost`, not `unknown_run`.
 */
import { svcError, SvcFailure } from '../../common/errors.js';
import { quote } from '../../common/quote.js';
import type { ArtifactStore, RunSnapshot } from '../../runtime/artifacts/index.js';
import { WriteBehindStore } from '../../runtime/artifacts/write-behind.js';
import { isArtifactId } from '../../runtime/artifacts/snapshot.js';
import type { SessionKey } from './state.js';

export async function storedRun(
  artifacts: ArtifactStore,
  key: SessionKey,
  tenant: string,
  runId: string,
): Promise<RunSnapshot> {
  const snap = isArtifactId(runId) ? await artifacts.get(runId) : undefined;
  const mine =
    snap?.session?.prompt_hash === key.prompt_hash &&
    snap.session.session === key.session &&
    (snap.session.tenant ?? '') === tenant;
  if (mine) return snap;
  if (!snap && artifacts instanceof WriteBehindStore && artifacts.lostOf(runId, `${key.prompt_hash}/${key.session}`))
    throw new SvcFailure([
      svcError('run_artifact_lost', `the run \`${quote(runId)}\` is lost: its artifact could not be stored`, {
        hint: 'the artifact store stayed unreachable until the server dropped the snapshot it held; run the program again',
      }),
    ]);
  throw new SvcFailure([
    svcError('unknown_run', `no run \`${quote(runId)}\` in this session`, {
      hint: 'the runs of a session are listed with their run ids',
    }),
  ]);
}
