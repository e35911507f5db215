/**
 * What the MCP surface costs an agent's context, in o200k tokens (`gpt-tokenizer`, the encoding
 * of the GPT-4o / GPT-5 family): the `tools/list` result, the initialize `instructions`, and the
 * first `svc_context` wave of each demo catalog (seeds = every entity of the catalog, one call)
 * and of both catalogs together (one call with all their seeds).
 *
 * Everything counted comes from a real svc server (child process, over the demo vendor, as for
 * `server` and `mcp`) through the official SDK `Client` + `StreamableHTTPClientTransport`; nothing
 * is recomputed offline. Each wave runs on a fresh MCP connection with its own intent, so it is a
 * first wave. For a wave two figures: the text content (what a host hands the model) and the whole
 * tool result as JSON (content + structuredContent + _meta, for hosts that pass everything).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import type { Benchmark, BenchResult, Check, Metric } from './harness.js';
import { startChild, type Child } from './processes.js';
import { readMetrics, type Counted } from './tokens-read.js';

export const benchmark: Benchmark = {
  name: 'tokens',
  title: 'MCP context cost in o200k tokens: tools/list, instructions, first svc_context wave per catalog',
  run,
};

const CATALOGS = ['brewery', 'helpdesk'];

interface Conn {
  client: Client;
  /** The result of the last answer to `method` exactly as sent (the JSON text of the wire message's `result`). */
  wire(method: string): Promise<string>;
  close(): Promise<void>;
}

/**
 * Connect an SDK client whose fetch keeps a copy of every answer to a POST: the SDK's schemas
 * re-order the keys of what they parse, so the counts are taken from the wire text, not from
 * the parsed result.
 */
async function connect(url: string): Promise<Conn> {
  const client = new Client({ name: 'svc-bench-tokens', version: '1.0.0' });
  const seen = new Map<string, string>();
  const pending: Array<Promise<void>> = [];
  const recording = async (input: string | URL, init?: RequestInit): Promise<Response> => {
    const res = await fetch(input, init);
    if (init?.method === 'POST' && typeof init.body === 'string' && res.ok) {
      const sent = JSON.parse(init.body) as { method?: string; id?: unknown };
      if (sent.method !== undefined && sent.id !== undefined) {
        const copy = res.clone();
        pending.push(
          copy.text().then((text) => {
            const data = text.startsWith('{')
              ? [text]
              : text
                  .split('\n')
                  .filter((l) => l.startsWith('data:'))
                  .map((l) => l.slice(5).trim());
            for (const d of data) {
              const m = JSON.parse(d) as { id?: unknown; result?: unknown };
              if (m.id === sent.id && m.result !== undefined) seen.set(sent.method!, JSON.stringify(m.result));
            }
          }),
        );
      }
    }
    return res;
  };
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { fetch: recording });
  await client.connect(transport);
  return {
    client,
    wire: async (method) => {
      await Promise.all(pending);
      const text = seen.get(method);
      if (text === undefined) throw new Error(`no answer to ${method} was recorded`);
      return text;
    },
    close: async () => {
      await transport.terminateSession().catch(() => undefined);
      await client.close().catch(() => undefined);
    },
  };
}

const textOf = (r: CallToolResult) =>
  r.content
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('\n');

const count = (s: string): Counted => ({ tokens: countTokens(s), chars: s.length });

interface Wave {
  name: string;
  seeds: Array<{ api: string; entity: string }>;
  text: Counted;
  json: Counted;
  /** Rows of the teaching table (form TAB meaning lines). */
  rows: number;
  /** Seeds whose api:Entity the text does not name. */
  missing: string[];
}

async function wave(url: string, name: string, seeds: Wave['seeds']): Promise<Wave> {
  const c = await connect(url);
  try {
    const r = (await c.client.callTool({
      name: 'svc_context',
      arguments: { intent: `token count: ${name}`, seeds },
    })) as CallToolResult;
    const text = textOf(r);
    if (r.isError) throw new Error(`svc_context (${name}) failed: ${text.slice(0, 300)}`);
    return {
      name,
      seeds,
      text: count(text),
      json: count(await c.wire('tools/call')),
      rows: text.split('\n').filter((l) => !l.startsWith('#') && l.includes('\t') && !l.startsWith('form\t')).length,
      missing: seeds.map((s) => `${s.api}:${s.entity}`).filter((s) => !text.includes(s)),
    };
  } finally {
    await c.close();
  }
}

