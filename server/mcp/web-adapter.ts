/**
 * The bridge between Node's `http` objects and the official SDK's Web-standard Streamable HTTP
 * transport (`WebStandardStreamableHTTPServerTransport`), in place of the SDK's Node wrapper
 * (`StreamableHTTPServerTransport`, which goes through `@hono/node-server`'s general adapter).
 *
 * - The request: a Web `Request` with the method, the URL and the headers; the body is handed to
 *   the transport already parsed (`parsedBody`, the SDK's public option), after svc's own body
 *   limit and depth check.
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
    // Inside the try: a header value `Headers` refuses is a 500 too, never a crash.
    answer = await transport.handleRequest(webRequest(req), { parsedBody: body });
  } catch {
    return void res.writeHead(500).end();
  }
  await sendWebResponse(res, answer, req.method === 'GET');
}

/**
 * The Web `Request` of a Node request, without its body (the transport gets that parsed): method,
 * absolute URL (from `Host`) and the headers as sent (repeated ones joined with `, ` by `Headers`).
 */
export function webRequest(req: IncomingMessage): Request {
  const scheme = (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  return new Request(`${scheme}://${req.headers.host}${req.url}`, { method: req.method ?? 'GET', headers });
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
