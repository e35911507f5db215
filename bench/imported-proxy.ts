/**
 * The proxy side of the `imported` benchmark: `@ivotoby/openapi-mcp-server` over the same OpenAPI
 * document, started as `peers` starts it (connectProxy), in its default mode (one tool per
 * endpoint: the tools/list result as sent) and its dynamic mode (the `list-api-endpoints` answer,
 * and `get-api-endpoint-schema` for one path). Nothing reaches a vendor: the meta-tools read the
 * document only, so the base URL is a port nobody listens on.
 */
import { type Agent, connectProxy, contentText, tokens, toolsWithoutExtras } from './peers-mcp.js';

const NO_VENDOR = 'http://127.0.0.1:9';

export interface ProxyFigures {
  /** tools/list result tokens (every page), as sent. */
  tools: number;
  toolCount: number;
  /** The same without the proxy's own non-MCP fields (see toolsWithoutExtras). */
  toolsPlain: number;
  /** Dynamic mode: tools/list (the meta-tools) and the list-api-endpoints answer. */
  dynamicTools: number;
  listEndpoints: number;
  /** get-api-endpoint-schema for `schemaPath`, when one was given. */
  schema?: { path: string; tokens: number };
  /** Why a strict client would refuse the tools/list result, if it would. */
  rejected?: string;
  /** Milliseconds from spawn to the tools/list answer, default mode. */
  startMs: number;
}

/**
 * Every page of tools/list: tokens of each result as sent, summed; and the tool count. A result
 * the SDK client rejects (a tool whose inputSchema is not `type: object`) is still counted as
 * sent, and said in `rejected`: a strict host would refuse it.
 */
async function listAll(agent: Agent): Promise<{ tokens: number; plain: number; count: number; rejected?: string }> {
  let cursor: string | undefined;
  let sum = 0;
  let plain = 0;
  let count = 0;
  let rejected: string | undefined;
  do {
    const at = cursor;
    cursor = undefined;
    try {
      cursor = (await agent.client.listTools(at ? { cursor: at } : undefined)).nextCursor;
    } catch (e) {
      const sent = JSON.parse(agent.lastWire()) as { tools?: Array<{ inputSchema?: { type?: unknown } }> };
      if (!Array.isArray(sent.tools)) throw e;
      const bad = sent.tools.filter((t) => t.inputSchema?.type !== 'object').length;
      rejected = `the SDK client rejects the result (${bad} tools whose inputSchema is not type object)`;
    }
    const wire = agent.lastWire();
    sum += tokens(wire);
    plain += toolsWithoutExtras(wire);
    count += (JSON.parse(wire) as { tools: unknown[] }).tools.length;
  } while (cursor);
  return { tokens: sum, plain, count, ...(rejected ? { rejected } : {}) };
}

/** The proxy's figures over `spec`; throws (with the proxy's stderr) when it cannot start. */
export async function proxyFigures(spec: string, schemaPath?: string): Promise<ProxyFigures> {
  const t0 = performance.now();
  const all = await connectProxy(NO_VENDOR, 'all', spec);
  let listed: Awaited<ReturnType<typeof listAll>>;
  let startMs: number;
  try {
    listed = await listAll(all);
    startMs = performance.now() - t0;
  } finally {
    await all.close();
  }
  const dyn = await connectProxy(NO_VENDOR, 'dynamic', spec);
  try {
    const dynamicTools = (await listAll(dyn)).tokens;
    const r = await dyn.call('list-api-endpoints', {});
    if (r.isError) throw new Error(`list-api-endpoints failed: ${contentText(r).slice(0, 300)}`);
    let schema: ProxyFigures['schema'];
    if (schemaPath) {
      const s = await dyn.call('get-api-endpoint-schema', { endpoint: schemaPath });
      if (s.isError) throw new Error(`get-api-endpoint-schema ${schemaPath} failed: ${contentText(s).slice(0, 300)}`);
      schema = { path: schemaPath, tokens: dyn.costs[1]!.read };
    }
    return {
      tools: listed.tokens,
      toolCount: listed.count,
      toolsPlain: listed.plain,
      ...(listed.rejected ? { rejected: listed.rejected } : {}),
      dynamicTools,
      listEndpoints: dyn.costs[0]!.read,
      ...(schema ? { schema } : {}),
      startMs,
    };
  } finally {
    await dyn.close();
  }
}
