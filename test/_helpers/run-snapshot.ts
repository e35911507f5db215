/** A small succeeded run snapshot for artifact-store tests; `n` makes each one distinct. */
import type { RunSnapshot } from '../../runtime/artifacts/snapshot.js';

export function snapshot(n: number): RunSnapshot {
  return {
    format: 1,
    plan_commit_id: 'c'.repeat(64),
    status: 'succeeded',
    steps: [],
    returns: [],
    started_at: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
    elapsed_ms: n,
    session: { prompt_hash: 'ph', session: 's1', tenant: '' },
  };
}
