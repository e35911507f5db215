/**
 * The terminal's HTTP client of an svc server: the profile's server URL and API key
 * (`X-API-Key`). A connection failure is `server_unreachable` (exit 3); 401 and 403 are auth
 * failures (exit 3). Other answers are returned for the command to judge; `answerJson` and
 * `firstError` read them in any of the four execute formats.
 */
import { decode as decodeToon } from '@toon-format/toon';
import type { IncomingMessage } from 'node:http';
import type { Profile } from '../workspace/profile.js';
import { header, readText, send } from './http.js';
import { normalizeServer } from '../workspace/paths.js';
import { TERMINAL_EXIT, TerminalError } from './errors.js';
import { vendorHeaders } from './vendor-headers.js';

/** A JSON object as received: fields are read through `field` and `objectOf`. */
export type JsonObject = { [key: string]: unknown };

/** A scalar field as text ('' when absent, null or not a scalar). */
export function field(v: unknown): string {
  return typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : '';
}

/** The value when it is a JSON object, else {}. */
export function objectOf(v: unknown): JsonObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as JsonObject) : {};
}

export interface HttpAnswer {
  status: number;
  contentType: string;
  text: string;
  /** The parsed body when it is one JSON document. */
  json: JsonObject | undefined;
  /** Whether the request carried the profile's API key (unset: not known). */
  sentKey?: boolean;
  /** The `svc-run-id` and `svc-commit-id` headers of a run (a clean read's TOON or plain body leaves them out). */
  ids?: { run_id?: string; commit_id?: string };
}

export interface RequestInit {
  method?: string;
  body?: string;
  contentType?: string;
  accept?: string;
}

export class ServerClient {
  readonly base: string;
  /** Vendor credentials for the server to forward (`SVC_VENDOR_HEADER_*`). */
  private readonly vendor: Record<string, string>;
  constructor(
    private readonly profile: Profile,
    env: Record<string, string | undefined> = process.env,
  ) {
    this.base = normalizeServer(profile.server);
    this.vendor = vendorHeaders(env);
  }

  /** The profile's credential headers (`X-API-Key`) and the vendor headers, for requests sent outside `request`. */
  credentials(): Record<string, string> {
    return { ...this.vendor, ...(this.profile.api_key ? { 'x-api-key': this.profile.api_key } : {}) };
  }

  async request(path: string, init: RequestInit = {}): Promise<HttpAnswer> {
    const headers: Record<string, string> = { accept: init.accept ?? 'application/json' };
    if (init.contentType) headers['content-type'] = init.contentType;
    Object.assign(headers, this.credentials());
    let res: IncomingMessage;
    let text: string;
    try {
      res = await send(this.base + path, {
        method: init.method ?? (init.body !== undefined ? 'POST' : 'GET'),
        headers,
        ...(init.body !== undefined ? { body: init.body } : {}),
      });
      text = await readText(res);
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      throw new TerminalError(
        'server_unreachable',
        `cannot reach ${this.base} (${err.code ?? err.message})`,
        'start the server (`svc serve`) or fix `server` with `svc init --server <url>`; `svc doctor` checks the setup',
        TERMINAL_EXIT.server,
      );
    }
    const contentType = header(res, 'content-type');
    let json: JsonObject | undefined;
    if (contentType.includes('json') && !contentType.includes('ndjson')) {
      try {
        const parsed: unknown = JSON.parse(text);
        json =
          parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as JsonObject) : undefined;
      } catch {
        json = undefined;
      }
    }
    const runId = header(res, 'svc-run-id');
    const commitId = header(res, 'svc-commit-id');
    const ids = { ...(runId ? { run_id: runId } : {}), ...(commitId ? { commit_id: commitId } : {}) };
    return { status: res.statusCode ?? 0, contentType, text, json, sentKey: !!this.profile.api_key, ids };
  }

  /** A JSON route: the body on 2xx; auth failures exit 3; other failures exit `failExit` (default 1). */
  async json(path: string, init: RequestInit = {}, failExit: 1 | 2 = 1): Promise<JsonObject> {
    const a = await this.request(path, init);
    throwIfAuth(a, this.base);
    if (a.status >= 200 && a.status < 300 && a.json) return a.json;
    const e = firstError(a);
    throw new TerminalError(e.code, e.message, e.hint, failExit);
  }
}

