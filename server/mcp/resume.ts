/**
 * Resuming an MCP transport session on another replica (or on this one after a restart): what
 * the shared store holds of a session, and how a fresh SDK transport is brought to serve it with
 * the SDK's public API only. The new transport is created with a `sessionIdGenerator` that returns
 * the stored id, and the client's own `initialize` (kept in the shared record) is replayed through
 * `handleRequest`, followed by `notifications/initialized`: the transport then holds the session
 * id and validates the client's `Mcp-Session-Id` as on the replica that opened it, and the SDK
 * `Server` knows the client's protocol version, capabilities and name. The client sends nothing
 * again; the replayed answer goes nowhere.
 */
import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import type { McpSessionState } from './session.js';

/** What a client sent in its `initialize` (params), kept so that a resumed session replays it. */
export interface ClientInit {
  protocolVersion: string;
  capabilities: Record<string, unknown>;
  clientInfo: { name: string; version: string } & Record<string, unknown>;
}

/** A session's initialize when the shared record holds none (written by an older svc). */
const UNKNOWN_CLIENT: ClientInit = {
  protocolVersion: LATEST_PROTOCOL_VERSION,
  capabilities: {},
  clientInfo: { name: 'unknown (resumed)', version: '0' },
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The initialize params of `body` (an initialize request the transport accepted), in the shape kept. */
export function clientInitOf(body: unknown): ClientInit {
  const p = isObject(body) && isObject(body.params) ? body.params : {};
  return initOf(p) ?? UNKNOWN_CLIENT;
}

function initOf(v: unknown): ClientInit | undefined {
  if (!isObject(v) || typeof v.protocolVersion !== 'string' || !isObject(v.capabilities)) return undefined;
  const info = v.clientInfo;
  if (!isObject(info) || typeof info.name !== 'string' || typeof info.version !== 'string') return undefined;
  return {
    protocolVersion: v.protocolVersion,
    capabilities: v.capabilities,
    clientInfo: info as ClientInit['clientInfo'],
  };
}

/**
 * Replay `init` on `transport` (created with a `sessionIdGenerator` that returns the resumed id and
 * connected to its SDK server), through `url` (the endpoint's URL): true when the server answered
 * the initialize and the transport now serves the session.
 */
export async function replayInitialize(
  transport: WebStandardStreamableHTTPServerTransport,
  url: string,
  init: ClientInit,
): Promise<boolean> {
  const post = (body: unknown) => {
    const headers: Record<string, string> = {
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
    };
    // After initialize, the transport holds the id and wants it, as from any client.
    if (transport.sessionId !== undefined) headers['mcp-session-id'] = transport.sessionId;
    return transport.handleRequest(new Request(url, { method: 'POST', headers }), { parsedBody: body });
  };
  const answer = await post({ jsonrpc: '2.0', id: 'svc-resume', method: 'initialize', params: init });
  // The answer is an event stream (or JSON) that ends with the initialize result: read it whole.
  const text = await answer.text();
  if (answer.status !== 200 || !text.includes('"result"')) return false;
  const initialized = await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return initialized.status === 202;
}

/**
 * What the shared store holds of a session: its state, the id of the transport key that opened
 * it (`''` when no key was provisioned: the session is resumed only for that key), and the
 * client's initialize, replayed when the session is resumed.
 */
export interface SharedSession {
  state: McpSessionState;
  key: string;
  init: ClientInit;
}

/** The shared store's text of a session. */
export function sharedText(state: McpSessionState, key: string, init: ClientInit): string {
  return JSON.stringify({ ...state, transport_key: key, client_init: init });
}

/**
 * The shared record of a session (a record without a key id counts as opened with none, one
 * without the client's initialize as opened by an unknown client), or undefined when the text is
 * not one.
 */
export function parseShared(text: string): SharedSession | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  const state = stateOf(v);
  const { transport_key: key, client_init: init } = v as { transport_key?: unknown; client_init?: unknown };
  return state && { state, key: typeof key === 'string' ? key : '', init: initOf(init) ?? UNKNOWN_CLIENT };
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
