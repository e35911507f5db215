/**
 * The `/mcp` endpoint on the svc HTTP server: the official SDK's Streamable HTTP transport,
 * stateful (one transport, one SDK `Server` and one `McpSession` per `Mcp-Session-Id`). Before a
 * request reaches a transport it passes the DNS-rebinding check (Host and Origin), the transport
 * key check (when keys are provisioned), the body limit and JSON decoding; transport sessions are
 * capped and closed when idle (`session-cap.ts`), new ones limited per address (`rate-limit.ts`),
 * each bound to the transport key that opened it. Requests get JSON-RPC errors where the protocol
 * says so (unknown session 404, no session 400, malformed JSON 400), never a crash. Every
 * message, tools/call included, goes through the SDK's Web-standard transport (its public
 * `handleRequest`), driven by a Node bridge (`web-adapter.ts`); a session opened elsewhere is
 * resumed with the SDK's public API too (`resume.ts`). The SDK `Server` of a session and its
 * handlers are `sdk-server.ts`'s.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { ErrorCode, isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { SvcFailure } from '../../common/errors.js';
import { MAX_BODY_BYTES, MAX_JSON_DEPTH, nestedDeeperThan, readBody } from '../http/body.js';
import { sameKey, type McpConfig } from './config.js';
import { McpSession, type McpDeps } from './session.js';
import type { SharedKv } from '../kv.js';
import {
  clientInitOf,
  parseShared,
  replayInitialize,
  sharedText,
  type ClientInit,
  type SharedSession,
} from './resume.js';
import { mcpServer } from './sdk-server.js';
import { NewSessionLimit } from './rate-limit.js';
import { evictee, holdsRequest, idleLimit } from './session-cap.js';
import { serve, webRequest } from './web-adapter.js';
import { rpcError } from './refusal.js';

export interface McpEndpointOptions {
  version: string;
  /** Transport sessions held at once (`SVC_MCP_MAX_SESSIONS`). */
  maxSessions: number;
  /** A transport session unused this long is closed (`SVC_MCP_SESSION_IDLE_SECS`). */
  idleMs: number;
  /** A session that sent no request since initialize, unused this long, is closed (`SVC_MCP_FRESH_IDLE_SECS`). */
  freshIdleMs?: number;
  /** New sessions per minute per client address (`SVC_MCP_NEW_SESSIONS_PER_MIN`); 0 or unset: no limit. */
  newSessionsPerMin?: number;
  now?: () => number;
  /** Where transport sessions are shared with other replicas (`SVC_MCP_TRANSPORT_KV_URL`); unset: not shared. */
  shared?: SharedKv;
}

interface Entry {
  transport: WebStandardStreamableHTTPServerTransport;
  server: Server;
  session: McpSession;
  /** What its client sent in `initialize`, replayed where the session is resumed. */
  init: ClientInit;
  lastUsed: number;
  /** When its state was last written to the shared store (its expiry restarts then). */
  sharedAt: number;
  /** The id of the transport key that opened it (`''`: none is provisioned); only that key reaches it. */
  key: string;
  /** No request since initialize yet (session-cap.ts). */
  fresh: boolean;
  /** Its POSTs in progress. */
  busy: number;
}

export class McpEndpoint {
  private readonly entries = new Map<string, Entry>();
  private readonly now: () => number;
  private readonly sweeper: NodeJS.Timeout;
  private readonly limits: { idleMs: number; freshIdleMs: number };
  private readonly newSessions: NewSessionLimit;
  /** Sessions being resumed now, by id: a second request for one waits for the first's resume. */
  private readonly resuming = new Map<string, Promise<Entry | undefined>>();

  constructor(
    private readonly deps: McpDeps,
    private readonly config: McpConfig,
    private readonly opts: McpEndpointOptions,
  ) {
    this.now = opts.now ?? Date.now;
    this.limits = { idleMs: opts.idleMs, freshIdleMs: opts.freshIdleMs ?? opts.idleMs };
    this.newSessions = new NewSessionLimit({ perMinute: opts.newSessionsPerMin ?? 0, now: this.now });
    const every = Math.min(60_000, opts.idleMs, this.limits.freshIdleMs / 3);
    this.sweeper = setInterval(() => void this.sweep(), every).unref();
  }

