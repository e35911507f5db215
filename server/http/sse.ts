/**
 * Server-sent events for one operation: `snapshot` first, `progress` while it runs, `terminal`
 * last (then the stream closes). `data` is the plain progress line. Heartbeat comments keep
 * proxies from closing an idle stream; a client that goes away frees its listener at once.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Watch } from '../execute/background.js';
import type { OpEvent } from '../execute/operations.js';

export const SSE_HEARTBEAT_MS = 15_000;

function event(res: ServerResponse, kind: string, line: string): void {
  res.write(`event: ${kind}\ndata: ${line.replace(/\n/g, '\ndata: ')}\n\n`);
}

export function streamOperation(
  req: IncomingMessage,
  res: ServerResponse,
  watch: Watch,
  heartbeatMs = SSE_HEARTBEAT_MS,
): void {
  // No Connection header of our own: node keeps the connection alive unless the client (or a
  // stopping server) said `Connection: close`.
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    'x-accel-buffering': 'no',
  });
  event(res, 'snapshot', watch.line);
  if (watch.terminal) {
    event(res, 'terminal', watch.line);
    res.end();
    return;
  }
  const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), heartbeatMs);
  heartbeat.unref();
  const unsubscribe = watch.subscribe((e: OpEvent) => {
    event(res, e.kind, e.line);
    if (e.kind === 'terminal') {
      stop();
      res.end();
    }
  });
  const stop = () => {
    clearInterval(heartbeat);
    unsubscribe();
  };
  req.on('close', stop);
  res.on('close', stop);
}
