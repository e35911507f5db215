/**
 * The `hotpath` benchmark's MCP target: the same clean 25-row read as the HTTP targets, as an
 * agent sends it over MCP: a `tools/call` of `svc` (JSON-RPC over Streamable HTTP, each call its
 * own id) on a transport session opened here, in a logical session whose one seed is the entity
 * the HTTP targets read. Sent by the same client code as every other target (an undici Pool), so
 * its figures (added p50, CPU per request, throughput) stand next to the HTTP read's.
 */
import type { Child } from './processes.js';
import type { Target } from './hotpath.bench.js';

const PROTOCOL = '2025-06-18';
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** The rows of an MCP answer (`result.structuredContent.rows`), or -1. */
export function mcpRows(text: string): number {
  const m = JSON.parse(text) as { result?: { isError?: boolean; structuredContent?: { rows?: unknown[] } } };
  return m.result && !m.result.isError ? (m.result.structuredContent?.rows?.length ?? -1) : -1;
}

/**
 * Open an MCP session on `svc` whose logical session is seeded with `seed` (`api`, `entity`) and
 * return the target reading it with `program` (`e1` there: the seed's symbol). Throws unless the
 * read answers `rows` rows after one vendor request to `vendorTarget`, the HTTP targets' request.
 */
export async function mcpTarget(
  name: string,
  vendor: Child,
  svc: Child,
  seed: { api: string; entity: string },
  vendorTarget: string,
  rows: number,
): Promise<Target> {
  let id = 0;
  const post = async (headers: Record<string, string>, message: Record<string, unknown>) => {
    const res = await fetch(`${svc.url}/mcp`, { method: 'POST', headers, body: JSON.stringify(message) });
    const text = await res.text();
    if (res.status !== 200 && res.status !== 202) throw new Error(`${name}: /mcp answered ${res.status}: ${text}`);
    return { res, text };
  };
  const init = await post(HEADERS, {
    jsonrpc: '2.0',
    id: ++id,
    method: 'initialize',
    params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'svc-bench', version: '1' } },
  });
  const sid = init.res.headers.get('mcp-session-id');
  if (!sid) throw new Error(`${name}: initialize gave no Mcp-Session-Id`);
  const headers = { ...HEADERS, 'mcp-session-id': sid, 'mcp-protocol-version': PROTOCOL };
  await post(headers, { jsonrpc: '2.0', method: 'notifications/initialized' });
  const ctx = await post(headers, {
    jsonrpc: '2.0',
    id: ++id,
    method: 'tools/call',
    params: { name: 'svc_context', arguments: { intent: 'hotpath benchmark', seeds: [seed] } },
  });
  const ref = (JSON.parse(ctx.text) as { result?: { _meta?: { svc?: { logical_session_ref?: string } } } }).result
    ?._meta?.svc?.logical_session_ref;
  if (!ref) throw new Error(`${name}: svc_context gave no logical_session_ref: ${ctx.text.slice(0, 300)}`);
  const args = { logical_session_ref: ref, program: 'e1' };
  // A new id per call: a client never reuses the id of a request in flight.
  const body = () =>
    JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name: 'svc', arguments: args } });
  const target: Target = {
    name,
    pid: svc.pid,
    origin: svc.url,
    method: 'POST',
    path: '/mcp',
    headers,
    body,
  };
  const before = await vendor.usage();
  const got = mcpRows((await post(headers, JSON.parse(body()) as Record<string, unknown>)).text);
  const after = await vendor.usage();
  const sent = after.lastTargets[after.lastTargets.length - 1];
  if (got !== rows) throw new Error(`${name} answered ${got} rows, want ${rows}`);
  if (after.requests - before.requests !== 1 || sent !== vendorTarget)
    throw new Error(`${name}: ${after.requests - before.requests} vendor requests (${sent}), want 1 (${vendorTarget})`);
  return target;
}
