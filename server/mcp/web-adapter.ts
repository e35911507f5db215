/**
 * The bridge between Node's `http` objects and the official SDK's Web-standard Streamable HTTP
 * transport (`WebStandardStreamableHTTPServerTransport`), in place of the SDK's Node wrapper
 * (`StreamableHTTPServerTransport`, which goes through `@hono/node-server`'s general adapter).
 *
 * - The request: the transport reads only the method, the URL and the headers (the body is handed
 *   to it already parsed), so `webRequest` gives it those three and no body stream, no abort
 *   signal (the transport reads neither); the headers as a read-only view, not a `Headers` object.
 * - The answer: status and headers in one `writeHead`; a JSON (or empty) body in one `end`; an SSE
 *   body piped event by event. The headers of a POST's event stream go with its first event (one
 *   write per tool answer), and a POST's stream that is only its answer leaves as that JSON
 *   (`pipeEvents`); a standing GET stream sends its headers at once. When the client goes away the
 *   stream's reader is cancelled, which lets the transport drop the stream and its keep-alive timer.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';

/**
 * One request through a transport: its answer is written as it comes (an event stream's headers
 * go with its first event, except on a standing GET stream). A request the transport throws on is
 * a bare 500 (as the SDK's Node wrapper answered it).
 */
export async function serve(
  transport: WebStandardStreamableHTTPServerTransport,
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
): Promise<void> {
  let answer: Response;
  try {
    answer = await transport.handleRequest(webRequest(req), { parsedBody: body });
  } catch {
    return void res.writeHead(500).end();
  }
  await sendWebResponse(res, answer, req.method === 'GET');
}

/** What the transport reads of a Web `Request` when the body comes parsed. */
type RequestHead = Pick<Request, 'method' | 'url' | 'headers'>;

/**
 * The Web `Request` the transport reads: method, absolute URL (from `Host`) and the headers as sent
 * (repeated headers joined with `, `, as `Headers` does), in a read-only view (`RequestHeaders`).
 */
export function webRequest(req: IncomingMessage): Request {
  const scheme = (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  const head: RequestHead = {
    method: req.method ?? 'GET',
    url: `${scheme}://${req.headers.host}${req.url}`,
    headers: new RequestHeaders(req.rawHeaders) as unknown as Headers,
  };
  return head as Request;
}

/**
 * The request's headers as the transport reads them (`get`, `has`, `entries` and iteration),
 * lower-case names, in the order sent, repeated ones joined with `, `. A map over what node's
 * parser already checked, instead of a `Headers` object, whose every `append` validates again
 * and whose `entries()` sorts (the transport copies them once per request).
 */
export class RequestHeaders {
  private readonly map = new Map<string, string>();

  constructor(raw: readonly string[]) {
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i]!.toLowerCase();
      const value = raw[i + 1]!;
      const had = this.map.get(name);
      this.map.set(name, had === undefined ? value : `${had}, ${value}`);
    }
  }

  get(name: string): string | null {
    return this.map.get(name.toLowerCase()) ?? null;
  }

  has(name: string): boolean {
    return this.map.has(name.toLowerCase());
  }

  entries(): IterableIterator<[string, string]> {
    return this.map.entries();
  }

  keys(): IterableIterator<string> {
    return this.map.keys();
  }

  values(): IterableIterator<string> {
    return this.map.values();
  }

  forEach(fn: (value: string, name: string, self: RequestHeaders) => void): void {
    for (const [k, v] of this.map) fn(v, k, this);
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.map.entries();
  }
}

/**
 * Write `answer` to `res`. `early`: send the headers of an event stream before its first event
 * (a standing GET stream, whose client waits for them). Resolves when the answer has been written,
 * or the client went away.
 */
