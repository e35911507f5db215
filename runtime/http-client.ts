/**
 * The HTTP edge of the runtime: one keep-alive undici Pool per vendor origin, bounded response
 * bodies, and abort/timeout through AbortSignal. Everything above it is pure request building
 * and decoding, so tests and benchmarks can swap this for another `HttpClient`.
 */
import { Pool } from 'undici';

export interface HttpRequest {
  method: string;
  /** Absolute URL. */
  url: string;
  headers: Record<string, string>;
  body?: string;
}

export interface HttpResponse {
  status: number;
  /** Lower-case header names; repeated headers joined with ", " (`set-cookie` is not needed). */
  headers: Record<string, string>;
  body: Buffer;
}

/** Thrown by `HttpClient.request` when the body exceeds the limit (the socket is discarded). */
export class BodyTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`response body over ${limit} bytes`);
  }
}

export interface HttpClient {
  request(req: HttpRequest, opts: { signal?: AbortSignal; maxBodyBytes: number }): Promise<HttpResponse>;
  close(): Promise<void>;
}

/** The default client: undici pools keyed by origin, kept alive between calls. */
export class PooledHttpClient implements HttpClient {
  private readonly pools = new Map<string, Pool>();

  constructor(private readonly connectionsPerOrigin = 64) {}

  private pool(origin: string): Pool {
    let p = this.pools.get(origin);
    if (!p) {
      p = new Pool(origin, {
        connections: this.connectionsPerOrigin,
        keepAliveTimeout: 10_000,
        keepAliveMaxTimeout: 60_000,
      });
      this.pools.set(origin, p);
    }
    return p;
  }

  async request(req: HttpRequest, opts: { signal?: AbortSignal; maxBodyBytes: number }): Promise<HttpResponse> {
    const u = new URL(req.url);
    const res = await this.pool(u.origin).request({
      method: req.method as 'GET',
      path: u.pathname + u.search,
      headers: req.headers,
      body: req.body ?? null,
      signal: opts.signal ?? null,
    });
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > opts.maxBodyBytes) throw new BodyTooLarge(opts.maxBodyBytes);
        chunks.push(chunk as Buffer);
      }
    } catch (e) {
      res.body.destroy();
      throw e;
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(res.headers))
      if (v !== undefined) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
    return { status: res.statusCode, headers, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) };
  }

  async close(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((p) => p.close()));
  }
}
