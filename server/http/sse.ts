/**
 * Server-sent events for one operation: `snapshot` first, `progress` while it runs, `terminal`
 * last (then the stream closes). `data` is the plain progress line. Heartbeat comments keep
 * proxies from closing an idle stream; a client that goes away frees its listener at once.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ExecuteService } from '../execute/service.js';
import { subscribe, type Operation, type OpEvent } from '../execute/operations.js';

export const SSE_HEARTBEAT_MS = 15_000;

function event(res: ServerResponse, kind: string, line: string): void {
  res.write(`event: ${kind}\ndata: ${line.replace(/\n/g, '\ndata: ')}\n\n`);
}

export function streamOperation(req: IncomingMessage, res: ServerResponse, service: ExecuteService, op: Operation, heartbeatMs = SSE_HEARTBEAT_MS): void {
  // No Connection header of our own: node keeps the connection alive unless the client (or a
  // stopping server) said `Connection: close`.
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' });
  const first = service.snapshotLine(op);
  event(res, 'snapshot', first.line);
  if (first.terminal) {
    event(res, 'terminal', first.line);
    res.end();
    return;
  }
  const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), heartbeatMs);
  heartbeat.unref();
  const unsubscribe = subscribe(op, (e: OpEvent) => {
    event(res, e.kind, e.line);
    if (e.kind === 'terminal') { stop(); res.end(); }
  });
  const stop = () => { clearInterval(heartbeat); unsubscribe(); };
  req.on('close', stop);
  res.on('close', stop);
}
