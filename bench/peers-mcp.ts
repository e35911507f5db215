/**
 * The MCP side of the `peers` benchmark: one official SDK `Client` per way (svc over Streamable
 * HTTP; `@ivotoby/openapi-mcp-server` as a child process over stdio), with every message the
 * server sends recorded as parsed from the wire (before the SDK's schemas re-order keys), and an
 * `Agent` that makes tool calls and tallies, per call, what an agent writes (tool name + arguments
 * JSON) and reads (the result's content) in o200k tokens (`gpt-tokenizer`, as `tokens`).
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { packageRoot } from '../cli/package-root.js';

/** The cost of one call an agent makes. */
export interface CallCost {
  /** The tool called. */
  tool: string;
  /** Tokens the agent writes: the tool name plus the arguments as JSON. */
  written: number;
  /** Tokens the agent reads: the result's text content (other content items as JSON). */
  read: number;
  /** `read` if a result that is JSON text were compact JSON (what a proxy printing compact JSON would cost). */
  readCompact: number;
  isError: boolean;
}

/** Sum of some calls. */
export interface Cost {
  written: number;
  read: number;
  total: number;
  /** `total` with JSON results read as compact JSON. */
  compact: number;
  calls: number;
}

export function sumCosts(calls: CallCost[]): Cost {
  const add = (f: (c: CallCost) => number) => calls.reduce((a, c) => a + f(c), 0);
  const written = add((c) => c.written);
  const read = add((c) => c.read);
  return { written, read, total: written + read, compact: written + add((c) => c.readCompact), calls: calls.length };
}

/**
 * Tokens of a one-tool-per-endpoint tools/list result without the proxy's own fields (`tags`,
 * `httpMethod`, `resourceName`, `originalPath`, `x-original-path`, and `x-parameter-location` /
 * `x-content-type` in the input schemas), which MCP does not define and a host passes on anyway.
 */
export function toolsWithoutExtras(toolsWire: string): number {
  const result = JSON.parse(toolsWire) as { tools: Array<Record<string, unknown>> };
  for (const t of result.tools) {
    for (const k of ['tags', 'httpMethod', 'resourceName', 'originalPath', 'x-original-path']) delete t[k];
    const schema = t.inputSchema as { properties?: Record<string, Record<string, unknown>> } & Record<string, unknown>;
    delete schema['x-content-type'];
    for (const prop of Object.values(schema.properties ?? {})) delete prop['x-parameter-location'];
  }
  return countTokens(JSON.stringify(result));
}

/** An MCP connection whose tool calls are counted. */
export class Agent {
  /** Every counted call, in order (a task takes the slice after its `mark()`). */
  readonly costs: CallCost[] = [];
  private constructor(
    readonly client: Client,
    private readonly transport: Transport,
    /** Server-to-client messages with a `result`, as parsed from the wire, newest last. */
    private readonly results: unknown[],
  ) {}

  static async connect(transport: Transport, name: string): Promise<Agent> {
    const results: unknown[] = [];
    record(transport, results);
    const client = new Client({ name, version: '1.0.0' });
    await client.connect(transport);
    return new Agent(client, transport, results);
  }

  /** The JSON text of the newest result as the server sent it. */
  lastWire(): string {
    const r = this.results[this.results.length - 1];
    if (r === undefined) throw new Error('no result was recorded');
    return JSON.stringify(r);
  }

  /** The initialize result as sent. */
  initializeWire(): { instructions?: string } {
    return this.results[0] as { instructions?: string };
  }

  /** Index of the next call: `costs.slice(mark)` are the calls made after it. */
  mark(): number {
    return this.costs.length;
  }

  /** Call a tool and count it. A tool error is returned (and counted), not thrown. */
  async call(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
    const r = (await this.client.callTool({ name, arguments: args })) as CallToolResult;
    // The content as sent (the SDK's parse keeps text as is; the wire copy keeps the key order of other items).
    const text = contentText(JSON.parse(this.lastWire()) as CallToolResult);
    const read = countTokens(text);
    this.costs.push({
      tool: name,
      written: countTokens(name) + countTokens(JSON.stringify(args)),
      read,
      readCompact: compactTokens(text) ?? read,
      isError: r.isError === true,
    });
    return r;
  }

  async close(): Promise<void> {
    if (this.transport instanceof StreamableHTTPClientTransport)
      await this.transport.terminateSession().catch(() => undefined);
    await this.client.close().catch(() => undefined);
  }
}

/**
 * Keep the `result` of every message the transport receives, as parsed from the wire: wraps
 * `onmessage` when the client starts the transport (the client sets it just before).
 */
function record(transport: Transport, sink: unknown[]): void {
  const start = transport.start.bind(transport);
  transport.start = async () => {
    const deliver = transport.onmessage;
    transport.onmessage = (m: JSONRPCMessage) => {
      if ('result' in m) sink.push(m.result);
      deliver?.(m);
    };
    return start();
  };
}

/** What an agent reads of a tool result: text items as they are, any other item as JSON. */
export function contentText(r: CallToolResult): string {
  return r.content.map((c) => (c.type === 'text' ? c.text : JSON.stringify(c))).join('\n');
}

export const tokens = (s: string): number => countTokens(s);

/** Tokens of JSON text re-printed compact; `undefined` when the text is not JSON. */
function compactTokens(text: string): number | undefined {
  try {
    return countTokens(JSON.stringify(JSON.parse(text)));
  } catch {
    return undefined;
  }
}

/** Connect to svc's MCP endpoint. */
export function connectSvc(url: string): Promise<Agent> {
  return Agent.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)), 'svc-bench-peers');
}

export type ProxyMode = 'all' | 'dynamic';

/** The OpenAPI document the proxy serves. */
export const OPENAPI_SPEC = join(packageRoot(), 'fixtures', 'openapi', 'demo-vendor.yaml');

/**
 * Start `@ivotoby/openapi-mcp-server` (its bin, as a child process of the SDK's stdio transport)
 * over the vendor, in mode `all` (one tool per endpoint, the default) or `dynamic` (meta-tools),
 * and connect to it; `spec` is the OpenAPI document it serves (default the demo vendor's).
 */
export async function connectProxy(vendorUrl: string, mode: ProxyMode, spec = OPENAPI_SPEC): Promise<Agent> {
  const require = createRequire(import.meta.url);
  const pkg = require.resolve('@ivotoby/openapi-mcp-server/package.json');
  const bin = join(pkg, '..', 'bin', 'mcp-server.js');
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, '--api-base-url', vendorUrl, '--openapi-spec', spec, '--tools', mode, '--verbose', 'false'],
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  try {
    return await Agent.connect(transport, `svc-bench-peers-${mode}`);
  } catch (e) {
    throw new Error(`the proxy (${mode}) did not start: ${(e as Error).message}\n${stderr}`);
  }
}

/** A tool of the one-tool-per-endpoint proxy, found by its HTTP method and OpenAPI path. */
export function proxyTool(toolsWire: string, method: string, path: string): string {
  const tools = (
    JSON.parse(toolsWire) as { tools: Array<{ name: string; httpMethod?: string; originalPath?: string }> }
  ).tools;
  const t = tools.find((x) => x.httpMethod === method && x.originalPath === path);
  if (!t) throw new Error(`the proxy lists no tool for ${method} ${path}`);
  return t.name;
}
