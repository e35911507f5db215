/**
 * Listening and stopping: start the app on host:port; on stop, refuse new connections, let
 * running requests finish within a grace period, then close what is left.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SvcApp } from './app.js';

export interface Listening {
  url: string;
  port: number;
  server: Server;
  /** Stop accepting, wait for running requests up to `graceMs`, then close. */
  close(graceMs?: number): Promise<void>;
}

export const DEFAULT_PORT = 7311;
export const DEFAULT_HOST = '127.0.0.1';
export const SHUTDOWN_GRACE_MS = 10_000;

export async function listen(app: SvcApp, port = DEFAULT_PORT, host = DEFAULT_HOST): Promise<Listening> {
  // Answers not yet started when stopping begins say `Connection: close`, so their keep-alive
  // connections end with them instead of holding the process for the whole grace period.
  const active = new Set<ServerResponse>();
  let stopping = false;
  const server = createServer({ keepAliveTimeout: 30_000, requestTimeout: 120_000 }, (req, res) => {
    active.add(res);
    res.on('close', () => active.delete(res));
    if (stopping) res.setHeader('connection', 'close');
    void app.handle(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => { server.off('error', reject); resolve(); });
  });
  const actual = (server.address() as AddressInfo).port;
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${actual}`,
    port: actual,
    server,
    close: (graceMs = SHUTDOWN_GRACE_MS) =>
      new Promise<void>((resolve) => {
        stopping = true;
        for (const res of active) if (!res.headersSent) res.setHeader('connection', 'close');
        const force = setTimeout(() => server.closeAllConnections(), graceMs);
        force.unref();
        server.close(() => { clearTimeout(force); resolve(); });
        server.closeIdleConnections();
      }),
  };
}
