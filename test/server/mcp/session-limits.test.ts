/**
 * An `initialize` flood does not lock MCP out (hardening issue 41, item 6), over real sockets
 * against the real svc server: raw POSTs flood `/mcp`, and the official SDK client must still
 * connect afterwards. With the default settings the flood from one address is rate limited (429
 * with `Retry-After`) and a new client connects once the bucket refilled; with the limiter off
 * the cap makes room by closing fresh sessions (never used after initialize) before established
 * ones, so 1,100 initializes leave room for a new client at once. Fresh sessions expire after the
 * short fresh idle limit; a signed-in session is never closed to make room (the cap then answers
 * 503). A second client address has its own bucket.
 */
import t, { type Test } from 'tap';
import { request } from 'node:http';
import { startDemoVendor } from '../../../cli/demo-vendor.js';
import { DEFAULT_LIMITS } from '../../../server/limits.js';
import { call, startStack } from '../../_helpers/server.js';
import { connectMcp, openLogical, textOf } from '../../_helpers/mcp.js';
import { inbound, INIT, KEY_ACME, rawMcp, rawSession, rowsOf, sleep, until } from './_shared.js';

const vendor = await startDemoVendor();
t.teardown(() => vendor.close());
const LIST = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list' });
const BEER = { api: 'brewery', entity: 'Beer' };

/** `n` raw initializes, `width` at a time; the status of each and the last 429's answer. */
async function flood(base: string, n: number, width = 16) {
  const statuses = new Map<number, number>();
  let refused: Awaited<ReturnType<typeof rawMcp>> | undefined;
  let sent = 0;
  const worker = async () => {
    while (sent < n) {
      sent++;
      const a = await rawMcp(base, JSON.stringify(INIT));
      statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
      if (a.status === 429) refused = a;
    }
  };
  await Promise.all(Array.from({ length: width }, worker));
  return { statuses, refused };
}

/** A new SDK client connects and a read through it works. */
async function newClientWorks(t: Test, base: string, what: string): Promise<void> {
  const c = await connectMcp(t, base);
  const { ref } = await openLogical(c, [BEER], what);
  const r = await c.tool('svc', { logical_session_ref: ref, program: 'e1[id]' });
  t.notOk(r.isError, `${what}: ${textOf(r).slice(0, 200)}`);
  t.equal(rowsOf(r).length, 25, `${what}: the new client reads`);
}

t.test(
  'default settings: 1,100 initializes from one address are rate limited; then a new client connects',
  async (t) => {
    const s = await startStack(t, { vendorUrl: vendor.url });
    const { statuses, refused } = await flood(s.url, 1_100);
    t.notOk(statuses.has(503), 'no initialize meets a full cap');
    t.equal((statuses.get(200) ?? 0) + (statuses.get(429) ?? 0), 1_100, 'each is opened or rate limited');
    t.ok((statuses.get(200) ?? 0) >= DEFAULT_LIMITS.mcpNewSessionsPerMin, 'a minute of sessions opens at once');
    t.ok((statuses.get(429) ?? 0) > 0, 'the rest is refused');
    t.equal(refused?.message?.jsonrpc, '2.0', '429 with a JSON-RPC error');
    t.equal(refused?.message?.id, null);
    t.type(refused?.message?.error?.code, 'number');
    t.match(refused?.message?.error?.message, /too many new MCP sessions.*SVC_MCP_NEW_SESSIONS_PER_MIN/);
    const retry = Number(refused?.headers.get('retry-after'));
    t.ok(retry >= 1 && retry <= 60, `Retry-After in seconds (${retry})`);
    t.notOk(refused?.headers.get('mcp-session-id'), 'no session for a refused initialize');
    t.ok((await call(s.url, '/v1/health')).body.mcp_sessions < DEFAULT_LIMITS.maxMcpSessions, 'the cap is not full');
    await sleep(retry * 1000);
    await newClientWorks(t, s.url, 'after the flood');
  },
);

t.test(
  'limiter off: 1,100 initializes evict fresh sessions, not used ones; a new client connects at once',
  async (t) => {
    const s = await startStack(t, { vendorUrl: vendor.url, limits: { mcpNewSessionsPerMin: 0 } });
    const used = await connectMcp(t, s.url);
    const { ref } = await openLogical(used, [BEER], 'before the flood');
    const { statuses } = await flood(s.url, 1_100);
    t.same([...statuses], [[200, 1_100]], 'every initialize opens a session');
    const held = (await call(s.url, '/v1/health')).body.mcp_sessions as number;
    t.ok(held <= DEFAULT_LIMITS.maxMcpSessions, `the cap holds (${held} sessions)`);
    await newClientWorks(t, s.url, 'after 1,100 initializes');
    const r = await used.tool('svc', { logical_session_ref: ref, program: 'e1[id]' });
    t.notOk(r.isError, 'the session used before the flood still works');
  },
);

