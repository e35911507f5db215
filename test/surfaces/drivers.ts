/**
 * Surface drivers for the conformance suite: one interface over the two surfaces of the execute
 * core, HTTP (`fetch` against `/execute/...`, Accept: application/json) and MCP (the official SDK
 * client against `/mcp`). A scenario is written once against `Driver` / `Session` and run through
 * both; every answer is normalized into a `Reply` so the two surfaces can be compared with t.same.
 *
 * Programs are written as templates: `{{api:Entity}}` is the entity symbol (`eN`) and
 * `{{kind api:Entity}}` (e.g. `{{create brewery:Brewery}}`) the capability symbol (`mN`) that
 * the session's teaching text assigned. The symbols are learned from the teaching waves each
 * surface sent (the POST /execute and /context `wave`; the svc_context text), never from a side
 * channel: the two surfaces may number them differently (MCP orders seeds by api and entity), and
 * the plan's commit id must not depend on that.
 */
import type { Test } from 'tap';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { call, type Answer } from '../_helpers/server.js';
import { connectMcp, svcMeta, textOf, type McpConn } from '../_helpers/mcp.js';

export type Surface = 'http' | 'mcp';
export type Row = Record<string, unknown>;

/** One returned expression of an answer. */
export interface Block {
  entity: string;
  count: number;
  total?: number;
  rows: Row[];
  /** The continuation handle of a "more" hint: `pgN` (HTTP) or `l_<token>_pgN` (MCP). */
  next?: string;
  /** MCP only: the block holds more rows than it shows inline. */
  truncated?: boolean;
}

/** An answer of either surface, normalized. */
export interface Reply {
  surface: Surface;
  /** HTTP 2xx, or an MCP result without `isError`. */
  ok: boolean;
  /** How the surface signalled the outcome: `http 200`, `http 403`, `mcp ok`, `mcp isError`. */
  signal: string;
  /** HTTP status (HTTP only). */
  status?: number;
  /** The first error code (`_meta.svc.code`, else the first of `errors`). */
  code?: string;
  /** Every error code of the answer, in order. */
  codes: string[];
  blocks: Block[];
  /** `_meta.svc` as the surface sent it. */
  meta: Record<string, any>;
  /** `_meta.svc.commit_id`, when sent. */
  commit_id?: string;
  /** The raw answer, for messages. */
  raw: unknown;
}

/** A dry-run: the plan acceptance token and the review. */
export interface DryRun extends Reply {
  /** `_meta.svc.plan_commit_ref` (HTTP) or `_meta.svc.run_ref` (MCP). */
  ref?: string;
  verdict?: string;
  review?: Record<string, unknown>;
}

export interface Entry {
  entry_id: string;
  cgs_hash: string;
}

/** The symbols a session's teaching text assigned. */
export class Symbols {
  /** `api:Entity` -> `eN`. */
  readonly entities = new Map<string, string>();
  /** `kind api:Entity` -> `mN` (null when two capabilities share the key). */
  readonly capabilities = new Map<string, string | null>();
  /** Every teaching row taught so far, with its symbols blanked (`e#`, `m#`, `r#`). */
  readonly rows = new Set<string>();

