/**
 * `startServe` in-process: the settings it is given (not the process's environment) apply on the
 * first catalog load exactly as on a reload.
 */
import t from 'tap';
import { startDemoVendor } from '../../cli/demo-vendor.js';
import { startServe } from '../../cli/commands/serve.js';

t.test('SVC_BACKEND_URL_<ENTRY> of the given env applies on the first load and on reload', async (t) => {
  const vendor = await startDemoVendor();
  t.teardown(() => vendor.close());
  t.equal(process.env.SVC_BACKEND_URL_BREWERY, undefined, 'the process itself sets no override');
  const env = {
    SVC_BACKEND_URL_BREWERY: vendor.url,
    SVC_CONTROL_PLANE_SECRET: 'start-serve-secret-4f1a',
    SVC_LOG_LEVEL: 'error',
  };
  let printed = '';
  const running = await startServe({ catalogDir: 'fixtures/packed', port: 0, host: '127.0.0.1' }, env, (s) => {
    printed += s;
  });
  t.teardown(() => running.stop());
  t.match(
    printed,
    new RegExp(`^brewery v1 \\S+ .* -> ${vendor.url.replace(/\./g, '\\.')}$`, 'm'),
    'the start-up line shows the overridden backend',
  );
  t.equal(running.app.registry.get('brewery')?.base_url, vendor.url, 'first load: the override of the given env');
  const url = running.listening.url;
  const reload = await fetch(`${url}/internal/catalog-registry/v1/reload`, {
    method: 'POST',
    headers: { 'x-svc-control-plane-secret': env.SVC_CONTROL_PLANE_SECRET },
  });
  t.equal(reload.status, 200);
  t.equal(running.app.registry.get('brewery')?.base_url, vendor.url, 'reload: the same override');
  const open = await fetch(`${url}/execute`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ entry_id: 'brewery' }),
  });
  const s = (await open.json()) as { prompt_hash: string; session: string };
  const run = await fetch(`${url}/execute/${s.prompt_hash}/${s.session}`, {
    method: 'POST',
    headers: { accept: 'application/json' },
    body: 'e1("b-1")[name]',
  });
  t.equal(run.status, 200, 'programs reach the vendor of the override');
});
