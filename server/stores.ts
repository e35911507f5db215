/**
 * Where a server keeps what outlives a request, chosen by the environment: execute sessions (with
 * their plan tokens, page handles and operation descriptors) in this process, or in Redis
 * (`SVC_MCP_TRANSPORT_KV_URL`) shared by every replica. The Redis client is loaded only when the
 * setting is there; a store that cannot be reached at start-up stops the start with an error
 * naming the setting.
 */
import { svcError, SvcFailure } from '../common/errors.js';
import type { Logger } from '../common/log.js';
import { MemorySessionRepository } from './execute/memory-repository.js';
import { localReplica, sharedReplica, type ReplicaOptions } from './execute/replica.js';
import type { SessionRepository } from './execute/repository.js';
import { DEFAULT_LIMITS, type Limits } from './limits.js';
import type { SharedKv } from './kv.js';

export interface SessionStore {
  sessions: SessionRepository;
  /** This process among the replicas of the store. */
  replica: ReplicaOptions;
  /** `memory` or `redis`, for /v1/health and the start-up banner. */
  kind: 'memory' | 'redis';
  /** Where MCP transport sessions are shared (Redis only). */
  shared?: SharedKv;
  close(): Promise<void>;
}

/** The session store an environment names (`SVC_MCP_TRANSPORT_KV_URL`; unset: this process's memory). */
export async function sessionStoreFromEnv(
  env: Record<string, string | undefined>,
  limits: Pick<Limits, 'maxSessions' | 'maxSessionsPerTenant' | 'maxRunningOpsPerSession' | 'operationLeaseMs'>,
  logger: Logger,
): Promise<SessionStore> {
  const repoLimits = { maxSessions: limits.maxSessions, maxSessionsPerTenant: limits.maxSessionsPerTenant };
  const url = env.SVC_MCP_TRANSPORT_KV_URL?.trim();
  if (!url)
    return {
      sessions: new MemorySessionRepository(repoLimits),
      replica: localReplica(),
      kind: 'memory',
      close: async () => {},
    };
  if (!/^rediss?:\/\//i.test(url))
    throw new SvcFailure([
      svcError('unsupported_store', 'SVC_MCP_TRANSPORT_KV_URL is not a redis:// or rediss:// URL', {
        hint: 'write redis://host:6379/0 (rediss:// for TLS; a password as redis://:password@host:6379/0)',
      }),
    ]);
  if (limits.maxRunningOpsPerSession > SHARED_MAX_RUNNING_PER_SESSION)
    throw new SvcFailure([
      svcError(
        'bad_arguments',
        `SVC_MAX_RUNNING_OPS_PER_SESSION=${limits.maxRunningOpsPerSession}: with SVC_MCP_TRANSPORT_KV_URL a session's descriptor holds at most ${SHARED_MAX_RUNNING_PER_SESSION} running operations`,
        { hint: `set it to ${SHARED_MAX_RUNNING_PER_SESSION} or less (or unset it)` },
      ),
    ]);
  const replica = sharedReplica(limits.operationLeaseMs);
  const { RedisSessionRepository } = await import('./execute/redis-repository.js');
  const repo = await RedisSessionRepository.connect(url, { limits: repoLimits, logger });
  return { sessions: repo, replica, kind: 'redis', shared: repo.kv(), close: () => repo.close() };
}

/**
 * SPEC "Limits": running operations per session in a shared store's descriptor; the default cap
 * (DEFAULT_LIMITS) is also the most a shared descriptor holds.
 */
const SHARED_MAX_RUNNING_PER_SESSION = DEFAULT_LIMITS.maxRunningOpsPerSession;