/** The execute format of a content type (undefined for other types). */
export function formatOf(contentType: string): 'json' | 'toon' | 'ndjson' | 'plain' | undefined {
  const t = contentType.split(';')[0]!.trim().toLowerCase();
  if (t === 'application/x-ndjson' || t === 'application/ndjson') return 'ndjson';
  if (t === 'application/json' || t.endsWith('+json')) return 'json';
  if (t === 'text/toon') return 'toon';
  if (t === 'text/plain') return 'plain';
  return undefined;
}

/**
 * The answer as JSON when its format carries it losslessly: JSON (the document), TOON (decoded),
 * NDJSON (the array of its parsed lines: the rows, then the summary line). Undefined for plain
 * text and for a body that does not parse.
 */
export function answerJson(a: HttpAnswer): unknown {
  try {
    switch (formatOf(a.contentType)) {
      case 'json':
        return a.json ?? (JSON.parse(a.text) as unknown);
      case 'toon': {
        // A teaching answer is TOON, a blank line, then the rules and the table as text.
        const cut = a.text.indexOf('\n\n');
        if (cut < 0) return decodeToon(a.text.replace(/\n+$/, ''));
        const head = decodeToon(a.text.slice(0, cut)) as Record<string, unknown>;
        return { ...head, text: a.text.slice(cut + 2).replace(/\n+$/, '') };
      }
      case 'ndjson':
        return a.text
          .split('\n')
          .filter((l) => l.trim() !== '')
          .map((l) => JSON.parse(l) as unknown);
      default:
        return undefined;
    }
  } catch {
    return undefined;
  }
}

/** The code, message and hint of an error answer in any format (JSON routes, problem+json, execute errors). */
export function firstError(a: HttpAnswer): { code: string; message: string; hint?: string } {
  const doc = answerJson(a);
  const b = objectOf(Array.isArray(doc) ? doc.at(-1) : doc);
  const err = Array.isArray(b.errors) ? objectOf(b.errors[0]) : b;
  // Plain text: `error <code>: <message>` and an indented `hint:` line.
  const plain = /^error ([a-z0-9_]+): (.*)$(?:\n {2}hint: (.*)$)?/m.exec(doc === undefined ? a.text : '');
  const code = field(err.code) || plain?.[1] || `http_${a.status}`;
  const message = field(err.message) || plain?.[2] || `the server answered ${a.status}: ${a.text.slice(0, 200)}`;
  const hint = field(err.hint) || plain?.[3];
  return { code, message, ...(hint ? { hint } : {}) };
}

/**
 * 401 and 403 end the command with exit 3. 401: the profile has no key, or a key the server does
 * not know; the hint is `svc init --api-key`. 403 `forbidden` on a session route: the active
 * context belongs to another tenant (the profile's key changed); the hint is `svc context --new`
 * with `seeds` (the active context's, when the caller knows them).
 */
export function throwIfAuth(a: HttpAnswer, base: string, seeds: string[] = []): void {
  if (a.status !== 401 && a.status !== 403) return;
  const e = firstError(a);
  const init = `\`svc init --server ${base} --api-key <key>\``;
  let message = e.message;
  let hint = e.hint;
  if (a.status === 401) {
    if (a.sentKey === false) message = `the profile has no API key; ${e.message}`;
    else if (a.sentKey === true) message = `the profile's API key is not accepted; ${e.message}`;
    hint = `set a valid key with ${init}; \`svc doctor\` checks it`;
  } else if (e.code === 'forbidden') {
    hint =
      "the active context was opened with the key of another tenant (did the profile's key change?): " +
      `open a new context with \`svc context --new ${seeds.join(' ') || '<api:Entity>...'}\`, ` +
      "or set that tenant's key again with `svc init --api-key <key>`";
  } else hint ??= `the profile's key may not do this; use a key that may with ${init}`;
  throw new TerminalError(
    e.code,
    `${base} refused the credentials (${a.status}): ${message}`,
    hint,
    TERMINAL_EXIT.server,
  );
}