export async function sendWebResponse(res: ServerResponse, answer: Response, early: boolean): Promise<void> {
  const headers: OutgoingHttpHeaders = {};
  answer.headers.forEach((v, k) => {
    headers[k] = v;
  });
  const body = answer.body;
  if (!body) {
    res.writeHead(answer.status, headers);
    res.end();
    return;
  }
  if (!headers['content-type']?.toString().startsWith('text/event-stream')) {
    // A whole answer (a JSON-RPC error, or JSON): one write, with its length.
    const bytes = Buffer.from(await answer.arrayBuffer());
    headers['content-length'] = bytes.length;
    res.writeHead(answer.status, headers);
    res.end(bytes);
    return;
  }
  if (early) {
    res.writeHead(answer.status, headers);
    res.flushHeaders();
  }
  await pipeEvents(body.getReader(), res, early ? undefined : { status: answer.status, headers });
}

/** The head of a POST's event stream, written with its first event (or as JSON, see `pipeEvents`). */
interface Head {
  status: number;
  headers: OutgoingHttpHeaders;
}

const DATA = Buffer.from('\ndata: ');

/**
 * The JSON of a whole SSE event (`event: message`, an optional `id:` line, one `data:` line, a blank
 * line), without a copy; undefined for anything else (a comment, a multi-line or partial event).
 */
export function eventJson(chunk: Uint8Array): Uint8Array | undefined {
  const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  const at = bytes.indexOf(DATA);
  const end = bytes.length - 2;
  if (at < 0 || !bytes.subarray(0, at).toString('latin1').startsWith('event: message')) return undefined;
  if (bytes[end] !== 0x0a || bytes[end + 1] !== 0x0a) return undefined;
  const json = bytes.subarray(at + DATA.length, end);
  return json.includes(0x0a) ? undefined : json;
}

/** Resolves in the next turn of the event loop (after the microtasks queued now). */
const nextTurn = () => new Promise<undefined>((resolve) => setImmediate(() => resolve(undefined)));

/**
 * Copy an event stream to the response chunk by chunk, waiting for `drain` when the socket is
 * full. The reader is cancelled when the response closes first (the client went away), and a
 * stream that fails destroys the response (the client sees a cut stream, as with a crash).
 *
 * With `head` (a POST's stream, whose head waits for its first event): a stream that is one event
 * and ends at once, the request's answer and nothing before it, is answered as that message in
 * `application/json` (which Streamable HTTP allows for any request: the transport has checked that
 * the client accepts it). A client then parses one JSON body instead of an event stream. Anything
 * else (a progress notification first, a second event) streams as before; the first event is not
 * held back for longer than the current turn.
 */
async function pipeEvents(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  res: ServerResponse,
  head?: Head,
): Promise<void> {
  const cancel = () => void reader.cancel().catch(() => undefined);
  if (res.destroyed) return cancel(); // gone before the stream was handed over
  res.once('close', cancel);
  try {
    let next = reader.read();
    if (head) {
      const first = await next;
      if (res.destroyed) return;
      if (first.done) return void res.writeHead(head.status, head.headers).end();
      next = reader.read();
      const after = await Promise.race([next, nextTurn()]);
      if (res.destroyed) return;
      const json = after?.done ? eventJson(first.value) : undefined;
      if (json) {
        const { 'content-type': _sse, connection: _c, 'x-accel-buffering': _x, ...rest } = head.headers;
        res.writeHead(head.status, { ...rest, 'content-type': 'application/json', 'content-length': json.length });
        return void res.end(json);
      }
      res.writeHead(head.status, head.headers);
      if (!res.write(first.value)) await drained(res);
    }
    for (;;) {
      const { done, value } = await next;
      if (done || res.destroyed) break;
      if (!res.write(value)) await drained(res);
      next = reader.read();
    }
    if (!res.destroyed) res.end();
  } catch (e) {
    res.destroy(e instanceof Error ? e : new Error(String(e)));
  } finally {
    res.off('close', cancel);
  }
}

/** Resolves when `res` can take more (`drain`) or is gone (`close`); leaves no listener behind. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
