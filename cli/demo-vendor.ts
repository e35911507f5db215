/**
 * The demo vendor: json-server 0.17 serving the bundled `fixtures/vendor/db.json` from memory
 * (writes never touch the file). Tests, benchmarks and `npm start` all start it through here.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { packageRoot } from './package-root.js';
import { join } from 'node:path';

const require = createRequire(import.meta.url);

export interface DemoVendor {
  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  url: string;
  port: number;
  /** The live data (json-server's lowdb state): tests may read it to compare. */
  db: () => Record<string, unknown[]>;
  close(): Promise<void>;
}

export interface DemoVendorOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  host?: string;
  /** Data to serve instead of the bundled db.json (deep-copied). */
  data?: Record<string, unknown[]>;
}

/** The bundled vendor data, parsed fresh on every call (callers may mutate it). */
export function demoVendorData(): Record<string, unknown[]> {
  return JSON.parse(readFileSync(join(packageRoot(), 'fixtures', 'vendor', 'db.json'), 'utf8')) as Record<
    string,
    unknown[]
  >;
}

/** Start json-server in this process on 127.0.0.1 and a free port. */
export async function startDemoVendor(opts: DemoVendorOptions = {}): Promise<DemoVendor> {
  const jsonServer = require('json-server') as {
    create(): ((req: unknown, res: unknown) => void) & { use(mw: unknown): void };
    router(db: unknown): { db: { getState(): Record<string, unknown[]> } };
  };
  const app = jsonServer.create();
  const router = jsonServer.router(opts.data ? structuredClone(opts.data) : demoVendorData());
  app.use(router);
  const server: Server = createServer(app);
  server.keepAliveTimeout = 30_000;
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host}:${port}`,
    port,
    db: () => router.db.getState(),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
