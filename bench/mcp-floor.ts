/**
 * The floor under the `mcp` benchmark's "MCP − HTTP" figure: a server with none of svc's code that
 * answers the two answers svc gave in the benchmark's check, fixed:
 *   - `POST /mcp`: the official SDK `Server` with its Web-standard Streamable HTTP transport,
 *     bridged by svc's own `server/mcp/web-adapter.ts` as svc's `/mcp` is (stateful, one session),
 *     whose one tool answers svc's `tools/call` result (the SDK validates and frames it);
 *   - `POST /plain`: svc's HTTP answer, the same JSON bytes, from plain `node:http`.
 * Both read the body as svc does (`readBody`). The difference of their arrival-to-answer times is
 * what the SDK transport costs by itself over a plain answer of the same rows, which svc's MCP read
 * pays on top of what its HTTP read pays. An indication, not a bound: this process idles between
 * calls while svc's serves the other sides too, so it runs colder than svc.
 *
 * Runs in its own process: `serve-child.js mcp-floor <answers.json>` (`FloorAnswers`).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { CallToolRequestSchema, isInitializeRequest, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { readBody } from '../server/http/body.js';
import { serve } from '../server/mcp/web-adapter.js';
import { rawMcpSession } from './mcp-raw.js';

/** The answers the floor server gives: svc's `tools/call` result and svc's HTTP answer body. */
export interface FloorAnswers {
  mcp: CallToolResult;
  http: string;
}

/** Start the floor server on 127.0.0.1 and a free port, answering what `file` holds. */
export async function startMcpFloor(file: string): Promise<{ url: string; close(): Promise<void> }> {
  const answers = JSON.parse(readFileSync(file, 'utf8')) as FloorAnswers;
  const plain = Buffer.from(answers.http);
  const transports = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const open = async () => {
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (sid) => void transports.set(sid, transport),
    });
    const server = new Server({ name: 'svc-floor', version: '1.0.0' }, { capabilities: { tools: {} } });
    // A shallow copy per call, as a handler returns a new result each time.
    server.setRequestHandler(CallToolRequestSchema, () => ({ ...answers.mcp }));
    await server.connect(transport);
    return transport;
  };
  const http = createServer((req, res) => {
    void (async () => {
      const text = req.method === 'POST' ? await readBody(req) : '';
      if (req.url === '/plain') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': plain.length });
        return res.end(plain);
      }
      const body: unknown = text ? JSON.parse(text) : undefined;
      const sid = req.headers['mcp-session-id'];
      const known = typeof sid === 'string' ? transports.get(sid) : undefined;
      if (!known && !isInitializeRequest(body)) return void res.writeHead(404).end();
      await serve(known ?? (await open()), req, res, body);
    })().catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
    close: async () => {
      for (const t of transports.values()) await t.close();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** One call: the ids of the rows it got. */
type Call = () => Promise<Array<string | number>>;

/** The ids of an answer's rows (none when `rows` is not a list). */
export const rowIds = (rows: unknown): Array<string | number> =>
  Array.isArray(rows) ? rows.map((r: { id: string | number }) => r.id) : [];

/**
 * The two floor calls against a floor server at `url`: the `tools/call` (plain `fetch`, on an MCP
 * session opened here) and the HTTP read (`program` as text/plain), answered as the `mcp`
 * benchmark's plain-fetch and HTTP sides are.
 */
export async function floorCalls(url: string, program: string): Promise<{ mcp: Call; http: Call }> {
  const { headers } = await rawMcpSession(url);
  let id = 0;
  return {
    mcp: async () => {
      const res = await fetch(`${url}/mcp`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name: 'svc' } }),
      });
      const m = JSON.parse(await res.text()) as { result?: CallToolResult };
      return rowIds((m.result?.structuredContent as { rows?: unknown } | undefined)?.rows);
    },
    http: async () => {
      const res = await fetch(`${url}/plain`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain', accept: 'application/json' },
        body: program,
      });
      return rowIds(((await res.json()) as { rows?: unknown }).rows);
    },
  };
}
