/**
 * What a server process (a replica) needs to share background operations with others through a
 * shared session store: its id, the lease it holds on the operations it runs, and how often it
 * writes their progress. With the in-process store there is one replica and no lease (every
 * running operation is local); with Redis an operation whose owner stopped renewing its lease is
 * failed by whichever replica finds it (`operation_lost`), so nothing stays running forever.
 */
import { randomBytes } from 'node:crypto';
import { svcError } from '../../common/errors.js';
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

/** True when `d` runs, not here, and its owner let the lease lapse. */
export function lostOperation(d: OpDescriptor, now: number, local: boolean): boolean {
  return d.state === 'running' && !local && d.lease_until !== undefined && now > d.lease_until;
}

/** Mark an operation whose owner is gone as failed (`operation_lost`). */
export function failLost(d: OpDescriptor, now: number): void {
  d.state = 'failed';
  d.ended = now;
  d.errors = [
    svcError('operation_lost', `the server process running \`${d.handle}\` stopped before it ended`, {
      hint: 'its lease expired; whatever it wrote to the vendor before stopping stays written. Run the program again',
    }),
  ];
}

/** Fail every operation of a session whose owner is gone; `local` says which run in this process. */
export function reapLost(st: SessionState, now: number, local: (handle: string) => boolean): void {
  for (const d of st.ops.values()) if (lostOperation(d, now, local(d.handle))) failLost(d, now);
}
