/**
 * The server's limits in one place: defaults, the environment variables that change them, and
 * their parsing (a bad value stops the start-up with a clear error). docs/http.md "Limits" lists
 * each with its default.
 */
import { svcError, SvcFailure, type SvcError } from '../common/errors.js';
import { DEFAULT_MAX_VENDOR_CALLS } from '../compiler/limits.js';
import { DEFAULT_HELD_MAX_BYTES } from '../runtime/artifacts/held.js';

export interface Limits {
  /** Sessions held in all; at the cap the least recently used idle one goes (a last resort). */
  maxSessions: number;
  /** Sessions one tenant holds; at the cap its own least recently used idle one goes. */
  maxSessionsPerTenant: number;
  /** Background operations running at once in one session. */
  maxRunningOpsPerSession: number;
  /** Background operations running at once in the whole server. */
  maxRunningOps: number;
  /** Overall deadline of a background (wait=false) run. */
  backgroundDeadlineMs: number;
  /** Vendor calls a program may make without review (fan-out and paging count). */
  maxVendorCalls: number;
  /** On SIGINT/SIGTERM: how long running requests and operations get before they are cancelled. */
  shutdownGraceMs: number;
  /** MCP transport sessions held at once. */
  maxMcpSessions: number;
  /** An MCP transport session unused this long is closed. */
  mcpSessionIdleMs: number;
  /** An MCP transport session that has sent no request since initialize is closed once unused this long. */
  mcpFreshIdleMs: number;
  /** New MCP transport sessions one client address may open per minute (0: no limit). */
  mcpNewSessionsPerMin: number;
  /** With a shared session store: the lease a replica holds on each operation it runs. */
  operationLeaseMs: number;
  /** Rows the session graph holds in this process, all sessions together (docs/runtime.md "The session graph"). */
  graphHotMaxEntities: number;
  /** How old a row a session saw in an earlier run may be to answer a get by id (0: rows of the same run only). */
  graphMaxAgeMs: number;
  /** Bytes of background-run snapshots held in memory while the artifact store fails (docs/operations.md). */
  artifactsPendingBytes: number;
}

export const DEFAULT_LIMITS: Limits = {
  maxSessions: 10_000,
  maxSessionsPerTenant: 1_000,
  maxRunningOpsPerSession: 16,
  maxRunningOps: 64,
  backgroundDeadlineMs: 30 * 60 * 1000,
  maxVendorCalls: DEFAULT_MAX_VENDOR_CALLS,
  shutdownGraceMs: 10_000,
  maxMcpSessions: 1_000,
  mcpSessionIdleMs: 60 * 60 * 1000,
  mcpFreshIdleMs: 30 * 1000,
  mcpNewSessionsPerMin: 120,
  operationLeaseMs: 15_000,
  graphHotMaxEntities: 2048,
  graphMaxAgeMs: 0,
  artifactsPendingBytes: DEFAULT_HELD_MAX_BYTES,
};

/** Each limit's environment variable and the unit its value is written in. */
export const LIMIT_ENV: Record<keyof Limits, { name: string; unit: 'count' | 'secs'; zero?: true }> = {
  maxSessions: { name: 'SVC_MAX_SESSIONS', unit: 'count' },
  maxSessionsPerTenant: { name: 'SVC_MAX_SESSIONS_PER_TENANT', unit: 'count' },
  maxRunningOpsPerSession: { name: 'SVC_MAX_RUNNING_OPS_PER_SESSION', unit: 'count' },
  maxRunningOps: { name: 'SVC_MAX_RUNNING_OPS', unit: 'count' },
  backgroundDeadlineMs: { name: 'SVC_BACKGROUND_DEADLINE_SECS', unit: 'secs' },
  maxVendorCalls: { name: 'SVC_MAX_VENDOR_CALLS', unit: 'count' },
  shutdownGraceMs: { name: 'SVC_SHUTDOWN_GRACE_SECS', unit: 'secs' },
  maxMcpSessions: { name: 'SVC_MCP_MAX_SESSIONS', unit: 'count' },
  mcpSessionIdleMs: { name: 'SVC_MCP_SESSION_IDLE_SECS', unit: 'secs' },
  mcpFreshIdleMs: { name: 'SVC_MCP_FRESH_IDLE_SECS', unit: 'secs' },
  mcpNewSessionsPerMin: { name: 'SVC_MCP_NEW_SESSIONS_PER_MIN', unit: 'count', zero: true },
  operationLeaseMs: { name: 'SVC_OPERATION_LEASE_SECS', unit: 'secs' },
  graphHotMaxEntities: { name: 'SVC_GRAPH_HOT_MAX_ENTITIES', unit: 'count' },
  graphMaxAgeMs: { name: 'SVC_GRAPH_MAX_AGE_SECS', unit: 'secs', zero: true },
  artifactsPendingBytes: { name: 'SVC_RUN_ARTIFACTS_PENDING_BYTES', unit: 'count' },
};

/** The limits an environment sets (unset or empty = the default); every bad value is reported at once. */
export function limitsFromEnv(env: Record<string, string | undefined>): Limits {
  const out: Limits = { ...DEFAULT_LIMITS };
  const problems: SvcError[] = [];
  for (const [k, { name, unit, zero }] of Object.entries(LIMIT_ENV) as Array<
    [keyof Limits, (typeof LIMIT_ENV)[keyof Limits]]
  >) {
    const raw = env[name]?.trim();
    if (!raw) continue;
    const n = /^\d{1,9}$/.test(raw) ? Number(raw) : NaN;
    const fallback = unit === 'secs' ? DEFAULT_LIMITS[k] / 1000 : DEFAULT_LIMITS[k];
    if (!(n >= (zero ? 0 : 1))) {
      problems.push(
        svcError(
          'bad_arguments',
          `${name}=${JSON.stringify(raw.slice(0, 20))} is not a ${zero ? '' : 'positive '}whole number${unit === 'secs' ? ' of seconds' : ''}`,
          { hint: `unset it for the default ${fallback}, or write for example ${fallback * 2 || 60}` },
        ),
      );
      continue;
    }
    out[k] = unit === 'secs' ? n * 1000 : n;
  }
  if (problems.length) throw new SvcFailure(problems);
  return out;
}
