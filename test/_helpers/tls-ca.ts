/**
 * Test helper: a throwaway PKI made with the `openssl` command line in a fresh temp dir (ECDSA
 * P-256, valid two days): a CA ("svc test CA"), a server certificate for 127.0.0.1 and localhost,
 * and a client certificate with the caller's CN, both signed by the CA; optionally an unrelated CA
 * with a client certificate of the same CN (a wrong client certificate). `startTlsVendor` is an
 * mTLS vendor (node:https, client certificate required and checked against the CA) that answers
 * `GET /things` and records the client certificate's CN of every request.
 *
 * @example
 * const pki = makeTestCa({ clientCn: 'svc-client', unrelated: true });
 * t.teardown(() => pki.cleanup());
 * const vendor = await startTlsVendor(pki);
 * t.teardown(() => vendor.close());
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';

/** A key and a certificate: paths in the temp dir and the PEM text. */
export interface KeyCert {
  keyPath: string;
  certPath: string;
  key: string;
  cert: string;
}

export interface TestCa {
  /** The temp dir holding every file (removed by `cleanup`). */
  dir: string;
  /** The CA: self-signed, CN "svc test CA". Its `cert` is what clients and the vendor trust. */
  ca: KeyCert;
  /** CN 127.0.0.1, subjectAltName IP:127.0.0.1 and DNS:localhost, signed by `ca`. */
  server: KeyCert;
  /** CN `clientCn`, extendedKeyUsage clientAuth, signed by `ca`. */
  client: KeyCert & { cn: string };
  /** With `unrelated: true`: another CA ("unrelated test CA") and a client certificate of the same CN signed by it. */
  unrelated?: { ca: KeyCert; client: KeyCert & { cn: string } };
  /** Remove the temp dir (idempotent). */
  cleanup(): void;
}

export interface TestCaOptions {
  /** The client certificate's subject CN; default "svc-client". */
  clientCn?: string;
  /** Also make an unrelated CA and a client certificate signed by it. */
  unrelated?: boolean;
}

const NOT_FOUND = 'openssl not found: run apt-get install -y openssl';

const CONFIG = `
[req]
distinguished_name = dn
prompt = no
[dn]
[ca]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[server]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = IP:127.0.0.1,DNS:localhost
authorityKeyIdentifier = keyid
[client]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = clientAuth
authorityKeyIdentifier = keyid
`;

const CNF = 'openssl.cnf';
const NEW_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
/** Validity and digest of every certificate. */
const SIGN = ['-days', '2', '-sha256'];

function openssl(dir: string, args: string[]): void {
  try {
    execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (e) {
    const stderr = String((e as { stderr?: Buffer }).stderr ?? '').trim();
    throw new Error(`openssl ${args[0]} failed: ${stderr.split('\n')[0] || String(e)}`);
  }
}

/** `-subj` form of one CN, with the characters that format treats specially escaped. */
const subj = (cn: string) => `/CN=${cn.replace(/[\\/+=,]/g, (c) => `\\${c}`)}`;

function read(dir: string, name: string): KeyCert {
  const keyPath = join(dir, `${name}.key`);
  const certPath = join(dir, `${name}.crt`);
  return { keyPath, certPath, key: readFileSync(keyPath, 'utf8'), cert: readFileSync(certPath, 'utf8') };
}

/** A self-signed CA `name` with subject `cn`. */
function makeCa(dir: string, name: string, cn: string): KeyCert {
  const out = ['-keyout', `${name}.key`, '-out', `${name}.crt`, '-subj', subj(cn), ...SIGN, '-config', CNF];
  openssl(dir, ['req', '-x509', '-new', ...NEW_KEY, ...out, '-extensions', 'ca']);
  return read(dir, name);
}

/** A key and a certificate `name` with subject `cn`, signed by the CA `ca`, with extensions `profile`. */
function makeLeaf(dir: string, ca: string, name: string, cn: string, profile: 'server' | 'client'): KeyCert {
  const csr = ['-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subj(cn), '-config', CNF];
  openssl(dir, ['req', '-new', ...NEW_KEY, ...csr]);
  const serial = `0x${randomBytes(8).toString('hex')}`;
  const by = ['-CA', `${ca}.crt`, '-CAkey', `${ca}.key`, '-set_serial', serial, ...SIGN];
  const out = ['-extfile', CNF, '-extensions', profile, '-out', `${name}.crt`];
  openssl(dir, ['x509', '-req', '-in', `${name}.csr`, ...by, ...out]);
  return read(dir, name);
}

/** Make the CA and certificates (synchronously; a few openssl runs). */
export function makeTestCa(opts: TestCaOptions = {}): TestCa {
  if (spawnSync('openssl', ['version'], { stdio: 'ignore' }).error) throw new Error(NOT_FOUND);
  const dir = mkdtempSync(join(tmpdir(), 'svc-tls-ca-'));
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  try {
    writeFileSync(join(dir, CNF), CONFIG);
    const cn = opts.clientCn ?? 'svc-client';
    const pki: TestCa = {
      dir,
      ca: makeCa(dir, 'ca', 'svc test CA'),
      server: makeLeaf(dir, 'ca', 'server', '127.0.0.1', 'server'),
      client: { ...makeLeaf(dir, 'ca', 'client', cn, 'client'), cn },
      cleanup,
    };
    if (opts.unrelated) {
      const ca = makeCa(dir, 'other-ca', 'unrelated test CA');
      pki.unrelated = { ca, client: { ...makeLeaf(dir, 'other-ca', 'other-client', cn, 'client'), cn } };
    }
    return pki;
  } catch (e) {
    cleanup();
    throw e;
  }
}

/** One request as the mTLS vendor saw it. */
export interface TlsRequest {
  path: string;
  /** The subject CN of the client certificate the request came with. */
  cn: string | undefined;
  headers: IncomingHttpHeaders;
}

export interface TlsVendor {
  /** `https://127.0.0.1:<port>` (no trailing slash). */
  url: string;
  port: number;
  requests: TlsRequest[];
  close(): Promise<void>;
}

/** An HTTPS vendor with the server certificate of `ca` that requires a client certificate signed by `ca`. */
export async function startTlsVendor(ca: TestCa): Promise<TlsVendor> {
  const requests: TlsRequest[] = [];
  const tls = { key: ca.server.key, cert: ca.server.cert, ca: ca.ca.cert, requestCert: true, rejectUnauthorized: true };
  const server = createServer(tls, (req, res) => {
    const path = new URL(req.url ?? '/', 'https://127.0.0.1').pathname;
    const cn = (req.socket as TLSSocket).getPeerCertificate().subject?.CN; // an array when there are several
    requests.push({ path, cn: Array.isArray(cn) ? cn[0] : cn, headers: req.headers });
    const found = req.method === 'GET' && path === '/things';
    res.writeHead(found ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(found ? [{ id: 1, name: 'a' }] : { error: 'not found' }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  let closed: Promise<void> | undefined;
  return {
    url: `https://127.0.0.1:${port}`,
    port,
    requests,
    close: () =>
      (closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
}
