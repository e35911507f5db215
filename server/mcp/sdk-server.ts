/**
 * The SDK `Server` of one MCP transport session: the protocol's handlers (tools, resources,
 * prompts), each calling the session (`session.ts`); the transport session's plumbing (keys, cap,
 * sharing) is the endpoint's (`endpoint.ts`).
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { RESOURCE_TEMPLATES, rpcFailure } from './resources.js';
import type { McpDeps, McpSession } from './session.js';
import { INSTRUCTIONS } from './tools.js';

/**
 * The SDK server of one transport session: its handlers call the session. `endStream(id)` ends the
 * HTTP answer of request `id` (the transport's `closeSSEStream`): called when the client cancels a
 * tools/call, which the SDK then leaves unanswered, so that its POST does not stay open.
 */
export function mcpServer(
  session: McpSession,
  version: string,
  logger: McpDeps['logger'],
  endStream: (id: RequestId) => void,
): Server {
  const server = new Server(
    { name: 'svc', version },
    // Logging and prompts are declared so generic clients get answers, not -32601: the SDK answers
    // logging/setLevel itself, and svc has no prompts (its teaching comes from svc_context).
    { capabilities: { tools: {}, resources: {}, logging: {}, prompts: {} }, instructions: INSTRUCTIONS },
  );
  server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: [] }));
  server.setRequestHandler(GetPromptRequestSchema, (req) => {
    throw rpcFailure(ErrorCode.InvalidParams, `Unknown prompt: ${req.params.name.slice(0, 100)} (svc has no prompts)`);
  });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: session.tools() }));
  server.setRequestHandler(CallToolRequestSchema, (req, extra) => {
    if (!session.has(req.params.name))
      throw rpcFailure(ErrorCode.InvalidParams, `Unknown tool: ${req.params.name.slice(0, 100)}`);
    const progressToken = req.params._meta?.progressToken;
    extra.signal.addEventListener('abort', () => endStream(extra.requestId), { once: true });
    return session.call(req.params.name, req.params.arguments, {
      signal: extra.signal,
      ...(progressToken !== undefined ? { progressToken } : {}),
      notify: (method, params) => extra.sendNotification({ method, params }),
      // The HTTP headers of this POST: only a forwarding header named in the credentials file is read.
      ...(extra.requestInfo?.headers ? { headers: extra.requestInfo.headers } : {}),
    });
  });
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: await session.resources() }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: RESOURCE_TEMPLATES }));
  server.setRequestHandler(ReadResourceRequestSchema, (req) => session.readResource(req.params.uri));
  server.onerror = (e) => logger.warn(`MCP: ${e.message}`);
  return server;
}
