/**
 * MCP resources: stored run snapshots, read at `svc://execute/{prompt_hash}/{session}/run/pr<64 hex>`
 * or the short form `svc://session/{logical_session_ref}/run/pr<64 hex>`. A run is readable only by
 * the tenant whose session made it (the core checks the snapshot's session and tenant).
 */
import { type ReadResourceResult, type Resource, type ResourceTemplate } from '@modelcontextprotocol/sdk/types.js';
import { SvcFailure } from '../../common/errors.js';
import type { ExecuteService } from '../execute/service.js';
import type { SessionKey } from '../execute/state.js';

/** JSON-RPC code of an unknown resource (MCP). */
export const RESOURCE_NOT_FOUND = -32002;

export const RESOURCE_TEMPLATES: ResourceTemplate[] = [
  {
    uriTemplate: 'svc://session/{logical_session_ref}/run/{run_id}',
    name: 'run',
    description: 'a stored run (every row of every result) of a logical session; run_id is pr + 64 hex',
    mimeType: 'application/json',
  },
  {
    uriTemplate: 'svc://execute/{prompt_hash}/{session}/run/{run_id}',
    name: 'execute-run',
    description: 'a stored run of an execute session',
    mimeType: 'application/json',
  },
];

export interface ResourceScope {
  service: ExecuteService;
  tenant: string;
  /** Logical session refs of this transport session. */
  refs: string[];
  checkAuth: () => void;
}

const SESSION_URI = /^svc:\/\/session\/(l_[A-Za-z0-9]{1,64})\/run\/(pr[0-9a-f]{64})$/;
const EXECUTE_URI = /^svc:\/\/execute\/([0-9a-f]{16})\/([0-9a-f]{16})\/run\/(pr[0-9a-f]{64})$/;

/**
 * A JSON-RPC error for the SDK to answer: it sends `code`, `message` and `data` of what a handler
 * throws (an McpError would put its own "MCP error" prefix into the message a client prefixes again).
 */
export function rpcFailure(code: number, message: string, data?: unknown): Error {
  return Object.assign(new Error(message), { code, ...(data !== undefined ? { data } : {}) });
}

function notFound(uri: string, why: string): Error {
  return rpcFailure(RESOURCE_NOT_FOUND, `Resource not found: ${uri.slice(0, 200)} (${why})`, {
    uri: uri.slice(0, 200),
  });
}

/** resources/read of a stored run. */
export async function readRun(scope: ResourceScope, uri: string): Promise<ReadResourceResult> {
  try {
    scope.checkAuth();
  } catch (e) {
    throw rpcFailure(-32600, (e as SvcFailure).errors[0]!.message + '; call svc_incoming_auth first');
  }
  let key: SessionKey | undefined;
  let runId: string;
  const s = SESSION_URI.exec(uri);
  const x = EXECUTE_URI.exec(uri);
  if (s) {
    runId = s[2]!;
    key = await scope.service.logical
      .find(s[1], scope.tenant)
      .then((f) => f.session)
      .catch(() => undefined);
    if (!key) throw notFound(uri, 'no session of yours is bound to that logical_session_ref');
  } else if (x) {
    key = { prompt_hash: x[1]!, session: x[2]! };
    runId = x[3]!;
  } else throw notFound(uri, 'svc resources are svc://session/{logical_session_ref}/run/pr<64 hex>');
  try {
    const snap = await scope.service.storedRun(key, scope.tenant, runId);
    return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(snap) }] };
  } catch (e) {
    if (e instanceof SvcFailure) throw notFound(uri, 'no such run of a session of yours');
    throw e;
  }
}

/** resources/list: the recent runs of this transport session's logical sessions. */
export async function listRuns(scope: ResourceScope): Promise<Resource[]> {
  const out: Resource[] = [];
  for (const ref of scope.refs) {
    const f = await scope.service.logical.find(ref, scope.tenant).catch(() => undefined);
    for (const r of f?.session.runs.slice(-20).reverse() ?? [])
      out.push({
        uri: `svc://session/${ref}/run/${r.run_id}`,
        name: r.run_id,
        description: `${r.status}, ${r.rows} rows, ${r.at}`,
        mimeType: 'application/json',
      });
  }
  return out;
}
