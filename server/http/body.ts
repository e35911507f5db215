/** Reading request bodies with a size limit (413) and decoding JSON (400), never throwing raw errors. */
import type { IncomingMessage } from 'node:http';
import { svcError, SvcFailure } from '../../common/errors.js';

/** Largest request body accepted, in bytes. */
export const MAX_BODY_BYTES = 1024 * 1024;
/** Deepest nesting of arrays and objects in a JSON body (nothing svc takes needs more). */
export const MAX_JSON_DEPTH = 64;

export async function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<string> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  // A short body usually arrives with the headers: by the time a route reads it, node has buffered
  // all of it (the stream ends a little later). Take it from the buffer then: no async iterator, no
  // wait for the end event. A caller in the
  // turn the request's head was parsed in (the MCP endpoint) comes before node parsed the body
  // that came with it: one microtask later it is there.
  if (!req.complete && req.readableLength < declared) await Promise.resolve();
  if (!req.readableFlowing && req.readableLength <= limit && (req.complete || whollyBuffered(req, declared)))
    return bufferedBody(req);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw tooLarge(limit);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** True when every byte of a `Content-Length` body is in the request's buffer. */
function whollyBuffered(req: IncomingMessage, declared: number): boolean {
  return declared === req.readableLength && req.headers['transfer-encoding'] === undefined;
}

/**
 * The body of a request that is all buffered: read() hands it over at once; resume() then lets
 * the stream reach its end event by itself (node's server waits for it to free the parser).
 * That resume waits for the loop's next turn (`resumeSoon`): the stream's end (node's
 * bookkeeping) would otherwise run before the vendor call the route dispatches in this
 * turn is written, since undici writes on a reused socket only in an immediate.
 */
function bufferedBody(req: IncomingMessage): string {
  const chunks: Buffer[] = [];
  for (let c = req.read() as Buffer | null; c !== null; c = req.read() as Buffer | null) chunks.push(c);
  setImmediate(resumeSoon, req);
  if (chunks.length === 1) return chunks[0]!.toString('utf8');
  return Buffer.concat(chunks).toString('utf8');
}

/** Resume `req` in the next turn's immediates, after those queued in this turn (undici's write). */
function resumeSoon(req: IncomingMessage): void {
  setImmediate(resume, req);
}

function resume(req: IncomingMessage): void {
  req.resume();
}

function tooLarge(limit: number): SvcFailure {
  return new SvcFailure([
    svcError('body_too_large', `the request body is over ${limit} bytes`, {
      hint: 'send a shorter program; large inputs belong in heredoc arguments of a reasonable size',
    }),
  ]);
}

/** The media type of a request (lower case, no parameters). */
export function mediaType(req: IncomingMessage): string {
  const type = req.headers['content-type'];
  if (type === 'text/plain' || type === 'application/json') return type; // already in that form
  return (type ?? '').split(';')[0]!.trim().toLowerCase();
}

/**
 * Parse a JSON body into an object; a non-object or malformed JSON is a 400 `bad_json` whose hint
 * is `hint` (what this route takes).
 */
export function parseJsonObject(
  text: string,
  hint = 'send a JSON object, or a plain-text program with Content-Type: text/plain; for example {"program": "e1[name]"}',
): Record<string, unknown> {
  if (nestedDeeperThan(text, MAX_JSON_DEPTH)) {
    throw new SvcFailure([
      svcError('bad_json', `the body nests arrays or objects more than ${MAX_JSON_DEPTH} deep`, { hint }),
    ]);
  }
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new SvcFailure([
      svcError('bad_json', `the body is not valid JSON (${(e as Error).message.split('\n')[0]})`, { hint }),
    ]);
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    throw new SvcFailure([svcError('bad_json', 'the body must be a JSON object', { hint })]);
  }
  return v as Record<string, unknown>;
}

/**
 * True when `text` opens more than `max` arrays or objects inside each other (brackets inside
 * strings do not count). A linear scan before JSON.parse: deep values would otherwise reach code
 * that recurses over them (JSON.stringify, schema checks, canonical hashing).
 */
export function nestedDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
      if (++depth > max) return true;
    } else if (c === 93 || c === 125) depth--;
  }
  return false;
}