  /** Transport sessions open now. */
  get size(): number {
    return this.entries.size;
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const key = this.config.keys.idOf(req.headers.authorization);
    if (key === undefined)
      return rpcError(
        res,
        401,
        ErrorCode.InvalidRequest,
        'this MCP endpoint requires Authorization: Bearer <transport key>',
        { 'www-authenticate': 'Bearer realm="svc-mcp"' },
      );
    const method = req.method ?? 'GET';
    if (method !== 'POST' && method !== 'GET' && method !== 'DELETE')
      return rpcError(res, 405, ErrorCode.InvalidRequest, `${method} is not allowed on /mcp`, {
        allow: 'GET, POST, DELETE',
      });
    const sid = header(req, 'mcp-session-id');
    const found = sid === undefined ? undefined : (this.entries.get(sid) ?? (await this.resume(sid, key, req)));
    // Another key's session answers as an unknown one: its id alone reaches nothing.
    const entry = found && sameKey(found.key, key) ? found : undefined;
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
      // No longer fresh: its shared copy (written to expire as a fresh one) is written again now.
      if (entry.fresh && holdsRequest(body)) [entry.fresh, entry.sharedAt] = [false, -Infinity];
      this.keepShared(sid!, entry);
      if (method !== 'POST') return serve(entry.transport, req, res, body);
      entry.busy++;
      return serve(entry.transport, req, res, body).finally(() => entry.busy--);
    }
    if (method !== 'POST' || !isInitializeRequest(body))
      return rpcError(res, 400, ErrorCode.InvalidRequest, 'Bad Request: no Mcp-Session-Id; send initialize first');
    const taken = this.newSessions.take(req.socket.remoteAddress);
    if (!taken.ok) return rpcError(res, 429, -32000, taken.message, { 'retry-after': String(taken.retryAfterSecs) });
    if (!this.makeRoom())
      return rpcError(
        res,
        503,
        ErrorCode.InternalError,
        `the server holds ${this.entries.size} MCP sessions (the cap); try again later`,
        { 'retry-after': '60' },
      );
    const opened = this.entry(new McpSession(this.deps), { id: () => randomUUID(), key, init: clientInitOf(body) });
    opened.busy++;
    await serve(opened.transport, req, res, body).finally(() => opened.busy--);
  }

  /**
   * A transport session with its SDK server; `id` names it (a new one, or the one resumed), `key`
   * is the id of its transport key, `init` its client's initialize. A new one is fresh, a resumed
   * one was used elsewhere.
   */
  private entry(
    session: McpSession,
    { id, key, init, fresh = true }: { id: () => string; key: string; init: ClientInit; fresh?: boolean },
  ): Entry {
    const server = mcpServer(session, this.opts.version, this.deps.logger, (id) => entry.transport.closeSSEStream(id));
    const entry: Entry = {
      session,
      server,
      init,
      lastUsed: this.now(),
      sharedAt: this.now(),
      key,
      fresh,
      busy: 0,
      transport: new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: id,
        onsessioninitialized: async (sid) => {
          this.entries.set(sid, entry);
          await this.share(sid, entry);
        },
        onsessionclosed: (sid) => {
          this.entries.delete(sid);
          void this.opts.shared?.del(sharedKey(sid)).catch(() => undefined);
        },
      }),
    };
    entry.transport.onclose = () => {
      if (entry.transport.sessionId) this.entries.delete(entry.transport.sessionId);
    };
    session.onChange = () => this.share(entry.transport.sessionId!, entry);
    void server.connect(entry.transport);
    return entry;
  }

  /** Write a session's state and key id to the shared store (no-op when nothing is shared); a fresh one expires sooner. */
  private async share(sid: string, e: Entry): Promise<void> {
    await this.opts.shared?.set(
      sharedKey(sid),
      sharedText(e.session.state(), e.key, e.init),
      idleLimit(e, this.limits),
    );
  }

  /** Restart the shared copy's expiry now and then while the session is used here. */
  private keepShared(sid: string, e: Entry): void {
    if (!this.opts.shared || e.lastUsed - e.sharedAt < this.opts.idleMs / 4) return;
    e.sharedAt = e.lastUsed;
    void this.share(sid, e).catch(() => undefined);
  }

  /**
   * A session another replica opened (or this one before a restart), from the shared store:
   * undefined when nothing is shared, or it is unknown or expired there. Requests that arrive
   * together for one session share one resume.
   */
  private async resume(sid: string, key: string, req: IncomingMessage): Promise<Entry | undefined> {
    if (!this.opts.shared || sid.length > 200) return undefined;
    const text = await this.opts.shared.get(sharedKey(sid));
    const shared = text === undefined ? undefined : parseShared(text);
    if (!shared || !sameKey(shared.key, key)) return undefined;
    const again = this.entries.get(sid); // another request resumed it meanwhile
    if (again) return again;
    let pending = this.resuming.get(sid);
    if (!pending) {
      pending = this.load(sid, shared, webRequest(req).url).finally(() => this.resuming.delete(sid));
      this.resuming.set(sid, pending);
    }
    return pending;
  }

  /** Serve the shared session `sid` here (see `resume.ts`); undefined when the SDK would not take it. */
  private async load(sid: string, { state, key, init }: SharedSession, url: string): Promise<Entry | undefined> {
    const entry = this.entry(new McpSession(this.deps, state), { id: () => sid, key, init, fresh: false });
    entry.sharedAt = -Infinity; // written again with its full expiry (it may have been shared as a fresh one)
    // Replaying initialize fires onsessioninitialized, which holds the entry and shares it.
    if (await replayInitialize(entry.transport, url, init).catch(() => false)) return entry;
    this.entries.delete(sid);
    void entry.server.close().catch(() => undefined);
    this.deps.logger.warn(
      `MCP: could not resume transport session ${sid.slice(0, 40)}; the client must initialize again`,
    );
    return undefined;
  }

  /** Close transport sessions idle longer than their limit (a fresh one's is shorter). */
  private sweep(): void {
    const now = this.now();
    for (const [id, e] of this.entries)
      if (e.busy === 0 && now - e.lastUsed > idleLimit(e, this.limits)) this.drop(id, e);
  }

  /** Room for a new session under the cap: idle ones swept, else one closed (session-cap.ts); false when none may go. */
  private makeRoom(): boolean {
    if (this.entries.size < this.opts.maxSessions) return true;
    this.sweep();
    while (this.entries.size >= this.opts.maxSessions) {
      const id = evictee(this.entries);
      if (id === undefined) return false;
      this.drop(id, this.entries.get(id)!);
    }
    return true;
  }

  private drop(id: string, e: Entry): void {
    this.entries.delete(id);
    void e.server.close().catch(() => undefined);
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

/** The shared store's key of a transport session. */
function sharedKey(sid: string): string {
  return `mcp:${sid}`;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}
