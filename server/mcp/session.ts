/**
 * One MCP transport session: who it authenticated as (svc_incoming_auth), which logical session
 * each intent is bound to, and the tool calls and resource reads, each decoded, handed to the
 * execute core, and rendered (render.ts). Nothing here executes, reviews or mints: the core does.
 */
import type { CallToolResult, ReadResourceResult, Resource, Tool } from '@modelcontextprotocol/sdk/types.js';
import { encode as toon } from '@toon-format/toon';
import { fail, svcError, SvcFailure } from '../../common/errors.js';
import type { Logger } from '../../common/log.js';
import type { Registry } from '../../pack/registry.js';
import type { InboundAuth } from '../auth/inbound-auth.js';
import { ANONYMOUS, whoOf, type HeaderBag, type Principal } from '../auth/principal.js';
import { discover, discoverMarkdown } from '../catalog/discover.js';
import type { ExecuteService } from '../execute/service.js';
import type { FollowLine } from '../execute/request.js';
import { decodeBody } from '../http/requests.js';
import type { TenantScopes } from './config.js';
import { contextResult, errorResult, INLINE_ROWS, programResult, textResult } from './render.js';
import { listRuns, readRun, type ResourceScope } from './resources.js';
import {
  AuthArgs,
  ContextArgs,
  DiscoverArgs,
  RegistryArgs,
  RunArgs,
  RUN_REJECTED,
  SvcArgs,
  TOOLS,
  inputSchema,
  type ToolDef,
} from './tools.js';

export interface McpDeps {
  service: ExecuteService;
  registry: () => Registry;
  auth: InboundAuth;
  tenants: TenantScopes;
  logger: Logger;
  /** Whether callers of a tenant may only read (discovery then lists no write). */
  readOnly?: (tenant: string) => boolean;
}

/** What a tool call brings besides its arguments. */
export interface CallExtra {
  signal: AbortSignal;
  progressToken?: string | number;
  notify: (method: string, params: Record<string, unknown>) => Promise<void>;
  /** The HTTP headers of the request that carried the call. */
  headers?: HeaderBag;
}

/** Intents remembered per transport session (oldest forgotten first). */
const MAX_INTENTS = 256;

/** What a transport session holds, as another replica needs it to go on serving the session. */
export interface McpSessionState {
  principal: Principal;
  authenticated: boolean;
  /** [intent, logical session ref], oldest first. */
  intents: Array<[string, string]>;
}

export class McpSession {
  private principal: Principal = ANONYMOUS;
  private authenticated = false;
  /** intent -> the logical session ref bound for it on this transport session. */
  private readonly intents = new Map<string, string>();
  /** Called after each change of the state (sign-in, a new intent), to share it before the answer. */
  onChange: (s: McpSessionState) => Promise<void> = async () => undefined;

  constructor(
    private readonly deps: McpDeps,
    restored?: McpSessionState,
  ) {
    if (!restored) return;
    this.principal = restored.principal;
    this.authenticated = restored.authenticated;
    for (const [intent, ref] of restored.intents.slice(-MAX_INTENTS)) this.intents.set(intent, ref);
  }

  /** True once svc_incoming_auth succeeded here: the session cap never closes such a session to make room. */
  get signedIn(): boolean {
    return this.authenticated;
  }

  /** The state to share (no secret: the principal is who signed in, never the credential). */
  state(): McpSessionState {
    return { principal: this.principal, authenticated: this.authenticated, intents: [...this.intents] };
  }

