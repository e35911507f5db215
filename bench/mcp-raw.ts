/**
 * A raw MCP client session for the benchmarks (plain `fetch`, no SDK client): initialize and the
 * initialized notification, as a Streamable HTTP client sends them; the headers every later
 * request of the session carries.
 */

/** The protocol revision the raw sessions negotiate. */
export const PROTOCOL = '2025-06-18';

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** Open an MCP session on the server at `origin` (its `/mcp`); throws unless it answers as it should. */
export async function rawMcpSession(origin: string): Promise<{ headers: Record<string, string> }> {
  const init = await fetch(`${origin}/mcp`, {
    method: 'POST',
    headers: HEADERS,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'svc-bench', version: '1' } },
    }),
  });
  const sid = init.headers.get('mcp-session-id');
  const text = await init.text();
  if (init.status !== 200 || !sid) throw new Error(`${origin}/mcp answered initialize with ${init.status}: ${text}`);
  const headers = { ...HEADERS, 'mcp-session-id': sid, 'mcp-protocol-version': PROTOCOL };
  const note = await fetch(`${origin}/mcp`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  await note.text();
  if (note.status !== 202) throw new Error(`${origin}/mcp answered notifications/initialized with ${note.status}`);
  return { headers };
}
