/**
 * A parameter sent in a header (issue 41 item 11): a value with CR, LF or another character an
 * HTTP field value cannot carry is refused before any vendor call as `bad_arguments` (400) naming
 * the parameter, with a hint: a program's literal (live and dry-run), a resolved plan's literal,
 * and a value bound from a vendor row. It was a 502 `vendor_unreachable` (the HTTP client refused
 * to send the header). A clean value still goes out in the header. Over real sockets: the svc
 * server, a recording vendor, and a brewery catalog whose listBreweries sends `trace` as X-Trace.
 */
import t, { type Test } from 'tap';
import { compileProgram, SymbolTable, type SymbolTableJson } from '../../compiler/index.js';
import { RESOLVED_PLAN_TYPE } from '../../server/execute/resolved-plan.js';
import { packedCatalog } from '../_helpers/catalog-copy.js';
import { startFaultVendor } from '../_helpers/fault-vendor.js';
import { call, codeOf, openSession, runProgram, startStack, type Answer } from '../_helpers/server.js';

/** The brewery catalog with a `trace` parameter of listBreweries sent as the X-Trace header, packed into a directory. */
async function traceCatalog(t: Test): Promise<string> {
  return packedCatalog(t, 'brewery', [
    {
      file: 'capabilities.yaml',
      from: '    params: [city, country, kind]\n',
      to: '    params:\n      city: null\n      country: null\n      kind: null\n      trace: {type: string, description: A trace id sent as X-Trace}\n',
    },
    {
      file: 'mappings.yaml',
      from: '    path: /breweries\n    pagination: {style: link',
      to: '    path: /breweries\n    headers: {X-Trace: "{trace}"}\n    pagination: {style: link',
    },
  ]);
}

function refused(t: Test, a: Answer, what: string): void {
  t.equal(a.status, 400, `${what}: ${a.text}`);
  t.equal(codeOf(a), 'bad_arguments', what);
  const err = (a.body.errors as Array<{ message: string; hint?: string }>)[0]!;
  t.match(err.message, /`trace` of listBreweries is sent in the X-Trace header and holds CR \(U\+000D\)/, what);
  t.match(err.hint, /without line breaks/, what);
}

t.test('a header parameter with a line break is bad_arguments before any call', async (t) => {
  const vendor = await startFaultVendor({
    'GET /breweries': (req) => ({
      headers: { 'x-total-count': '1' },
      json: req.query.get('city') === 'Injected' ? [{ id: 'b-1', name: 'Evil\r\nX-Admin: 1', city: 'Injected' }] : [],
    }),
  });
  t.teardown(() => vendor.close());
  const stack = await startStack(t, { vendorUrl: vendor.url, catalogDir: await traceCatalog(t) });
  const { path } = await openSession(stack.url, { entry_id: 'brewery', seeds: ['brewery:Brewery'] });

  const bad = 'e1(trace="a\\r\\nX-Injected: 1")[name]';
  refused(t, await runProgram(stack.url, path, bad), 'a live program');
  refused(t, await runProgram(stack.url, path, bad, 'mode=plan'), 'a dry-run');
  t.equal(vendor.requests.length, 0, 'the vendor got no request');

  const ok = await runProgram(stack.url, path, 'e1(trace="t-1")[name]');
  t.equal(ok.status, 200, ok.text);
  t.equal(vendor.requests.length, 1);
  t.equal(vendor.requests[0]!.headers['x-trace'], 't-1', 'a clean value goes out in the header');

  // A resolved plan (as the terminal sends it) with the value put in after compiling.
  const sym = await call(stack.url, `${path}/symbols`);
  const symbols = SymbolTable.fromJSON(sym.body as unknown as SymbolTableJson);
  const compiled = compileProgram('e1(trace="t-2")[name]', { registry: stack.app.registry, symbols });
  if (compiled.kind !== 'plan') throw new Error(JSON.stringify(compiled));
  const plan = structuredClone(compiled.plan);
  plan.steps[0]!.args.trace = { lit: 'a\r\nX-Injected: 1' };
  const sent = await call(stack.url, `${path}/plan`, {
    method: 'POST',
    body: JSON.stringify({ plan, mode: 'live', wait: true }),
    type: RESOLVED_PLAN_TYPE,
  });
  t.equal(sent.status, 400, sent.text);
  t.equal(codeOf(sent), 'bad_arguments');
  t.match(sent.text, /`trace` of listBreweries is sent in the X-Trace header and holds CR/);
  t.equal(vendor.requests.length, 1, 'the tampered plan sent nothing');

  // A value bound from a vendor row: the first call goes out, the one with the header does not.
  const bound = await runProgram(stack.url, path, 'x = e1(city="Injected")[name]\ne1(trace=x.name)[name]');
  t.equal(bound.status, 400, bound.text);
  t.equal(codeOf(bound), 'bad_arguments');
  t.match(bound.text, /`trace` of listBreweries is sent in the X-Trace header and holds CR/);
  t.equal(vendor.requests.length, 2, 'only the call that bound the rows was sent');
  t.notOk(
    vendor.requests.some((r) => r.headers['x-injected'] !== undefined || /\r|\n/.test(String(r.headers['x-trace']))),
  );
});
