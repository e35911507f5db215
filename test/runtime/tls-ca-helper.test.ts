/** The openssl-made test PKI and the mTLS vendor: the right client certificate gets in, no or a wrong one does not. */
import { existsSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import t from 'tap';
import { Agent, request } from 'undici';
import { makeTestCa, startTlsVendor } from '../_helpers/tls-ca.js';

const pki = makeTestCa({ clientCn: 'svc-client', unrelated: true });
t.teardown(() => pki.cleanup());

t.test('the certificates: CA, server SANs, client CN, all signed by the CA', async (t) => {
  const ca = new X509Certificate(pki.ca.cert);
  const server = new X509Certificate(pki.server.cert);
  const client = new X509Certificate(pki.client.cert);
  t.equal(ca.subject, 'CN=svc test CA');
  t.ok(ca.ca, 'a CA certificate');
  t.ok(ca.verify(ca.publicKey), 'self-signed');
  t.match(server.subjectAltName, /IP Address:127\.0\.0\.1/);
  t.match(server.subjectAltName, /DNS:localhost/);
  t.ok(server.checkIP('127.0.0.1') && server.checkHost('localhost'));
  t.ok(server.verify(ca.publicKey), 'server signed by the CA');
  t.equal(client.subject, 'CN=svc-client');
  t.ok(client.verify(ca.publicKey), 'client signed by the CA');
  t.notOk(client.ca);
  const other = new X509Certificate(pki.unrelated!.client.cert);
  t.equal(other.subject, 'CN=svc-client', 'the same CN ...');
  t.notOk(other.verify(ca.publicKey), '... from another CA');
  t.ok(existsSync(pki.client.keyPath) && existsSync(pki.ca.certPath), 'files on disk');
});

t.test('mTLS vendor: the CA client certificate reaches /things and its CN is recorded', async (t) => {
  const vendor = await startTlsVendor(pki);
  t.teardown(() => vendor.close());
  const dispatcher = new Agent({ connect: { ca: pki.ca.cert, cert: pki.client.cert, key: pki.client.key } });
  t.teardown(() => dispatcher.close());

  const res = await request(`${vendor.url}/things`, { dispatcher, headers: { 'x-probe': '1' } });
  t.equal(res.statusCode, 200);
  t.same(await res.body.json(), [{ id: 1, name: 'a' }]);
  const missing = await request(`${vendor.url}/nothing`, { dispatcher });
  t.equal(missing.statusCode, 404);
  await missing.body.dump();
  t.equal(vendor.requests.length, 2);
  t.match(vendor.requests[0], { path: '/things', cn: 'svc-client', headers: { 'x-probe': '1' } });
  t.equal(vendor.requests[1]?.cn, 'svc-client');

  const byName = new Agent({ connect: { ca: pki.ca.cert, cert: pki.client.cert, key: pki.client.key } });
  t.teardown(() => byName.close());
  const local = await request(`https://localhost:${vendor.port}/things`, { dispatcher: byName });
  t.equal(local.statusCode, 200, 'the server certificate is valid for localhost too');
  await local.body.dump();
});

t.test('mTLS vendor refuses a request without a client certificate or with an unrelated one', async (t) => {
  const vendor = await startTlsVendor(pki);
  t.teardown(() => vendor.close());

  const bare = new Agent({ connect: { ca: pki.ca.cert } });
  t.teardown(() => bare.close());
  await t.rejects(request(`${vendor.url}/things`, { dispatcher: bare }), 'no client certificate');

  const other = pki.unrelated!.client;
  const wrong = new Agent({ connect: { ca: pki.ca.cert, cert: other.cert, key: other.key } });
  t.teardown(() => wrong.close());
  await t.rejects(request(`${vendor.url}/things`, { dispatcher: wrong }), 'a client certificate from another CA');

  const untrusting = new Agent({ connect: { cert: pki.client.cert, key: pki.client.key } });
  t.teardown(() => untrusting.close());
  await t.rejects(request(`${vendor.url}/things`, { dispatcher: untrusting }), 'the client does not trust the test CA');
  t.equal(vendor.requests.length, 0, 'nothing got through');
});

t.test('cleanup removes the files; a CN with special characters is kept', async (t) => {
  const odd = makeTestCa({ clientCn: 'svc/client+1, ops' });
  t.equal(odd.unrelated, undefined);
  const vendor = await startTlsVendor(odd);
  const dispatcher = new Agent({ connect: { ca: odd.ca.cert, cert: odd.client.cert, key: odd.client.key } });
  const res = await request(`${vendor.url}/things`, { dispatcher });
  await res.body.dump();
  await dispatcher.close();
  await vendor.close();
  t.equal(vendor.requests[0]?.cn, 'svc/client+1, ops', 'the CN as given');
  odd.cleanup();
  odd.cleanup();
  t.notOk(existsSync(odd.dir));
});