  /** tools/list: svc_incoming_auth only when inbound auth is on. */
  tools(): Tool[] {
    return this.visible().map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: inputSchema(t),
      annotations: t.annotations,
    }));
  }

  private visible(): readonly ToolDef[] {
    return this.deps.auth.mode === 'off' ? TOOLS.filter((t) => t.name !== 'svc_incoming_auth') : TOOLS;
  }

  /** True when the tool exists on this server (an unknown one is a protocol error, not a tool error). */
  has(name: string): boolean {
    return this.visible().some((t) => t.name === name);
  }

  /** tools/call of a known tool: every failure becomes an `isError` result. */
  async call(name: string, args: unknown, extra: CallExtra): Promise<CallToolResult> {
    try {
      if (name !== 'svc_incoming_auth') this.requireAuth();
      switch (name) {
        case 'svc_incoming_auth':
          return await this.authenticate(args);
        case 'svc_context':
          return await this.context(args);
        case 'svc':
          return await this.svc(args, extra);
        case 'svc_run':
          return await this.run(args, extra);
        case 'discover_capabilities':
          return this.discover(args);
        default:
          return this.registryList(args);
      }
    } catch (e) {
      if (e instanceof SvcFailure) return errorResult(e.errors);
      this.deps.logger.error(`MCP tool ${name} failed: ${(e as Error)?.stack ?? String(e)}`);
      return errorResult([
        svcError('internal_error', `${name} failed unexpectedly`, {
          hint: 'this is a bug in svc; the server log has the details',
        }),
      ]);
    }
  }

  /** In mode `required`, nothing but svc_incoming_auth works before it succeeded. */
  requireAuth(): void {
    if (this.deps.auth.mode === 'required' && !this.authenticated)
      throw new SvcFailure([
        svcError('auth_required', 'this server requires authentication', {
          hint: 'call svc_incoming_auth first with bearer_token or api_key',
        }),
      ]);
  }

  private async authenticate(raw: unknown): Promise<CallToolResult> {
    const args = decodeBody(AuthArgs, raw ?? {}, '{"api_key": "..."} or {"bearer_token": "<JWT>"}', 'arguments');
    if ((args.bearer_token === undefined) === (args.api_key === undefined))
      fail('bad_arguments', 'send exactly one of bearer_token and api_key', 'for example {"api_key": "..."}');
    const headers = args.bearer_token
      ? { authorization: `Bearer ${args.bearer_token}` }
      : { 'x-api-key': args.api_key };
    const p = await this.deps.auth.authenticate(headers);
    if (!('method' in p)) throw new SvcFailure([p]);
    if (p.tenant !== this.principal.tenant) this.intents.clear();
    this.principal = p;
    this.authenticated = true;
    await this.onChange(this.state());
    return textResult(`authenticated: ${p.method}, tenant ${p.tenant}, subject ${p.subject ?? '-'}`, {
      method: p.method,
      tenant_id: p.tenant,
      subject: p.subject ?? null,
    });
  }

  private async context(raw: unknown): Promise<CallToolResult> {
    const example = '{"intent": "...", "seeds": [{"api": "<catalog>", "entity": "<Entity>"}]}';
    const args = decodeBody(ContextArgs, raw ?? {}, example, 'arguments');
    const bound = this.intents.get(args.intent);
    const allowed = this.deps.tenants.allowed(this.principal.tenant);
    const c = await this.deps.service.logical.context({
      intent: args.intent,
      seeds: args.seeds,
      tenant: this.principal.tenant,
      ...(bound ? { bound } : {}),
      ...(allowed ? { allowed } : {}),
    });
    this.intents.delete(args.intent);
    this.intents.set(args.intent, c.ref);
    if (this.intents.size > MAX_INTENTS) this.intents.delete(this.intents.keys().next().value!);
    await this.onChange(this.state());
    return contextResult(c.outcome, c.ref, { ...c.continuity });
  }

  private async session(ref: string) {
    const found = await this.deps.service.logical.find(ref, this.principal.tenant);
    if (found.stale) throw new SvcFailure([found.stale]);
    return found;
  }

  private async svc(raw: unknown, extra: CallExtra): Promise<CallToolResult> {
    const args = decodeBody(SvcArgs, raw ?? {}, '{"logical_session_ref": "l_...", "program": "e1[name]"}', 'arguments');
    const found = await this.session(args.logical_session_ref);
    const o = await this.deps.service.program(
      found.session,
      {
        program: args.program,
        mode: 'auto',
        wait: true,
        force: false,
        signal: extra.signal,
        pageRows: INLINE_ROWS,
        who: whoOf(this.principal, extra.headers),
      },
      found,
    );
    return programResult(o, { ref: args.logical_session_ref });
  }

  private async run(raw: unknown, extra: CallExtra): Promise<CallToolResult> {
    if (raw && typeof raw === 'object' && !Array.isArray(raw)) {
      const rejected = Object.keys(raw).filter((k) => RUN_REJECTED[k] !== undefined);
      if (rejected.length)
        throw new SvcFailure(
          rejected.map((k) =>
            svcError('bad_arguments', `svc_run takes logical_session_ref and run_ref only, not \`${k}\``, {
              hint: RUN_REJECTED[k],
            }),
          ),
        );
    }
    const args = decodeBody(RunArgs, raw ?? {}, '{"logical_session_ref": "l_...", "run_ref": "pc0"}', 'arguments');
    const s = (await this.session(args.logical_session_ref)).session;
    let n = 0;
    const onLine = (l: FollowLine) => {
      const params = { line: l.line, n: l.handle, ...(l.commit_id ? { c: l.commit_id } : {}) };
      void extra.notify('notifications/svc/op', params).catch(() => undefined);
      if (extra.progressToken !== undefined)
        void extra
          .notify('notifications/progress', { progressToken: extra.progressToken, progress: ++n, message: l.line })
          .catch(() => undefined);
    };
    const o = await this.deps.service.runRef(s, args.run_ref, {
      signal: extra.signal,
      onLine,
      pageRows: INLINE_ROWS,
      who: whoOf(this.principal, extra.headers),
    });
    return programResult(o, { ref: args.logical_session_ref });
  }

  private discover(raw: unknown): CallToolResult {
    const args = decodeBody(DiscoverArgs, raw ?? {}, '{"query": "beers by style"}', 'arguments');
    const allowed = this.deps.tenants.allowed(this.principal.tenant);
    const readsOnly = this.deps.readOnly?.(this.principal.tenant) ?? false;
    const rows = discover(this.deps.registry(), args.query, { limit: args.limit ?? 10, allowed, readsOnly });
    return textResult(discoverMarkdown(args.query, rows, 'list_registry lists the catalogs'), {
      entities: rows.map((r) => ({
        seed: r.seed,
        api: r.api,
        entity: r.entity,
        label: r.label,
        capabilities: r.capabilities,
      })),
    });
  }

  private registryList(raw: unknown): CallToolResult {
    const args = decodeBody(RegistryArgs, raw ?? {}, '{} or {"tag": "..."}', 'arguments');
    const allowed = this.deps.tenants.allowed(this.principal.tenant);
    const entries = this.deps
      .registry()
      .list()
      .filter((e) => (!allowed || allowed.has(e.entry_id)) && (!args.tag || e.tags.includes(args.tag)))
      .map((e) => ({ entry_id: e.entry_id, label: e.label, tags: e.tags }));
    return textResult(toon({ entries }), { entries });
  }

  /** What resources/read and resources/list may see: this principal's tenant and logical sessions. */
  get scope(): ResourceScope {
    return {
      service: this.deps.service,
      tenant: this.principal.tenant,
      refs: [...this.intents.values()],
      checkAuth: () => this.requireAuth(),
    };
  }

  readResource(uri: string): Promise<ReadResourceResult> {
    return readRun(this.scope, uri);
  }

  /** Runs of this transport session's logical sessions, newest first. */
  resources(): Promise<Resource[]> {
    return listRuns(this.scope);
  }
}
