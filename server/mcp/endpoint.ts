/**
 * The `/mcp` endpoint on the svc HTTP server: the official SDK's Streamable HTTP transport,
 * stateful (one transport, one SDK `Server` and one `McpSession` per `Mcp-Session-Id`). Before a
 * request reaches a transport it passes the DNS-rebinding check (Host and Origin), the transport
 * key check (when keys are provisioned), the body limit and JSON decoding; transport sessions are
 * capped and closed when idle. Requests get JSON-RPC errors where the protocol says so (unknown
 * session 404, no session 400, malformed JSON 400), never a crash. The transport is the SDK's
 * Web-standard one, driven through a lean Node bridge (`web-adapter.ts`) rather than the SDK's
 * Node wrapper and its general-purpose adapter; a POST that is one well-formed tools/call of a
 * known tool on an open session is run and answered by `direct-call.ts` instead, as the transport
 * would answer it, without the transport's cost per message.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  isInitializeRequest,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { SvcFailure } from '../../common/errors.js';
import { MAX_BODY_BYTES, MAX_JSON_DEPTH, nestedDeeperThan, readBody } from '../http/body.js';
import type { McpConfig } from './config.js';
import { RESOURCE_TEMPLATES, rpcFailure } from './resources.js';
import { McpSession, type McpDeps } from './session.js';
import { INSTRUCTIONS } from './tools.js';
import type { SharedKv } from '../kv.js';
import { markInitialized, parseState } from './resume.js';
import { serve } from './web-adapter.js';
import { cancelledIds, directCallOf, DirectCalls, runDirect } from './direct-call.js';

export interface McpEndpointOptions {
  version: string;
  /** Transport sessions held at once (`SVC_MCP_MAX_SESSIONS`). */
  maxSessions: number;
  /** A transport session unused this long is closed (`SVC_MCP_SESSION_IDLE_SECS`). */
  idleMs: number;
  now?: () => number;
  /** Where transport sessions are shared with other replicas (`SVC_MCP_TRANSPORT_KV_URL`); unset: not shared. */
  shared?: SharedKv;
}

interface Entry {
  transport: WebStandardStreamableHTTPServerTransport;
  server: Server;
  session: McpSession;
  /** Its tools/calls run by `direct-call.ts`, not through the transport, until answered. */
  calls: DirectCalls;
  lastUsed: number;
  /** When its state was last written to the shared store (its expiry restarts then). */
  sharedAt: number;
}

export class McpEndpoint {
  private readonly entries = new Map<string, Entry>();
  private readonly now: () => number;
  private readonly sweeper: NodeJS.Timeout;
  /** Set by the server once it listens: Host names of its own address are always allowed. */
  listening?: { host: string; port: number };

  constructor(
    private readonly deps: McpDeps,
    private readonly config: McpConfig,
    private readonly opts: McpEndpointOptions,
  ) {
    this.now = opts.now ?? Date.now;
    this.sweeper = setInterval(() => void this.sweep(), Math.min(60_000, opts.idleMs)).unref();
  }

