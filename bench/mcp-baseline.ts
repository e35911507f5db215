/**
 * The A/B part of the `mcp` benchmark: with `SVC_BENCH_BASELINE=<dir>` (a build of another
 * revision, `<dir>/dist/bench/serve-child.js`, as for `hotpath`), svc of that build runs next to
 * this one against the same vendor, and every svc side of every round runs a block on each build
 * (the build that goes first alternates by round), so both see the same machine. These metrics
 * compare the two: svc's own share of a read (arrival to answer minus its vendor call), its CPU
 * per call, and the latencies the clients saw.
 */
import type { Metric } from './harness.js';
import type { Side, Summary } from './mcp.bench.js';

const fmt = (ms: number) => `${ms.toFixed(2)} ms`;
const us = (ms: number) => `${(ms * 1000).toFixed(0)} µs`;
const signed = (ms: number, unit: (x: number) => string) => `${ms >= 0 ? '+' : '−'}${unit(Math.abs(ms))}`;

/** svc's own share of a read: its arrival to answer minus its vendor call (medians of the blocks). */
export const ownShare = (x: Summary): number => x.svcHandler - x.svcCall;

/** This build (`now`) against the baseline (`base`), side by side. */
export function baselineMetrics(now: Record<Side, Summary>, base: Record<Side, Summary>, dir: string): Metric[] {
  const gap = (s: Record<Side, Summary>) => ownShare(s.mcp) - ownShare(s.http);
  const gapRaw = (s: Record<Side, Summary>) => ownShare(s['mcp-raw']) - ownShare(s.http);
  const line = (side: Side, what: (x: Summary) => number, unit: (x: number) => string) =>
    `baseline ${unit(what(base[side]))}, ${signed(what(now[side]) - what(base[side]), unit)}`;
  return [
    {
      label: 'A/B: own share MCP − HTTP',
      value: gap(now),
      unit: 'ms',
      note: `SDK client blocks; baseline ${fmt(gap(base))} (${signed(gap(now) - gap(base), fmt)}); plain fetch ${fmt(gapRaw(now))}, baseline ${fmt(gapRaw(base))}; baseline: ${dir}`,
    },
    {
      label: 'A/B: own share, MCP read',
      value: ownShare(now.mcp),
      unit: 'ms',
      note: `${line('mcp', ownShare, fmt)}; HTTP read ${fmt(ownShare(now.http))}, ${line('http', ownShare, fmt)}`,
    },
    {
      label: 'A/B: svc CPU per MCP read',
      value: now.mcp.svcCpu * 1000,
      unit: 'us',
      note: `${line('mcp', (x) => x.svcCpu, us)}; plain fetch ${us(now['mcp-raw'].svcCpu)}, ${line('mcp-raw', (x) => x.svcCpu, us)}; HTTP read ${us(now.http.svcCpu)}, ${line('http', (x) => x.svcCpu, us)}`,
    },
    {
      label: 'A/B: svc CPU per MCP ping',
      value: now['ping-raw'].svcCpu * 1000,
      unit: 'us',
      note: `plain fetch; ${line('ping-raw', (x) => x.svcCpu, us)}; arrival to answer ${fmt(now['ping-raw'].svcHandler)}, ${line('ping-raw', (x) => x.svcHandler, fmt)}`,
    },
    {
      label: 'A/B: p50 MCP read (SDK)',
      value: now.mcp.p50,
      unit: 'ms',
      note: `${line('mcp', (x) => x.p50, fmt)}; plain fetch ${fmt(now['mcp-raw'].p50)}, ${line('mcp-raw', (x) => x.p50, fmt)}; HTTP ${fmt(now.http.p50)}, ${line('http', (x) => x.p50, fmt)}`,
    },
  ];
}
