/**
 * The three ways of the `peers` benchmark as an agent uses them: svc (symbols from its teaching
 * table, programs through `svc`, handles through `svc_run`) and the OpenAPI proxy in its default
 * mode (one tool per endpoint) or its dynamic mode (list endpoints, get an endpoint's schema once
 * per path, invoke). Each way's calls go through an `Agent`, which counts them.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { type Agent, contentText, proxyTool, type ProxyMode } from './peers-mcp.js';

type Row = Record<string, unknown>;

/** One result block of an svc answer (`structuredContent`). */
export interface SvcBlock {
  entity: string;
  count: number;
  total?: number;
  /** `svc_run run_ref=<handle>` when there are more rows. */
  more?: string;
  rows: Row[];
}

/** The seeds the tasks need (one `svc_context` call opens them all). */
export const SVC_SEEDS = [
  { api: 'brewery', entity: 'Brewery' },
  { api: 'brewery', entity: 'Beer' },
  { api: 'brewery', entity: 'Review' },
  { api: 'helpdesk', entity: 'Customer' },
  { api: 'helpdesk', entity: 'Ticket' },
  { api: 'helpdesk', entity: 'Comment' },
];

export class SvcWay {
  private constructor(
    readonly agent: Agent,
    readonly ref: string,
    /** `api:Entity` -> `eN`, and `<kind> api:Entity` (e.g. `create brewery:Beer`) -> `mN`. */
    private readonly symbols: Map<string, string>,
  ) {}

  /** Open the logical session with every seed the tasks need; the wave's symbols are read from its table. */
  static async open(agent: Agent): Promise<SvcWay> {
    const r = await agent.call('svc_context', { intent: 'peers benchmark tasks', seeds: SVC_SEEDS });
    const text = contentText(r);
    if (r.isError) throw new Error(`svc_context failed: ${text.slice(0, 300)}`);
    const ref = (r.structuredContent as { logical_session_ref: string }).logical_session_ref;
    return new SvcWay(agent, ref, teachingSymbols(text));
  }

  /** The symbol for `api:Entity` or `<kind> api:Entity`. */
  sym(key: string): string {
    const s = this.symbols.get(key);
    if (!s) throw new Error(`the svc wave teaches no symbol for ${key}`);
    return s;
  }

  /** `svc` with a program; a tool error throws. */
  async program(program: string): Promise<CallToolResult> {
    return ok(await this.agent.call('svc', { logical_session_ref: this.ref, program }), 'svc');
  }

  /** `svc_run` with a pcN or page handle; a tool error throws. */
  async run(runRef: string): Promise<CallToolResult> {
    return ok(await this.agent.call('svc_run', { logical_session_ref: this.ref, run_ref: runRef }), 'svc_run');
  }

  /** The blocks of an answer, in statement order. */
  static blocks(r: CallToolResult): SvcBlock[] {
    const s = r.structuredContent as unknown as { results?: SvcBlock[] } & SvcBlock;
    return s.results ?? [s];
  }

  /** The handle of a `more` field. */
  static handle(more: string): string {
    return more.replace(/^svc_run run_ref=/, '');
  }
}

/** Rows of the teaching table: `api:Entity` -> `eN` and `<kind> api:Entity` -> `mN`. */
function teachingSymbols(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    const [form, meaning] = line.split('\t');
    if (!form || !meaning) continue;
    const entity = /^([a-z][\w-]*:\w+):/.exec(meaning);
    const e = /^(e\d+)\(/.exec(form);
    if (entity && e) out.set(entity[1]!, e[1]!);
    // A capability row names its entity by symbol once taught (`create e2: ...`), else as `api:Entity`.
    const cap = /^(\w+) ([a-z][\w-]*:\w+|e\d+)[ :]/.exec(meaning);
    const m = /\b(m\d+)\b/.exec(form);
    const capEntity = cap && /^e\d+$/.test(cap[2]!) ? [...out].find(([, sym]) => sym === cap[2])?.[0] : cap?.[2];
    if (cap && m && capEntity && !out.has(`${cap[1]} ${capEntity}`)) out.set(`${cap[1]} ${capEntity}`, m[1]!);
  }
  return out;
}

function ok(r: CallToolResult, tool: string): CallToolResult {
  if (r.isError) throw new Error(`${tool} failed: ${contentText(r).slice(0, 400)}`);
  return r;
}

/** The proxy in one mode. `request` is what an agent does to make one vendor request. */
export class ProxyWay {
  /** Paths whose schema the agent has fetched (dynamic mode asks once per path). */
  private readonly known = new Set<string>();

  constructor(
    readonly agent: Agent,
    readonly mode: ProxyMode,
    /** The proxy's tools/list result as sent. */
    private readonly toolsWire: string,
  ) {}

  /**
   * One vendor request: in default mode the endpoint's own tool with path and query parameters
   * (and body fields) as its arguments; in dynamic mode `get-api-endpoint-schema` the first time
   * a path is used, then `invoke-api-endpoint`. Answers the parsed JSON; a tool error throws.
   */
  async request(method: string, path: string, params: Row): Promise<unknown> {
    if (this.mode === 'dynamic' && !this.known.has(path)) {
      ok(await this.agent.call('get-api-endpoint-schema', { endpoint: path }), 'get-api-endpoint-schema');
      this.known.add(path);
    }
    const { name, args } = this.callFor(method, path, params);
    return JSON.parse(contentText(ok(await this.agent.call(name, args), `${method} ${path}`))) as unknown;
  }

  /** The tool call that makes one vendor request. */
  callFor(method: string, path: string, params: Row): { name: string; args: Row } {
    return this.mode === 'all'
      ? { name: proxyTool(this.toolsWire, method, path), args: params }
      : { name: 'invoke-api-endpoint', args: { endpoint: path, method, params } };
  }

  /** GET returning a list. */
  async list(path: string, params: Row): Promise<Row[]> {
    const v = await this.request('GET', path, params);
    if (!Array.isArray(v)) throw new Error(`GET ${path} answered ${JSON.stringify(v).slice(0, 200)}, not a list`);
    return v as Row[];
  }

  /**
   * GET of one row. Dynamic mode cannot call a path with a parameter (it sends `{id}` as written,
   * see docs/benchmarks.md), so there the agent filters the collection by id instead.
   */
  async one(collection: string, id: string, params: Row = {}): Promise<Row> {
    if (this.mode === 'all') return (await this.request('GET', `/${collection}/{id}`, { id, ...params })) as Row;
    const rows = await this.list(`/${collection}`, { id, ...params });
    if (rows.length !== 1) throw new Error(`GET /${collection}?id=${id} answered ${rows.length} rows`);
    return rows[0]!;
  }
}
