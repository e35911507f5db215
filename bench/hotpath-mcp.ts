/**
 * The `hotpath` benchmark's MCP target: the same clean 25-row read as the HTTP targets, as an
 * agent sends it over MCP: a `tools/call` of `svc` (JSON-RPC over Streamable HTTP, each call its
 * own id) on a transport session opened here, in a logical session whose one seed is the entity
 * the HTTP targets read. Sent by the same client code as every other target (an undici Pool), so
 * its figures (added p50, CPU per request, throughput) stand next to the HTTP read's.
 */
import type { Target } from './hotpath.bench.js';
import { rawMcpSession } from './mcp-raw.js';
import type { Child } from './processes.js';

/** The rows of an MCP answer (`result.structuredContent.rows`), or -1. */
export function mcpRows(text: string): number {
  const m = JSON.parse(text) as { result?: { isError?: boolean; structuredContent?: { rows?: unknown[] } } };
  return m.result && !m.result.isError ? (m.result.structuredContent?.rows?.length ?? -1) : -1;
}

/**
 * Open an MCP session on `svc` whose logical session is seeded with `seed` (`api`, `entity`) and
 * return the target reading it with the program `e1` (the seed's symbol there). Throws unless the
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
  const { headers } = await rawMcpSession(svc.url);
  let id = 0;
  const post = async (body: string) => {
    const res = await fetch(`${svc.url}/mcp`, { method: 'POST', headers, body });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${name}: /mcp answered ${res.status}: ${text}`);
    return text;
  };
  const ctx = await post(
    JSON.stringify({
      jsonrpc: '2.0',
      id: ++id,
      method: 'tools/call',
      params: { name: 'svc_context', arguments: { intent: 'hotpath benchmark', seeds: [seed] } },
    }),
  );
  const ref = (JSON.parse(ctx) as { result?: { _meta?: { svc?: { logical_session_ref?: string } } } }).result?._meta
    ?.svc?.logical_session_ref;
  if (!ref) throw new Error(`${name}: svc_context gave no logical_session_ref: ${ctx.slice(0, 300)}`);
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
  const got = mcpRows(await post(body()));
  const after = await vendor.usage();
  const sent = after.lastTargets[after.lastTargets.length - 1];
  if (got !== rows) throw new Error(`${name} answered ${got} rows, want ${rows}`);
  if (after.requests - before.requests !== 1 || sent !== vendorTarget)
    throw new Error(`${name}: ${after.requests - before.requests} vendor requests (${sent}), want 1 (${vendorTarget})`);
  return target;
}