  /** Transport sessions open now. */
  get size(): number {
    return this.entries.size;
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!this.config.keys.accepts(req.headers.authorization))
      return rpcError(
        res,
        401,
        ErrorCode.InvalidRequest,
        'this MCP endpoint requires Authorization: Bearer <transport key>',
        {
          'www-authenticate': 'Bearer realm="svc-mcp"',
        },
      );
    const method = req.method ?? 'GET';
    if (method !== 'POST' && method !== 'GET' && method !== 'DELETE')
      return rpcError(res, 405, ErrorCode.InvalidRequest, `${method} is not allowed on /mcp`, {
        allow: 'GET, POST, DELETE',
      });
    const sid = header(req, 'mcp-session-id');
    const entry = sid === undefined ? undefined : (this.entries.get(sid) ?? (await this.resume(sid)));
    if (sid !== undefined && !entry)
      return rpcError(
        res,
        404,
        -32001,
        'Session not found: initialize a new MCP session (POST /mcp without Mcp-Session-Id)',
      );
    let body: unknown;
    if (method === 'POST') {
      let text: string;
      try {
        text = await readBody(req, MAX_BODY_BYTES);
      } catch (e) {
        if (e instanceof SvcFailure) return rpcError(res, 413, ErrorCode.InvalidRequest, e.errors[0]!.message);
        throw e;
      }
      if (nestedDeeperThan(text, MAX_JSON_DEPTH))
        return rpcError(res, 400, ErrorCode.ParseError, `Parse error: JSON nested more than ${MAX_JSON_DEPTH} deep`);
      try {
        body = JSON.parse(text);
      } catch {
        return rpcError(res, 400, ErrorCode.ParseError, 'Parse error: the body is not valid JSON');
      }
    }
    if (entry) {
      entry.lastUsed = this.now();
      this.keepShared(sid!, entry);
      for (const id of cancelledIds(body)) entry.calls.get(id)?.abort();
      const call = method === 'POST' ? directCallOf(body, req, entry.session) : undefined;
      if (call) return runDirect(call, entry.session, sid!, entry.calls, req, res);
      return serve(entry.transport, req, res, body);
    }
    if (method !== 'POST' || !isInitializeRequest(body))
      return rpcError(res, 400, ErrorCode.InvalidRequest, 'Bad Request: no Mcp-Session-Id; send initialize first');
    if (this.entries.size >= this.opts.maxSessions) this.sweep();
    if (this.entries.size >= this.opts.maxSessions)
      return rpcError(
        res,
        503,
        ErrorCode.InternalError,
        `the server holds ${this.entries.size} MCP sessions (the cap); try again later`,
        {
          'retry-after': '60',
        },
      );
    const opened = this.open();
    await serve(opened.transport, req, res, body);
  }

  private open(): Entry {
    return this.entry(new McpSession(this.deps), () => randomUUID());
  }

  /** A transport session with its SDK server; `id` names it (a new one, or the one resumed). */
  private entry(session: McpSession, id: () => string): Entry {
    const server = mcpServer(session, this.opts.version, this.deps.logger);
    const entry: Entry = {
      session,
      server,
      calls: new DirectCalls(),
      lastUsed: this.now(),
      sharedAt: this.now(),
      transport: new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: id,
        onsessioninitialized: async (sid) => {
          this.entries.set(sid, entry);
          await this.share(sid, session);
        },
        onsessionclosed: (sid) => {
          this.entries.delete(sid);
          void this.opts.shared?.del(sharedKey(sid)).catch(() => undefined);
        },
      }),
    };
    entry.transport.onclose = () => {
      if (entry.transport.sessionId) this.entries.delete(entry.transport.sessionId);
      // As the SDK aborts the handlers it runs when the transport closes.
      for (const abort of entry.calls.values()) abort.abort();
    };
    session.onChange = () => this.share(entry.transport.sessionId!, session);
    void server.connect(entry.transport);
    return entry;
  }

  /** Write a session's state to the shared store (no-op when nothing is shared). */
  private async share(sid: string, session: McpSession): Promise<void> {
    await this.opts.shared?.set(sharedKey(sid), JSON.stringify(session.state()), this.opts.idleMs);
  }

  /** Restart the shared copy's expiry now and then while the session is used here. */
  private keepShared(sid: string, e: Entry): void {
    if (!this.opts.shared || e.lastUsed - e.sharedAt < this.opts.idleMs / 4) return;
    e.sharedAt = e.lastUsed;
    void this.share(sid, e.session).catch(() => undefined);
  }

  /**
   * A session another replica opened (or this one before a restart), from the shared store:
   * undefined when nothing is shared, or it is unknown or expired there.
   */
  private async resume(sid: string): Promise<Entry | undefined> {
    if (!this.opts.shared || sid.length > 200) return undefined;
    const text = await this.opts.shared.get(sharedKey(sid));
    const state = text === undefined ? undefined : parseState(text);
    if (!state) return undefined;
    const again = this.entries.get(sid); // another request resumed it meanwhile
    if (again) return again;
    const entry = this.entry(new McpSession(this.deps, state), () => sid);
    if (!markInitialized(entry.transport, sid)) {
      void entry.server.close().catch(() => undefined);
      this.deps.logger.warn(
        'MCP: this SDK version cannot resume a shared transport session; the client must initialize again',
      );
      return undefined;
    }
    this.entries.set(sid, entry);
    return entry;
  }

  /** Close transport sessions idle longer than the limit. */
  private sweep(): void {
    const now = this.now();
    for (const [id, e] of this.entries)
      if (now - e.lastUsed > this.opts.idleMs) {
        this.entries.delete(id);
        void e.server.close().catch(() => undefined);
      }
  }

  /** Shutdown begins: end the standing GET event streams, so they do not hold the server open. */
  endStreams(): void {
    for (const e of this.entries.values()) e.transport.closeStandaloneSSEStream();
  }

  /** Shutdown: close every transport session. */
  async close(): Promise<void> {
    clearInterval(this.sweeper);
    const all = [...this.entries.values()];
    this.entries.clear();
    await Promise.all(all.map((e) => e.server.close().catch(() => undefined)));
  }
}

/** The SDK server of one transport session: its handlers call the session. */
function mcpServer(session: McpSession, version: string, logger: McpDeps['logger']): Server {
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

/** The shared store's key of a transport session. */
function sharedKey(sid: string): string {
  return `mcp:${sid}`;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** A JSON-RPC error answer outside any transport session. */
function rpcError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}
