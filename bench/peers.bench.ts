/**
 * `peers`: what svc costs an agent per task, in o200k tokens, next to the usual OpenAPI→MCP proxy
 * (`@ivotoby/openapi-mcp-server` over `fixtures/openapi/demo-vendor.yaml`) in its default mode
 * (one tool per endpoint) and its dynamic mode (meta-tools), all in one run over one demo vendor.
 *
 * Every way is a real server reached with the official SDK `Client` (svc over Streamable HTTP,
 * the proxy as a child process over stdio). Counted per call: what the agent writes (tool name +
 * arguments JSON) and reads (the result's content as sent); the opening (tools/list, svc's
 * instructions and first `svc_context`, the dynamic proxy's endpoint list) apart from the tasks.
 * Every answer is checked against the vendor data, so no way wins by doing less.
 */
import type { Benchmark, BenchResult, Metric } from './harness.js';
import { t1Latency } from './peers-latency.js';
import {
  type Agent,
  connectProxy,
  connectSvc,
  contentText,
  sumCosts,
  tokens,
  toolsWithoutExtras,
} from './peers-mcp.js';
import { report, type WayResult } from './peers-report.js';
import { type CheckContext, TASKS, type Task, type WayName } from './peers-tasks.js';
import { truth } from './peers-truth.js';
import { ProxyWay, SvcWay } from './peers-ways.js';
import { startChild, type Child } from './processes.js';

export const benchmark: Benchmark = {
  name: 'peers',
  title: 'tokens per task: svc over MCP vs an OpenAPI→MCP proxy (one tool per endpoint; dynamic meta-tools)',
  run,
};

/** Run every task the way can run, counting each task's calls and checking its answer. */
async function runTasks(
  name: WayName,
  agent: Agent,
  doTask: (t: Task) => Promise<unknown> | undefined,
  ctx: CheckContext,
): Promise<WayResult['tasks']> {
  const out: WayResult['tasks'] = new Map();
  for (const task of TASKS) {
    const mark = agent.mark();
    const pending = doTask(task);
    if (!pending) continue;
    let error: string | undefined;
    try {
      error = await task.check(await pending, name, ctx);
    } catch (e) {
      error = (e as Error).message;
    }
    const calls = agent.costs.slice(mark);
    out.set(task.id, { cost: sumCosts(calls), calls, ...(error ? { error } : {}) });
  }
  return out;
}

async function svcWay(url: string, ctx: CheckContext): Promise<{ way: WayResult; svc: SvcWay }> {
  const agent = await connectSvc(url);
  const instructions = agent.initializeWire().instructions ?? '';
  await agent.client.listTools();
  const tools = tokens(agent.lastWire());
  const svc = await SvcWay.open(agent);
  const way: WayResult = {
    name: 'svc',
    opening: [
      ['tools/list', tools],
      ['instructions', tokens(instructions)],
      ['svc_context', sumCosts(agent.costs).total],
    ],
    openingCalls: agent.costs.length,
    tasks: await runTasks('svc', agent, (t) => t.svc?.(svc), ctx),
  };
  return { way, svc };
}

async function proxyWay(
  vendorUrl: string,
  mode: 'all' | 'dynamic',
  ctx: CheckContext,
): Promise<{ way: WayResult; proxy: ProxyWay }> {
  const name: WayName = mode === 'all' ? 'proxy default' : 'proxy dynamic';
  const agent = await connectProxy(vendorUrl, mode);
  await agent.client.listTools();
  const toolsWire = agent.lastWire();
  const opening: WayResult['opening'] = [['tools/list', tokens(toolsWire)]];
  const instructions = agent.initializeWire().instructions;
  if (instructions) opening.push(['instructions', tokens(instructions)]);
  if (mode === 'dynamic') {
    const r = await agent.call('list-api-endpoints', {});
    if (r.isError) throw new Error(`list-api-endpoints failed: ${contentText(r)}`);
    opening.push(['list-api-endpoints', sumCosts(agent.costs).total]);
  }
  const proxy = new ProxyWay(agent, mode, toolsWire);
  const way: WayResult = {
    name,
    opening,
    openingCalls: agent.costs.length,
    ...(mode === 'all' ? { toolsPlain: toolsWithoutExtras(toolsWire) } : {}),
    tasks: await runTasks(name, agent, (t) => t.proxy(proxy), ctx),
  };
  return { way, proxy };
}

async function run(): Promise<BenchResult> {
  const vendor = await startChild('vendor');
  let svcChild: Child | undefined;
  const agents: Agent[] = [];
  try {
    svcChild = await startChild('svc', [vendor.url]);
    const ctx: CheckContext = { vendorUrl: vendor.url, want: truth() };
    const s = await svcWay(svcChild.url, ctx);
    agents.push(s.svc.agent);
    const all = await proxyWay(vendor.url, 'all', ctx);
    agents.push(all.proxy.agent);
    const dynamic = await proxyWay(vendor.url, 'dynamic', ctx);
    agents.push(dynamic.proxy.agent);
    const probe = await dynamicPathProbe(dynamic.proxy, vendor);
    const latency = await t1Latency(vendor.url, s.svc, all.proxy, dynamic.proxy);
    return report([s.way, all.way, dynamic.way], [probe, ...latency.metrics]);
  } finally {
    for (const a of agents) await a.close();
    await svcChild?.stop();
    await vendor.stop();
  }
}

/** What the dynamic proxy does with an endpoint that has a path parameter (GET /breweries/{id}). */
async function dynamicPathProbe(p: ProxyWay, vendor: Child): Promise<Metric> {
  const mark = p.agent.mark();
  await p.agent.call('get-api-endpoint-schema', { endpoint: '/breweries/{id}' });
  const tries = [
    { endpoint: '/breweries/{id}', method: 'GET', params: { id: 'b-3' } },
    { endpoint: '/breweries/b-3', method: 'GET', params: {} },
  ];
  const answers: string[] = [];
  for (const args of tries) {
    const before = (await vendor.usage()).requests;
    const r = await p.agent.call('invoke-api-endpoint', args);
    const usage = await vendor.usage();
    const sent = usage.requests > before ? `vendor got GET ${usage.lastTargets.at(-1)}` : 'no vendor request';
    answers.push(
      `${JSON.stringify(args)} -> ${r.isError ? 'error' : 'ok'} "${contentText(r).slice(0, 100)}" (${sent})`,
    );
  }
  const c = sumCosts(p.agent.costs.slice(mark));
  return {
    label: 'dynamic: GET /breweries/{id}',
    value: c.total,
    unit: 'count',
    note: `tokens of the failed tries, not in the totals (schema + ${tries.length} invokes): ${answers.join('; ')}`,
  };
}
