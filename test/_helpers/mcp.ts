/**
 * Test helpers for the MCP surface: the official SDK `Client` over `StreamableHTTPClientTransport`
 * connected to a real svc server (see server.ts `startStack`), with every notification it receives
 * recorded, and small readers of tool results.
 */
import type { Test } from 'tap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

export interface McpConn {
  client: Client;
  transport: StreamableHTTPClientTransport;
  /** Every notification received, in order (method and params). */
  notifications: Array<{ method: string; params?: Record<string, any> }>;
  /** Call a tool; the result as the SDK client returns it. */
  tool(
    name: string,
    args?: Record<string, unknown>,
    opts?: { onprogress?: (p: unknown) => void; signal?: AbortSignal },
  ): Promise<CallToolResult>;
  close(): Promise<void>;
}

export interface ConnectOptions {
  /** Extra HTTP headers on every request (e.g. a transport key). */
  headers?: Record<string, string>;
}

/** Connects an SDK client to `${base}/mcp`; it closes when `t` ends. */
export async function connectMcp(t: Test, base: string, opts: ConnectOptions = {}): Promise<McpConn> {
  const client = new Client({ name: 'svc-tests', version: '1.0.0' });
  const notifications: McpConn['notifications'] = [];
  client.fallbackNotificationHandler = async (n) => {
    notifications.push({ method: n.method, params: n.params as Record<string, any> | undefined });
  };
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: { headers: opts.headers ?? {} },
  });
  await client.connect(transport);
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await transport.terminateSession().catch(() => undefined);
    await client.close();
  };
  t.teardown(close);
  return {
    client,
    transport,
    notifications,
    tool: async (name, args = {}, o = {}) =>
      (await client.callTool({ name, arguments: args }, undefined, {
        ...(o.onprogress ? { onprogress: o.onprogress } : {}),
        ...(o.signal ? { signal: o.signal } : {}),
        timeout: 60_000,
      })) as CallToolResult,
    close,
  };
}

/** `_meta.svc` of a tool result. */
export function svcMeta(r: CallToolResult): Record<string, any> {
  return ((r._meta as Record<string, any> | undefined)?.svc ?? {}) as Record<string, any>;
}

/** The text of the first text content item. */
export function textOf(r: CallToolResult): string {
  const c = r.content.find((x) => x.type === 'text');
  return c && c.type === 'text' ? c.text : '';
}

/** The error code of an `isError` result. */
export function errorCode(r: CallToolResult): string | undefined {
  return r.isError ? (svcMeta(r).code as string | undefined) : undefined;
}

/** Opens a logical session with svc_context; returns its ref and the result. */
export async function openLogical(
  c: McpConn,
  seeds: Array<{ api: string; entity: string }>,
  intent = 'tests',
): Promise<{ ref: string; result: CallToolResult }> {
  const result = await c.tool('svc_context', { intent, seeds });
  if (result.isError) throw new Error(`svc_context failed: ${textOf(result)}`);
  return { ref: svcMeta(result).logical_session_ref as string, result };
}
