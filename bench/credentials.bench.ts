/**
 * What resolving outbound credentials costs per vendor call on the cached path: the resolver's
 * work for one call (find the credential, apply it to a request) with the environment only, vs a
 * credentials file (a user's bearer token, a tenant's OAuth2 client-credentials token already
 * cached), in interleaved rounds of one run; and whole one-step reads through executePlan against
 * a local vendor, environment vs credentials file, interleaved. Target: < 20 µs added per call.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { compileProgram } from '../compiler/index.js';
import { compileSource, Registry, type OutboundAuth } from '../pack/index.js';
import {
  AuthResolver,
  executePlan,
  parseCredentials,
  PooledHttpClient,
  type Caller,
  type CredentialsConfig,
  type HttpRequest,
} from '../runtime/index.js';
import { median, shuffler, type Benchmark, type BenchResult } from './harness.js';

export const benchmark: Benchmark = {
  name: 'credentials',
  title: 'outbound credentials per vendor call: environment only vs a credentials file (cached path)',
  run,
};

const catalog = (auth: string) => `
catalog: {entry_id: fast, version: 1, label: Fast vendor, description: A local vendor, backend: {url: "http://127.0.0.1:1"}, auth: ${auth}}
entities:
  Item: {description: An item., fields: {id: integer, name: string}}
capabilities:
  listItems: {kind: query, entity: Item, description: Items., params: [name]}
mappings:
  listItems: {method: GET, path: /items, query: [name]}
`;

/** A config of 200 tenants with 5 users each (the resolver's maps are not trivially small). */
function config(auths: Map<string, OutboundAuth>, tokenUrl: string): CredentialsConfig {
  const tenants: Record<string, unknown> = {};
  for (let i = 0; i < 200; i++) {
    const users: Record<string, unknown> = {};
    for (let u = 0; u < 5; u++)
      users[`u${u}`] = { credentials: { fast: { scheme: 'bearer', token: `tok-${i}-${u}` } } };
    tenants[`t${i}`] = {
      credentials: {
        fast: { scheme: 'oauth2_client_credentials', client_id: `c${i}`, client_secret: 's', token_url: tokenUrl },
      },
      users,
    };
  }
  const text = parseCredentials({ tenants }, auths);
  return { entries: {}, tenants: text.tenants };
}

async function run(): Promise<BenchResult> {
  const rows = JSON.stringify([{ id: 1, name: 'a' }]);
  const server = createServer((req, res) => {
    if (req.method === 'POST')
      return void res.end(JSON.stringify({ access_token: 'at-0123456789', token_type: 'bearer', expires_in: 86400 }));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(rows);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const http = new PooledHttpClient();
  try {
    const c = compileSource([{ file: 'fast.yaml', text: catalog('{scheme: bearer, env: FAST_TOKEN}') }]);
    if (!c.cgs || !c.cgs_hash) throw new Error(JSON.stringify(c.diagnostics));
    const auth = c.cgs.auth as Exclude<OutboundAuth, { scheme: 'none' }>;
    const registry = new Registry([
      {
        entry_id: 'fast',
        label: 'Fast',
        tags: [],
        version: 1,
        cgs: c.cgs,
        cgs_hash: c.cgs_hash,
        base_url: url,
        artifact: 'fast',
      },
    ]);
    const env = { FAST_TOKEN: 'env-token-0123456789' };
    const cfg = config(new Map([['fast', auth]]), `${url}/token`);
    const envOnly = new AuthResolver(env, http);
    const filed = new AuthResolver(env, http, Date.now, { config: cfg });
    const user: Caller = { tenant: 't150', subject: 'u3' };
    const tenant: Caller = { tenant: 't77' };
    const anon: Caller = { tenant: '' };
    const req = (): HttpRequest => ({ method: 'GET', url: `${url}/items`, headers: { accept: 'application/json' } });

    /** One call's resolver work: find the credential, then apply it to a copy of the request. */
    const resolveOnce = async (r: AuthResolver, who: Caller) => {
      const s = r.source('fast', auth, who);
      if (!s || 'code' in s) throw new Error('no credential');
      await r.apply(s, auth, req());
    };
    await resolveOnce(filed, tenant); // fetches and caches the tenant's OAuth2 token
    const micro: Array<[string, () => Promise<void>, number[]]> = [
      ['environment', () => resolveOnce(envOnly, anon), []],
      ['file: user bearer', () => resolveOnce(filed, user), []],
      ['file: tenant OAuth2 (cached)', () => resolveOnce(filed, tenant), []],
    ];
    const shuffle = shuffler(17);
    const order = micro.map((_, i) => i);
    const n = 20_000;
    for (let round = 0; round < 12; round++) {
      shuffle(order);
      for (const i of order) {
        const [, fn, out] = micro[i]!;
        const t0 = process.hrtime.bigint();
        for (let k = 0; k < n; k++) await fn();
        if (round >= 2) out.push(Number(process.hrtime.bigint() - t0) / 1000 / n);
      }
    }

    // Whole reads: the same one-step plan with each resolver and caller.
    const plan = compileProgram('fast:Item(name="a")', { registry });
    if (plan.kind !== 'plan') throw new Error('benchmark program does not compile');
    const read = async (r: AuthResolver, who: Caller) => {
      const x = await executePlan(plan.plan, registry, { http, env, auth: r, caller: who });
      if (x.status !== 'succeeded') throw new Error(JSON.stringify(x.errors));
    };
    const whole: Array<[string, () => Promise<void>, number[]]> = [
      ['read, environment', () => read(envOnly, anon), []],
      ['read, file: tenant OAuth2', () => read(filed, tenant), []],
    ];
    const m = 400;
    for (let round = 0; round < 11; round++) {
      for (const i of round % 2 ? [1, 0] : [0, 1]) {
        const [, fn, out] = whole[i]!;
        const t0 = process.hrtime.bigint();
        for (let k = 0; k < m; k++) await fn();
        if (round >= 1) out.push(Number(process.hrtime.bigint() - t0) / 1000 / m);
      }
    }
    const med = micro.map(([label, , xs]) => ({ label, v: median(xs) }));
    const base = med[0]!.v;
    const worst = Math.max(...med.slice(1).map((x) => x.v - base));
    const wholeMed = whole.map(([label, , xs]) => ({ label, v: median(xs) }));
    const wholeAdded = wholeMed[1]!.v - wholeMed[0]!.v;
    return {
      metrics: [
        ...med.map((x) => ({ label: `resolve + apply, ${x.label}`, value: x.v, unit: 'us' as const })),
        ...wholeMed.map((x) => ({ label: x.label, value: x.v, unit: 'us' as const })),
        { label: 'whole read: file - environment', value: wholeAdded, unit: 'us' },
      ],
      checks: [
        {
          target: 'resolving credentials from the file adds < 20 µs per vendor call (cached path)',
          pass: worst < 20,
          actual: `${worst.toFixed(2)} µs over the environment-only path (resolver work); whole read ${wholeAdded.toFixed(1)} µs`,
        },
      ],
    };
  } finally {
    await http.close();
    server.close();
  }
}
