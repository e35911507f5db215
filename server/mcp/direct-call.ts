/**
 * `tools/call` answered by svc itself, beside the SDK transport: an agent's every read is a
 * tools/call, and the SDK's Streamable HTTP transport costs about 0.3 ms of CPU on each message
 * (its schema checks, a Web `Response` and an event stream per POST), about as much as svc's whole
 * clean read. A POST that is exactly one well-formed tools/call of a known tool on an open
 * transport session is run here and answered as the transport answers it through `web-adapter.ts`:
 *
 * - the tool's result as one JSON-RPC response in `application/json` (a POST's stream that is only
 *   its answer leaves as that JSON there too), with the transport's `cache-control` and
 *   `mcp-session-id` headers;
 * - a call that notifies (svc_run's progress) switches to an event stream at its first
 *   notification: the transport's headers, each notification as an `event: message`, the answer
 *   last;
 * - `notifications/cancelled` for its id (which the endpoint sees before the transport) aborts its
 *   signal; a cancelled call sends no answer and no more notifications (as the SDK's `Protocol`),
 *   and its HTTP answer ends (an empty event stream, unless one had begun).
 *
 * Anything else, and anything the transport would refuse or answer with an error (a batch, other
 * members, a bad id or params, an unknown tool, `Accept` without both types, a `Content-Type`
 * other than `application/json`, an unsupported `Mcp-Protocol-Version`), goes to the transport, so
 * every refusal stays the SDK's own. A client's disconnect does not cancel the call (nor does it
 * through the transport).
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { ErrorCode, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import type { McpSession } from './session.js';
import { RequestHeaders } from './web-adapter.js';

type RequestId = string | number;

/**
 * A transport session's tools/call requests run here and not yet answered: each one's abort, by
 * id (a newer call with an id in use comes first). An array, not a Map: calls come and go all
 * the time, and a Map under such churn costs the collector (common/slot-set.ts says why).
 */
export class DirectCalls {
  private readonly held: Array<{ id: RequestId; abort: AbortController }> = [];

  set(id: RequestId, abort: AbortController): void {
    this.held.push({ id, abort });
  }

  get(id: RequestId): AbortController | undefined {
    for (let i = this.held.length - 1; i >= 0; i--) if (this.held[i]!.id === id) return this.held[i]!.abort;
    return undefined;
  }

  /** Forget the call `id` answered with `abort`. */
  delete(id: RequestId, abort: AbortController): void {
    const i = this.held.findIndex((c) => c.id === id && c.abort === abort);
    if (i >= 0) this.held.splice(i, 1);
  }

  values(): AbortController[] {
    return this.held.map((c) => c.abort);
  }
}

/** A tools/call this path runs. */
export interface DirectCall {
  id: RequestId;
  name: string;
  arguments: Record<string, unknown> | undefined;
  progressToken: string | number | undefined;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A JSON-RPC id or progress token as the SDK's schemas take it: a string or a safe integer. */
const isId = (v: unknown): v is RequestId => typeof v === 'string' || Number.isSafeInteger(v);

/** True when every key of `o` is one of `allowed`. */
function onlyKeys(o: Record<string, unknown>, allowed: readonly string[]): boolean {
  for (const k in o) if (!allowed.includes(k)) return false;
  return true;
}

const MESSAGE_KEYS = ['jsonrpc', 'id', 'method', 'params'];
const PARAMS_KEYS = ['name', 'arguments', '_meta'];
const META_KEYS = ['progressToken'];

/**
 * The tools/call `body` is, when it is one that the transport would hand to svc's handler as it
 * is, headers included, and `session` has the tool; undefined otherwise (the transport takes it).
 */
export function directCallOf(body: unknown, req: IncomingMessage, session: McpSession): DirectCall | undefined {
  if (!isObject(body) || body.method !== 'tools/call' || body.jsonrpc !== '2.0' || !isId(body.id)) return undefined;
  const params = body.params;
  if (!onlyKeys(body, MESSAGE_KEYS) || !isObject(params) || !onlyKeys(params, PARAMS_KEYS)) return undefined;
  const { name, arguments: args, _meta: meta } = params;
  if (typeof name !== 'string' || (args !== undefined && !isObject(args))) return undefined;
  if (meta !== undefined && (!isObject(meta) || !onlyKeys(meta, META_KEYS))) return undefined;
  const progressToken = meta?.progressToken;
  if (progressToken !== undefined && !isId(progressToken)) return undefined;
  const { accept, 'content-type': type, 'mcp-protocol-version': version } = req.headers;
  if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) return undefined;
  if (type !== 'application/json') return undefined;
  if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version as string)) return undefined;
  if (!session.has(name)) return undefined;
  return { id: body.id, name, arguments: args, progressToken };
}

/** The ids a `notifications/cancelled` in `body` (one message or a batch) names. */
export function cancelledIds(body: unknown): RequestId[] {
  const ids: RequestId[] = [];
  for (const m of Array.isArray(body) ? body : [body])
    if (isObject(m) && m.method === 'notifications/cancelled' && isObject(m.params) && isId(m.params.requestId))
      ids.push(m.params.requestId);
  return ids;
}

/** The transport's event-stream headers for a POST. */
const streamHead = (sid: string): OutgoingHttpHeaders => ({
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
  'mcp-session-id': sid,
});

const event = (message: unknown) => `event: message\ndata: ${JSON.stringify(message)}\n\n`;

/** Run `call` on `session` and answer it on `res` (see the module comment); `calls` holds its abort meanwhile. */
export async function runDirect(
  call: DirectCall,
  session: McpSession,
  sid: string,
  calls: DirectCalls,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const abort = new AbortController();
  calls.set(call.id, abort);
  let streaming = false;
  const write = (message: unknown) => {
    // Nothing after the answer (a write after `end` would be an error event on `res`).
    if (res.destroyed || res.writableEnded) return;
    if (!streaming) res.writeHead(200, streamHead(sid));
    streaming = true;
    res.write(event(message));
  };
  let answer: Record<string, unknown>;
  try {
    const result = await session.call(call.name, call.arguments, {
      signal: abort.signal,
      ...(call.progressToken !== undefined ? { progressToken: call.progressToken } : {}),
      notify: async (method, params) => {
        if (!abort.signal.aborted) write({ method, params, jsonrpc: '2.0' });
      },
      headers: Object.fromEntries(new RequestHeaders(req.rawHeaders).entries()),
    });
    answer = { result, jsonrpc: '2.0', id: call.id };
  } catch (e) {
    // session.call turns every failure into a result; this is what the SDK answers a handler's throw with.
    const err = e as { code?: unknown; message?: string; data?: unknown };
    const code = Number.isSafeInteger(err?.code) ? (err.code as number) : ErrorCode.InternalError;
    const error = {
      code,
      message: err?.message ?? 'Internal error',
      ...(err?.data !== undefined ? { data: err.data } : {}),
    };
    answer = { jsonrpc: '2.0', id: call.id, error };
  } finally {
    calls.delete(call.id, abort);
  }
  if (res.destroyed) return;
  if (abort.signal.aborted) {
    if (!streaming) res.writeHead(200, streamHead(sid));
    return void res.end();
  }
  if (streaming) return void res.end(event(answer));
  const json = JSON.stringify(answer);
  res.writeHead(200, {
    'cache-control': 'no-cache, no-transform',
    'mcp-session-id': sid,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(json),
  });
  res.end(json);
}