t.test('a session never used after initialize expires after the fresh idle limit; a used one stays', async (t) => {
  const s = await startStack(t, { vendorUrl: vendor.url, limits: { mcpFreshIdleMs: 1_500 } });
  const init = await rawMcp(s.url, JSON.stringify(INIT)); // never sends notifications/initialized
  const half = { 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-06-18' };
  const fresh = await rawSession(s.url); // initialized, no request
  const used = await rawSession(s.url);
  t.equal((await rawMcp(s.url, LIST(1), used.headers)).status, 200, 'a request: the session is in use');
  t.equal((await call(s.url, '/v1/health')).body.mcp_sessions, 3);
  await until('the fresh sessions to be closed', async () => (await call(s.url, '/v1/health')).body.mcp_sessions === 1);
  t.equal((await rawMcp(s.url, LIST(2), half)).status, 404, 'initialize only: closed');
  t.equal((await rawMcp(s.url, LIST(3), fresh.headers)).status, 404, 'initialized, nothing asked: closed');
  t.equal((await rawMcp(s.url, LIST(4), used.headers)).status, 200, 'the used one is open');
  t.ok(DEFAULT_LIMITS.mcpFreshIdleMs <= 30_000, 'by default a fresh session goes within a minute');
});

t.test('at the cap: fresh before used, least recently used first; signed-in sessions are never closed', async (t) => {
  let clock = Date.now();
  const s = await startStack(t, {
    vendorUrl: vendor.url,
    auth: inbound('optional'),
    limits: { maxMcpSessions: 2 },
    now: () => clock,
  });
  const used = await rawSession(s.url);
  t.equal((await rawMcp(s.url, LIST(1), used.headers)).status, 200);
  clock += 1_000;
  const fresh = await rawSession(s.url);
  const third = await rawSession(s.url);
  t.equal((await rawMcp(s.url, LIST(2), fresh.headers)).status, 404, 'the fresh session made room');
  t.equal((await rawMcp(s.url, LIST(3), used.headers)).status, 200, 'the used one, older, stays');
  clock += 1_000;
  await rawSession(s.url);
  t.equal((await rawMcp(s.url, LIST(4), third.headers)).status, 404, 'the next fresh one made room');

  const auth = (id: number) =>
    JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'svc_incoming_auth', arguments: { api_key: KEY_ACME } },
    });
  const a = await rawSession(s.url);
  t.notOk((await rawMcp(s.url, auth(5), a.headers)).message?.result?.isError, 'signed in');
  const b = await rawSession(s.url);
  t.notOk((await rawMcp(s.url, auth(6), b.headers)).message?.result?.isError, 'signed in');
  const full = await rawMcp(s.url, JSON.stringify(INIT));
  t.equal(full.status, 503, 'only signed-in sessions: a new one is refused');
  t.equal(full.headers.get('retry-after'), '60');
  t.match(full.message?.error?.message, /cap/);
  t.equal((await rawMcp(s.url, LIST(7), a.headers)).status, 200, 'the signed-in sessions work');
  t.equal((await rawMcp(s.url, LIST(8), b.headers)).status, 200);
});

/** A raw initialize sent from `localAddress` (any 127.x address reaches the server on loopback). */
function initializeFrom(base: string, localAddress: string): Promise<number> {
  const body = JSON.stringify(INIT);
  return new Promise((resolve, reject) => {
    const req = request(
      `${base}/mcp`,
      {
        method: 'POST',
        localAddress,
        headers: {
          accept: 'application/json, text/event-stream',
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

t.test('the limit is per client address', async (t) => {
  const s = await startStack(t, { vendorUrl: vendor.url, limits: { mcpNewSessionsPerMin: 3 } });
  const first: number[] = [];
  for (let i = 0; i < 4; i++) first.push(await initializeFrom(s.url, '127.0.0.1'));
  t.same(first, [200, 200, 200, 429], 'three a minute from 127.0.0.1');
  t.equal(await initializeFrom(s.url, '127.0.0.2'), 200, '127.0.0.2 has its own bucket');
});
