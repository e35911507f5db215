/**
 * The terminal's HTTP client of an svc server: the profile's server URL and API key
 * (`X-API-Key`). A connection failure is `server_unreachable` (exit 3); 401 and 403 are auth
 * failures (exit 3). Other answers are returned for the command to judge.
 */
import type { Profile } from '../workspace/profile.js';
import { normalizeServer } from '../workspace/paths.js';
import { TERMINAL_EXIT, TerminalError } from './errors.js';

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
}

export interface RequestInit {
  method?: string;
  body?: string;
  contentType?: string;
  accept?: string;
}

export class ServerClient {
  readonly base: string;
  constructor(private readonly profile: Profile) {
    this.base = normalizeServer(profile.server);
  }

  async request(path: string, init: RequestInit = {}): Promise<HttpAnswer> {
    const headers: Record<string, string> = { accept: init.accept ?? 'application/json' };
    if (init.contentType) headers['content-type'] = init.contentType;
    if (this.profile.api_key) headers['x-api-key'] = this.profile.api_key;
    let res: Response;
    try {
      res = await fetch(this.base + path, {
        method: init.method ?? (init.body !== undefined ? 'POST' : 'GET'),
        headers,
        ...(init.body !== undefined ? { body: init.body } : {}),
      });
    } catch (e) {
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      throw new TerminalError(
        'server_unreachable',
        `cannot reach ${this.base} (${cause?.code ?? cause?.message ?? (e as Error).message})`,
        'start the server (`svc serve`) or fix `server` with `svc init --server <url>`; `svc doctor` checks the setup',
        TERMINAL_EXIT.server,
      );
    }
    const text = await res.text();
    const contentType = res.headers.get('content-type') ?? '';
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
    return { status: res.status, contentType, text, json };
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

/** The code, message and hint of an error answer (JSON routes, problem+json, execute errors). */
export function firstError(a: HttpAnswer): { code: string; message: string; hint?: string } {
  const b = a.json ?? {};
  const err = Array.isArray(b.errors) ? objectOf(b.errors[0]) : b;
  const code = field(err.code) || `http_${a.status}`;
  const message = field(err.message) || `the server answered ${a.status}: ${a.text.slice(0, 200)}`;
  const hint = field(err.hint);
  return { code, message, ...(hint ? { hint } : {}) };
}

/** 401 and 403 end the command with exit 3 and a hint about the profile's key. */
export function throwIfAuth(a: HttpAnswer, base: string): void {
  if (a.status !== 401 && a.status !== 403) return;
  const e = firstError(a);
  throw new TerminalError(
    e.code,
    `${base} refused the credentials (${a.status}): ${e.message}`,
    a.status === 401
      ? 'set a valid key with `svc init --server <url> --api-key <key>`; `svc doctor` checks it'
      : (e.hint ?? 'this session belongs to another tenant: run `svc context --new` with api:Entity seeds'),
    TERMINAL_EXIT.server,
  );
}
