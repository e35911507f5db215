/**
 * What each way adds to T1 (the first 25 available beers) over asking the vendor directly: p50 of
 * 20 measured rounds after 3 warm-up rounds, the four sides next to each other in every round (the
 * order reversed every other round). These calls are not counted as tokens. svc is reached over
 * Streamable HTTP, the proxy over stdio (its own child process), so the transports differ too.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { fmtMs, median, type Metric } from './harness.js';
import { contentText } from './peers-mcp.js';
import { TASK } from './peers-truth.js';
import type { ProxyWay, SvcWay } from './peers-ways.js';

const WARMUP = 3;
const ROUNDS = 20;

export interface Latency {
  metrics: Metric[];
}

interface Side {
  name: string;
  /** One request; answers the number of rows it got. */
  once(): Promise<number>;
  samples: number[];
}

/** The q-quantile (nearest rank). */
function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}

export async function t1Latency(vendorUrl: string, s: SvcWay, def: ProxyWay, dyn: ProxyWay): Promise<Latency> {
  const program = `${s.sym('brewery:Beer')}(available=true)[${TASK.t1Fields.join(',')}]`;
  const proxySide = (name: string, w: ProxyWay): Side => {
    const { name: tool, args } = w.callFor('GET', '/beers', { available: true, _limit: 25 });
    return {
      name,
      samples: [],
      once: async () => {
        const r = (await w.agent.client.callTool({ name: tool, arguments: args })) as CallToolResult;
        return (JSON.parse(contentText(r)) as unknown[]).length;
      },
    };
  };
  const sides: Side[] = [
    {
      name: 'direct',
      samples: [],
      once: async () => {
        const res = await fetch(`${vendorUrl}/beers?available=true&_limit=25`);
        return ((await res.json()) as unknown[]).length;
      },
    },
    {
      name: 'svc',
      samples: [],
      once: async () => {
        const r = await s.agent.client.callTool({ name: 'svc', arguments: { logical_session_ref: s.ref, program } });
        return (r.structuredContent as { count: number }).count;
      },
    },
    proxySide('proxy default', def),
    proxySide('proxy dynamic', dyn),
  ];
  for (let round = 0; round < WARMUP + ROUNDS; round++) {
    const order = round % 2 ? [...sides].reverse() : sides;
    for (const side of order) {
      const t0 = performance.now();
      const rows = await side.once();
      const dt = performance.now() - t0;
      if (rows !== 25) throw new Error(`T1 latency: ${side.name} got ${rows} rows, want 25`);
      if (round >= WARMUP) side.samples.push(dt);
    }
  }
  const direct = median(sides[0]!.samples);
  return {
    metrics: sides.map((side) => {
      const p50 = median(side.samples);
      return {
        label: `T1 latency p50 ${side.name}`,
        value: p50,
        unit: 'ms',
        note:
          (side.name === 'direct'
            ? 'GET /beers?available=true&_limit=25 on the vendor (fetch)'
            : `adds ${fmtMs(p50 - direct)} over direct`) +
          `; p90 ${fmtMs(quantile(side.samples, 0.9))}, n=${side.samples.length} after ${WARMUP} warm-up rounds`,
      };
    }),
  };
}