  /** Reads every teaching row (`form<TAB>meaning`) of a wave or of the cumulative text. */
  learn(text: string): void {
    for (const line of text.split('\n')) {
      const tab = line.indexOf('\t');
      if (tab < 0) continue;
      const form = line.slice(0, tab);
      const meaning = line.slice(tab + 1);
      if (form !== 'form') this.rows.add(line.replace(/\b([emr])\d+\b/g, '$1#'));
      const ent = /^(e\d+)(?:[([]|$)/.exec(form);
      const entName = /^([a-z][a-z0-9_-]*:[A-Za-z_]\w*): /.exec(meaning);
      if (ent && entName) {
        this.entities.set(entName[1]!, ent[1]!);
        continue;
      }
      const cap = /(?:^|\.)(m\d+)(?:[([]|$)/.exec(form);
      // The entity is named by its symbol (`create e1: ...`) once taught, else as `api:Entity`.
      const capName = /^(query|get|search|create|update|delete|action) ([a-z][a-z0-9_-]*:[A-Za-z_]\w*|e\d+)[ :]/.exec(
        meaning,
      );
      if (cap && capName) {
        const entity = /^e\d+$/.test(capName[2]!)
          ? [...this.entities].find(([, sym]) => sym === capName[2])?.[0]
          : capName[2];
        const key = `${capName[1]} ${entity}`;
        const had = this.capabilities.get(key);
        this.capabilities.set(key, had !== undefined && had !== cap[1] ? null : cap[1]!);
      }
    }
  }

  /** The symbol of `api:Entity` or `kind api:Entity`; throws when the teaching text did not assign one. */
  resolve(name: string): string {
    const sym = name.includes(' ') ? this.capabilities.get(name) : this.entities.get(name);
    if (!sym) throw new Error(`the teaching text assigned no (unique) symbol to ${name}`);
    return sym;
  }

  /** The program of a template: every `{{...}}` replaced by its symbol. */
  program(template: string): string {
    return template.replace(/\{\{([^{}]+)\}\}/g, (_m, name: string) => this.resolve(name.trim()));
  }

  /** What the teaching text covers, without symbol numbers (comparable across surfaces). */
  coverage(): { entities: string[]; capabilities: string[]; rows: string[] } {
    return {
      entities: [...this.entities.keys()].sort(),
      capabilities: [...this.capabilities.keys()].sort(),
      rows: [...this.rows].sort(),
    };
  }

  copy(): Symbols {
    const s = new Symbols();
    for (const [k, v] of this.entities) s.entities.set(k, v);
    for (const [k, v] of this.capabilities) s.capabilities.set(k, v);
    for (const r of this.rows) s.rows.add(r);
    return s;
  }
}

/** An execute session (HTTP) or logical session (MCP) as one caller sees it. */
export interface Session {
  surface: Surface;
  /** `/execute/{prompt_hash}/{session}` (HTTP) or `l_<token>` (MCP). */
  address: string;
  symbols: Symbols;
  /** The catalogs the session pinned, as the surface last reported them. */
  entries: Entry[];
  /** The program a template stands for on this session. */
  program(template: string): string;
  /** More seeds (federation or expansion): HTTP POST .../context; MCP svc_context with the same intent. */
  context(seeds: string[]): Promise<Reply>;
  /** A clean read, run at once: HTTP live execute; MCP svc (fused dry-run and run). */
  read(template: string): Promise<Reply>;
  /** A dry-run: HTTP mode=plan; MCP svc (a program that is not a clean read). */
  dryRun(template: string): Promise<DryRun>;
  /** A live run by plan acceptance token: HTTP the same program with plan_commit_ref; MCP svc_run. */
  run(ref: string): Promise<Reply>;
  /** The next page: HTTP `page(pgN)`; MCP svc_run with `l_<token>_pgN`. */
  page(handle: string): Promise<Reply>;
}

export interface Opened {
  reply: Reply;
  session?: Session;
}

/** One caller on one surface. */
export interface Driver {
  surface: Surface;
  /** Opens a session on `seeds` (`api:Entity`, all of one catalog unless the surface federates). */
  open(seeds: string[], intent?: string): Promise<Opened>;
  /** Presents an inbound API key: HTTP sends `X-API-Key` from now on; MCP calls svc_incoming_auth. */
  authenticate(apiKey: string): Promise<Reply>;
  /** The session another caller opened, addressed by this caller (tenant checks). */
  adopt(session: Session): Session;
}

function seedObjects(seeds: string[]): Array<{ api: string; entity: string }> {
  return seeds.map((s) => {
    const [api, entity] = s.split(':');
    return { api: api!, entity: entity! };
  });
}

// ---------------------------------------------------------------- HTTP

function httpBlocks(body: Record<string, any>): Block[] {
  const raw: Array<Record<string, any>> = Array.isArray(body.results)
    ? body.results
    : typeof body.entity === 'string'
      ? [body]
      : [];
  return raw.map((b) => {
    const next = typeof b.more === 'string' ? /^page\((pg\d+)\)/.exec(b.more)?.[1] : undefined;
    return {
      entity: b.entity,
      count: b.count,
      ...(b.total !== undefined ? { total: b.total } : {}),
      rows: b.rows ?? [],
      ...(next ? { next } : {}),
    };
  });
}

export function httpReply(a: Answer): Reply {
  const meta = (a.body._meta?.svc ?? {}) as Record<string, any>;
  // Execute routes answer `{errors: [...]}`; the JSON routes (`/v1/...`) a top-level `code`.
  const codes = ((a.body.errors ?? []) as Array<{ code: string }>).map((e) => e.code);
  if (!codes.length && typeof a.body.code === 'string') codes.push(a.body.code);
  return {
    surface: 'http',
    ok: a.status >= 200 && a.status < 300,
    signal: `http ${a.status}`,
    status: a.status,
    code: (meta.code as string | undefined) ?? codes[0],
    codes,
    blocks: httpBlocks(a.body),
    meta,
    ...(typeof meta.commit_id === 'string' ? { commit_id: meta.commit_id } : {}),
    raw: a.body && Object.keys(a.body).length ? a.body : a.text,
  };
}

class HttpSession implements Session {
  readonly surface = 'http';
  /** The program each plan token of this session was minted for (a client keeps it to run it). */
  readonly tokens: Map<string, string>;

  constructor(
    private readonly driver: HttpDriver,
    readonly address: string,
    readonly symbols: Symbols,
    public entries: Entry[],
    tokens = new Map<string, string>(),
  ) {
    this.tokens = tokens;
  }

  program(template: string): string {
    return this.symbols.program(template);
  }

  async context(seeds: string[]): Promise<Reply> {
    const a = await this.driver.post(`${this.address}/context`, JSON.stringify({ seeds }), 'application/json');
    if (typeof a.body.wave === 'string') this.symbols.learn(a.body.wave);
    if (Array.isArray(a.body.entries)) this.entries = a.body.entries;
    return httpReply(a);
  }

  async read(template: string): Promise<Reply> {
    return httpReply(await this.driver.post(this.address, this.program(template)));
  }

  async dryRun(template: string): Promise<DryRun> {
    const program = this.program(template);
    const r = httpReply(await this.driver.post(`${this.address}?mode=plan`, program));
    const ref = r.meta.plan_commit_ref as string | undefined;
    if (ref) this.tokens.set(ref, program);
    return { ...r, ...dryFields(r.meta), ...(ref ? { ref } : {}) };
  }

  async run(ref: string): Promise<Reply> {
    const program = this.tokens.get(ref);
    if (program === undefined) throw new Error(`no program kept for ${ref}`);
    return httpReply(await this.driver.post(`${this.address}?plan_commit_ref=${encodeURIComponent(ref)}`, program));
  }

  async page(handle: string): Promise<Reply> {
    return httpReply(await this.driver.post(this.address, `page(${handle})`));
  }
}

class HttpDriver implements Driver {
  readonly surface = 'http';
  private headers: Record<string, string> = {};

  constructor(private readonly base: string) {}

  post(path: string, body: string, type = 'text/plain'): Promise<Answer> {
    return call(this.base, path, { method: 'POST', body, type, headers: this.headers });
  }

  async open(seeds: string[], intent = 'conformance'): Promise<Opened> {
    const entry_id = seeds[0]!.split(':')[0]!;
    const a = await this.post('/execute', JSON.stringify({ entry_id, intent, seeds }), 'application/json');
    const reply = httpReply(a);
    if (a.status !== 201) return { reply };
    const symbols = new Symbols();
    symbols.learn(String(a.body.wave ?? ''));
    const session = new HttpSession(
      this,
      `/execute/${a.body.prompt_hash}/${a.body.session}`,
      symbols,
      (a.body.entries ?? []) as Entry[],
    );
    return { reply, session };
  }

  async authenticate(apiKey: string): Promise<Reply> {
    this.headers = { 'x-api-key': apiKey };
    const a = await call(this.base, '/v1/incoming-auth/context', { headers: this.headers });
    return httpReply(a);
  }

  adopt(session: Session): Session {
    const s = session as HttpSession;
    return new HttpSession(this, s.address, s.symbols.copy(), [...s.entries], new Map(s.tokens));
  }
}

export function httpDriver(base: string): Driver {
  return new HttpDriver(base);
}

// ---------------------------------------------------------------- MCP

function mcpBlocks(sc: Record<string, any> | undefined): Block[] {
  if (!sc) return [];
  const raw: Array<Record<string, any>> = Array.isArray(sc.results)
    ? sc.results
    : typeof sc.entity === 'string'
      ? [sc]
      : [];
  return raw.map((b) => {
    const next = typeof b.more === 'string' ? /run_ref=(\S+)/.exec(b.more)?.[1] : undefined;
    return {
      entity: b.entity,
      count: b.count,
      ...(b.total !== undefined ? { total: b.total } : {}),
      rows: b.rows ?? [],
      ...(next ? { next } : {}),
      ...(b.shown !== undefined ? { truncated: true } : {}),
    };
  });
}

export function mcpReply(r: CallToolResult): Reply {
  const meta = svcMeta(r);
  const sc = r.structuredContent as Record<string, any> | undefined;
  const codes = ((sc?.errors ?? []) as Array<{ code: string }>).map((e) => e.code);
  return {
    surface: 'mcp',
    ok: !r.isError,
    signal: r.isError ? 'mcp isError' : 'mcp ok',
    code: (meta.code as string | undefined) ?? codes[0],
    codes,
    blocks: mcpBlocks(sc),
    meta,
    ...(typeof meta.commit_id === 'string' ? { commit_id: meta.commit_id } : {}),
    raw: r,
  };
}

function dryFields(meta: Record<string, any>): Pick<DryRun, 'verdict' | 'review'> {
  return {
    ...(typeof meta.dry_verdict === 'string' ? { verdict: meta.dry_verdict } : {}),
    ...(meta.dry_review ? { review: meta.dry_review as Record<string, unknown> } : {}),
  };
}

class McpSession implements Session {
  readonly surface = 'mcp';

  constructor(
    private readonly conn: McpConn,
    readonly address: string,
    private readonly intent: string,
    readonly symbols: Symbols,
    public entries: Entry[],
  ) {}

  program(template: string): string {
    return this.symbols.program(template);
  }

  async context(seeds: string[]): Promise<Reply> {
    const r = await this.conn.tool('svc_context', { intent: this.intent, seeds: seedObjects(seeds) });
    const reply = mcpReply(r);
    if (!r.isError) {
      const meta = svcMeta(r);
      if (meta.logical_session_ref !== this.address)
        throw new Error(`svc_context answered another ref: ${meta.logical_session_ref} (had ${this.address})`);
      this.symbols.learn(textOf(r));
      if (Array.isArray(meta.entries)) this.entries = meta.entries;
    }
    return reply;
  }

  async read(template: string): Promise<Reply> {
    return mcpReply(
      await this.conn.tool('svc', { logical_session_ref: this.address, program: this.program(template) }),
    );
  }

  async dryRun(template: string): Promise<DryRun> {
    const r = mcpReply(
      await this.conn.tool('svc', { logical_session_ref: this.address, program: this.program(template) }),
    );
    const ref = r.meta.run_ref as string | undefined;
    return { ...r, ...dryFields(r.meta), ...(ref ? { ref } : {}) };
  }

  async run(ref: string): Promise<Reply> {
    return mcpReply(await this.conn.tool('svc_run', { logical_session_ref: this.address, run_ref: ref }));
  }

  page(handle: string): Promise<Reply> {
    return this.run(handle);
  }
}

class McpDriver implements Driver {
  readonly surface = 'mcp';

  constructor(readonly conn: McpConn) {}

  async open(seeds: string[], intent = 'conformance'): Promise<Opened> {
    const r = await this.conn.tool('svc_context', { intent, seeds: seedObjects(seeds) });
    const reply = mcpReply(r);
    if (r.isError) return { reply };
    const meta = svcMeta(r);
    const symbols = new Symbols();
    symbols.learn(textOf(r));
    const session = new McpSession(
      this.conn,
      String(meta.logical_session_ref),
      intent,
      symbols,
      (meta.entries ?? []) as Entry[],
    );
    return { reply, session };
  }

  async authenticate(apiKey: string): Promise<Reply> {
    return mcpReply(await this.conn.tool('svc_incoming_auth', { api_key: apiKey }));
  }

  adopt(session: Session): Session {
    const s = session as McpSession;
    return new McpSession(this.conn, s.address, 'adopted', s.symbols.copy(), [...s.entries]);
  }
}

/** An MCP caller: its own SDK client and transport session (closed when `t` ends). */
export async function mcpDriver(t: Test, base: string): Promise<Driver & { conn: McpConn }> {
  return new McpDriver(await connectMcp(t, base));
}

// ---------------------------------------------------------------- comparison

/** What two surfaces must agree on for a read or run: outcome, codes, commit id, rows. */
export function view(r: Reply): Record<string, unknown> {
  return {
    ok: r.ok,
    code: r.code ?? null,
    commit_id: r.commit_id ?? null,
    blocks: r.blocks.map((b) => ({
      entity: b.entity,
      count: b.count,
      total: b.total ?? null,
      rows: b.rows,
      more: b.next !== undefined,
      truncated: b.truncated ?? false,
    })),
  };
}

/** A failure as both surfaces must report it: not ok, the same codes. */
export function failure(r: Reply): Record<string, unknown> {
  return { ok: r.ok, code: r.code ?? null, codes: r.codes };
}

/** The surfaces' replies for messages. */
export function show(r: Reply): string {
  return `${r.surface} ${r.signal} ${JSON.stringify(r.raw).slice(0, 600)}`;
}
