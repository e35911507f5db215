/**
 * Outbound credentials in the execute core: one resolver for every run (OAuth2 tokens kept across
 * runs, the credentials file applied), and who a run's vendor calls are made for.
 */
import { AuthResolver } from '../../runtime/auth.js';
import { defaultHttpClient, type ExecuteOptions } from '../../runtime/execute.js';
import type { Caller } from '../../runtime/credentials/types.js';
import type { Who } from './request.js';
import type { SessionState } from './state.js';

/** The runtime options with the resolver runs share (the given one, else one over the environment). */
export function withAuth(runtime: ExecuteOptions): ExecuteOptions & { auth: AuthResolver } {
  return { ...runtime, auth: runtime.auth ?? new AuthResolver(runtime.env ?? process.env, defaultHttpClient()) };
}

/** The session's tenant, the sender's subject and the credentials it forwards. */
export function callerOf(auth: AuthResolver, s: SessionState, who: Who | undefined): Caller {
  // Only the headers the credentials file names for forwarding are read; nothing else is kept.
  const forwarded = who?.header ? auth.forwarded(who.header) : undefined;
  return {
    tenant: s.tenant,
    ...(who?.subject !== undefined ? { subject: who.subject } : {}),
    ...(forwarded ? { forwarded } : {}),
  };
}