const fmtCount = (c: Counted) => `${c.tokens.toLocaleString('en')} tokens (${c.chars.toLocaleString('en')} chars)`;

async function run(): Promise<BenchResult> {
  const vendor = await startChild('vendor');
  let svc: Child | undefined;
  try {
    svc = await startChild('svc', [vendor.url]);
    // The catalogs' entities, as the server lists them.
    const reg = (await (await fetch(`${svc.url}/v1/registry`, { headers: { accept: 'application/json' } })).json()) as {
      entries: Array<{ entry_id: string; entities: string[] }>;
    };
    const entities = (api: string) => {
      const e = reg.entries.find((x) => x.entry_id === api);
      if (!e) throw new Error(`the server has no catalog ${api}`);
      return e.entities.map((entity) => ({ api, entity }));
    };

    const c = await connect(svc.url);
    let tools: Counted;
    let toolCount: number;
    let instructions: Counted;
    try {
      const init = JSON.parse(await c.wire('initialize')) as { instructions?: string };
      if (init.instructions !== c.client.getInstructions()) throw new Error('the instructions differ on the wire');
      instructions = count(init.instructions ?? '');
      toolCount = (await c.client.listTools()).tools.length;
      tools = count(await c.wire('tools/list'));
    } finally {
      await c.close();
    }
    const waves: Wave[] = [];
    for (const api of CATALOGS) waves.push(await wave(svc.url, api, entities(api)));
    waves.push(await wave(svc.url, CATALOGS.join(' + '), CATALOGS.flatMap(entities)));

    const perConnection = tools.tokens + instructions.tokens;
    const metrics: Metric[] = [
      {
        label: 'tools/list result (JSON)',
        value: tools.tokens,
        unit: 'count',
        note: `${fmtCount(tools)}; ${toolCount} tools`,
      },
      { label: 'initialize instructions', value: instructions.tokens, unit: 'count', note: fmtCount(instructions) },
      {
        label: 'per connection',
        value: perConnection,
        unit: 'count',
        note: 'tools/list + instructions, sent on every connection',
      },
      ...waves.flatMap((w): Metric[] => [
        {
          label: `wave ${w.name}: text`,
          value: w.text.tokens,
          unit: 'count',
          note: `${fmtCount(w.text)}; ${w.seeds.length} seeds (${w.seeds.map((s) => s.entity).join(', ')}), ${w.rows} table rows`,
        },
        {
          label: `wave ${w.name}: whole result`,
          value: w.json.tokens,
          unit: 'count',
          note: `${fmtCount(w.json)} (content + structuredContent + _meta as JSON)`,
        },
        {
          label: `first turn ${w.name}`,
          value: perConnection + w.text.tokens,
          unit: 'count',
          note: 'tools/list + instructions + wave text',
        },
      ]),
    ];
    const sum = waves
      .slice(0, CATALOGS.length)
      .map((w) => w.text.tokens)
      .reduce((a, b) => a + b, 0);
    const both = waves[waves.length - 1]!;
    metrics.push({
      label: 'both in one wave vs two',
      value: sum - both.text.tokens,
      unit: 'count',
      note: `tokens saved by one wave (${both.text.tokens}) over the two single-catalog waves (${sum}): the rules are sent once`,
    });
    const read = await readMetrics(svc.url, count);
    metrics.push(...read.metrics);
    const missing = waves.flatMap((w) => w.missing.map((m) => `${w.name}: ${m}`));
    const checks: Check[] = [
      ...read.checks,
      {
        target: 'every wave teaches every seed (its api:Entity appears in the table)',
        pass: missing.length === 0,
        actual: missing.length ? `missing ${missing.join(', ')}` : `${waves.length} waves, all seeds present`,
      },
    ];
    return { metrics, checks };
  } finally {
    await svc?.stop();
    await vendor.stop();
  }
}
