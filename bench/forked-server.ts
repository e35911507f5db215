/**
 * The lifecycle of a small server script forked by bench/processes.ts (`startScript`): listen on a
 * free port of 127.0.0.1, send `{type: 'ready', url}`, exit on `{type: 'stop'}` or when the parent
 * goes.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export function serveForked(server: Server): void {
  server.keepAliveTimeout = 30_000;
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as AddressInfo;
    process.send?.({ type: 'ready', url: `http://127.0.0.1:${port}` });
  });
  process.on('message', (m: { type?: string }) => {
    if (m?.type === 'stop') process.exit(0);
  });
  process.on('disconnect', () => process.exit(0));
}
