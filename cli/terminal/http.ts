/**
 * The terminal's HTTP transport: node:http / node:https with one kept-alive agent each, so the
 * requests of one command (the run, then its artifact) share a connection, and a process pays no
 * `fetch` start-up (about 30 ms on a cold Node 20). Idle sockets do not keep the process alive.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };

export interface Outgoing {
  method: string;
  headers: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

/** Send one request; resolves with the response once its headers arrive (the body is a stream). */
export function send(url: string, init: Outgoing): Promise<IncomingMessage> {
  const u = new URL(url);
  const https = u.protocol === 'https:';
  const headers = { ...init.headers };
  if (init.body !== undefined) headers['content-length'] = String(Buffer.byteLength(init.body));
  return new Promise((resolve, reject) => {
    const req = (https ? httpsRequest : httpRequest)(
      u,
      {
        method: init.method,
        headers,
        agent: https ? agents.https : agents.http,
        ...(init.signal ? { signal: init.signal } : {}),
      },
      resolve,
    );
    req.on('error', reject);
    req.end(init.body);
  });
}

/** The whole body as text. */
export async function readText(res: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const c of res) parts.push(c as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

/** One header as a string ('' when absent). */
export function header(res: IncomingMessage, name: string): string {
  const v = res.headers[name];
  return Array.isArray(v) ? v.join(', ') : (v ?? '');
}
