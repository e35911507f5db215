/**
 * What a server process (a replica) needs to share background operations with others through a
 * shared session store: its id, the lease it holds on the operations it runs, and how often it
 * writes their progress. With the in-process store there is one replica and no lease (every
 * running operation is local); with Redis an operation whose owner stopped renewing its lease is
 * failed by whichever replica finds it (`operation_lost`), so nothing stays running forever. That
 * mark is a guess: an owner that was only cut off from the store writes its end over it
 * (background.ts, write-back.ts).
 */
import { randomBytes } from 'node:crypto';
import { svcError } from '../../common/errors.js';
import type { SessionRepository } from './repository.js';
import type { OpDescriptor, SessionState } from './state.js';

export interface ReplicaOptions {
  /** This process's id (random per start). */
  id: string;
  /** How long a running operation's lease lasts; renewed every third of it. 0: no leases (one process). */
  leaseMs: number;
  /** At most one progress write per operation in this window (SPEC: about 2 s); 0 writes each change. */
  progressCoalesceMs: number;
}

/** Progress writes to a shared store are coalesced over about 2 s (SPEC). */
export const SHARED_PROGRESS_COALESCE_MS = 2_000;

/** A new replica id: `r` + 12 hex. */
export function newReplicaId(): string {
  return `r${randomBytes(6).toString('hex')}`;
}

/** One process, in-process store: no leases, every progress change written at once. */
export function localReplica(): ReplicaOptions {
  return { id: newReplicaId(), leaseMs: 0, progressCoalesceMs: 0 };
}

/** A replica sharing a store with others: leases (`SVC_OPERATION_LEASE_SECS`) and coalesced progress writes. */
export function sharedReplica(leaseMs: number): ReplicaOptions {
  return { id: newReplicaId(), leaseMs, progressCoalesceMs: SHARED_PROGRESS_COALESCE_MS };
}

/**
 * True when `d` runs, not here, and its owner let the lease lapse, at or after `judgedFrom`: a
 * process that reached the store again after an outage (when no owner could renew) judges no lease
 * until a lease later, so an owner that is alive renews first (`leasesJudgedFrom`).
 */
export function lostOperation(d: OpDescriptor, now: number, local: boolean, judgedFrom = -Infinity): boolean {
  return d.state === 'running' && !local && d.lease_until !== undefined && now > Math.max(d.lease_until, judgedFrom);
}

/** When this process judges leases from: a lease after it last reached the store again (-Infinity without one). */
export function leasesJudgedFrom(repo: SessionRepository, replica: ReplicaOptions): number {
  const since = repo.reachableSince?.();
  return since === undefined || !replica.leaseMs ? -Infinity : since + replica.leaseMs;
}

/**
 * Mark an operation whose owner is gone as failed (`operation_lost`). A lapsed lease is a guess
 * (the owner may only have been cut off from the store): an owner that is alive writes its end
 * over this mark (`lostMark`). An operation with writes says they may have landed: its outcome at
 * the vendor is unknown, and running it again blindly could write twice.
 */
export function failLost(d: OpDescriptor, now: number): void {
  d.state = 'failed';
  d.ended = now;
  const stopped = `the server process running \`${d.handle}\` stopped before it ended`;
  d.errors = [
    d.writes
      ? svcError('operation_lost', `${stopped}; its writes may have landed at the vendor`, {
          hint: 'its lease expired while it ran, so whether its writes were made is unknown: check the records it writes at the vendor before running it again',
        })
      : svcError('operation_lost', stopped, { hint: 'its lease expired; run the program again' }),
  ];
}

/** True when `d` ended only because a replica found its lease lapsed (`failLost`), not by its owner. */
export function lostMark(d: OpDescriptor): boolean {
  return d.state === 'failed' && d.errors.length === 1 && d.errors[0]!.code === 'operation_lost';
}

/** Fail every operation of a session whose owner is gone; `local` says which run in this process. */
export function reapLost(
  st: SessionState,
  now: number,
  local: (handle: string) => boolean,
  judgedFrom = -Infinity,
): void {
  for (const d of st.ops.values()) if (lostOperation(d, now, local(d.handle), judgedFrom)) failLost(d, now);
}
