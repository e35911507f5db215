/**
 * Resuming an MCP transport session on another replica: decoding the shared state of a session,
 * and telling the SDK's Streamable HTTP transport that the session it serves was initialized
 * elsewhere. The SDK has no public way to do the latter, so it is done here, in one place, on the
 * shape of the pinned SDK (the web-standard transport's `sessionId` and `_initialized`); a test
 * resumes a session over real sockets, so an SDK that changes that shape fails the suite.
 */
import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { McpSessionState } from './session.js';

interface InnerTransport {
  sessionId?: string;
  _initialized?: boolean;
}

/** Mark `transport` as serving the initialized session `sid`; false when the SDK's shape is not the one known. */
export function markInitialized(transport: WebStandardStreamableHTTPServerTransport, sid: string): boolean {
  const inner = transport as unknown as InnerTransport;
  if (typeof inner._initialized !== 'boolean') return false;
  inner.sessionId = sid;
  inner._initialized = true;
  return true;
}

/**
 * What the shared store holds of a session: its state and the id of the transport key that opened
 * it (`''` when no key was provisioned): the session is resumed only for that key.
 */
export interface SharedSession {
  state: McpSessionState;
  key: string;
}

/** The shared store's text of a session. */
export function sharedText(state: McpSessionState, key: string): string {
  return JSON.stringify({ ...state, transport_key: key });
}

/** The shared record of a session (a record without a key id counts as opened with none), or undefined when the text is not one. */
export function parseShared(text: string): SharedSession | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  const state = stateOf(v);
  const key = (v as { transport_key?: unknown }).transport_key;
  return state && { state, key: typeof key === 'string' ? key : '' };
}

function stateOf(v: unknown): McpSessionState | undefined {
  const s = v as Partial<McpSessionState> | null;
  const p = s?.principal;
  if (!p || typeof p.tenant !== 'string' || !['jwt', 'api_key', 'anonymous'].includes(p.method)) return undefined;
  if (typeof s.authenticated !== 'boolean' || !Array.isArray(s.intents)) return undefined;
  const intents = s.intents.filter(
    (x): x is [string, string] => Array.isArray(x) && typeof x[0] === 'string' && typeof x[1] === 'string',
  );
  return {
    principal: { method: p.method, tenant: p.tenant, ...(typeof p.subject === 'string' ? { subject: p.subject } : {}) },
    authenticated: s.authenticated,
    intents,
  };
}
