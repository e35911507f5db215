/**
 * Clients of other SDKs: the whole flow written as raw JSON-RPC over fetch, the way a client that
 * is not the TypeScript SDK speaks Streamable HTTP (the Python `mcp` client cannot be installed
 * here: no PyPI). Each protocol revision a current client may negotiate is tried: initialize, the
 * initialized notification (202: it is a notification), tools/list, svc_context, svc and DELETE;
 * a request is never answered 202, and the server answers the revision the client asked for.
 */
import t from 'tap';
import { startStack } from '../../_helpers/server.js';
import { rawMcp } from './_shared.js';

const stack = await startStack(t);

for (const version of ['2025-03-26', '2025-06-18', '2025-11-25']) {
  t.test(`a raw client negotiating ${version} runs the whole flow`, async (t) => {
    const init = await rawMcp(
      stack.url,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'other-sdk', version: '0.1' } },
      }),
    );
    t.equal(init.status, 200, 'initialize: 200');
    const sid = init.headers.get('mcp-session-id');
    t.ok(sid, 'a session id');
    t.equal(init.message?.result?.protocolVersion, version, 'the revision the client asked for');
    t.match(init.message?.result?.instructions, /svc_context/, 'instructions');
    const h = { 'mcp-session-id': sid!, 'mcp-protocol-version': version };
    const note = await rawMcp(stack.url, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), h);
    t.equal(note.status, 202, 'a notification: 202');
    let id = 2;
    const call = async (method: string, params: Record<string, unknown>) => {
      const a = await rawMcp(stack.url, JSON.stringify({ jsonrpc: '2.0', id: id++, method, params }), h);
      t.not(a.status, 202, `${method} is a request: never 202`);
      t.equal(a.status, 200, `${method}: 200`);
      return a.message?.result as Record<string, any>;
    };
    const list = await call('tools/list', {});
    t.ok(
      (list.tools as Array<{ name: string }>).some((x) => x.name === 'svc'),
      'tools/list names svc',
    );
    const ctx = await call('tools/call', {
      name: 'svc_context',
      arguments: { intent: 'interop', seeds: [{ api: 'brewery', entity: 'Beer' }] },
    });
    const ref = ctx._meta?.svc?.logical_session_ref as string;
    t.match(ref, /^l_[A-Za-z0-9]{16}$/, 'a logical session ref');
    const read = await call('tools/call', { name: 'svc', arguments: { logical_session_ref: ref, program: 'e1[id]' } });
    t.notOk(read.isError, 'a clean read');
    t.equal((read.structuredContent as { rows: unknown[] }).rows.length, 25, '25 rows inline');
    const del = await rawMcp(stack.url, undefined, h, 'DELETE');
    t.equal(del.status, 200, 'DELETE ends the session');
    const after = await rawMcp(stack.url, JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'ping' }), h);
    t.equal(after.status, 404, 'the ended session is unknown');
  });
}
