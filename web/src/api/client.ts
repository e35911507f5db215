/**
 * The one way the page talks to svc: the public HTTP API (docs/http.md), same origin, paths
 * relative to the page (so a reverse proxy may mount svc under a prefix). Credentials for inbound
 * auth live in memory, or in sessionStorage when the user asks, never anywhere else; a 401 tells
 * the listeners (the page asks for a credential).
 */

export type CredentialKind = 'bearer' | 'api_key';
export interface Credential {
  kind: CredentialKind;
  value: string;
}

const STORE_KEY = 'svc.playground.credential';
let credential: Credential | null = readStored();
const authListeners = new Set<(status: number) => void>();

function readStored(): Credential | null {
  try {
    const raw = sessionStorage.getItem(STORE_KEY);
    const c = raw ? (JSON.parse(raw) as Credential) : null;
    return c && (c.kind === 'bearer' || c.kind === 'api_key') && typeof c.value === 'string' ? c : null;
  } catch {
    return null;
  }
}

/** The credential in force, if any. */
export const currentCredential = (): Credential | null => credential;

/** Use `c` from now on (null: none); `remember` keeps it in this tab's sessionStorage. */
export function setCredential(c: Credential | null, remember: boolean): void {
  credential = c;
  try {
    if (c && remember) sessionStorage.setItem(STORE_KEY, JSON.stringify(c));
    else sessionStorage.removeItem(STORE_KEY);
  } catch {
    // Storage refused (private mode): memory only.
  }
}

/** Called with the status of every answer refused for its credentials (401). */
export function onAuthRequired(fn: (status: number) => void): () => void {
  authListeners.add(fn);
  return () => authListeners.delete(fn);
}

/** The headers that carry the credential. */
export function authHeaders(): Record<string, string> {
  if (!credential) return {};
  return credential.kind === 'bearer'
    ? { authorization: `Bearer ${credential.value}` }
    : { 'x-api-key': credential.value };
}

/** An answer: its status, text, parsed JSON (when it is JSON) and headers. */
export interface Answer<T = unknown> {
  status: number;
  ok: boolean;
  text: string;
  body: T;
  headers: Headers;
}

export interface RequestOptions {
  method?: string;
  json?: unknown;
  accept?: string;
  signal?: AbortSignal;
  /** Do not tell the 401 listeners (a check in the background must not open the credential dialog). */
  quiet?: boolean;
}

/** Sends one request; every status is returned (errors are answers to show), a network failure throws. */
export async function request<T = unknown>(path: string, opts: RequestOptions = {}): Promise<Answer<T>> {
  const headers: Record<string, string> = { accept: opts.accept ?? 'application/json', ...authHeaders() };
  let body: string | undefined;
  if (opts.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(opts.json);
  }
  const res = await fetch(path, {
    method: opts.method ?? (body === undefined ? 'GET' : 'POST'),
    headers,
    ...(body !== undefined ? { body } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
    credentials: 'omit',
    cache: 'no-store',
  });
  const text = await res.text();
  if (res.status === 401 && !opts.quiet) for (const fn of authListeners) fn(401);
  let parsed: unknown = {};
  if (/json/.test(res.headers.get('content-type') ?? '')) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = {};
    }
  }
  return { status: res.status, ok: res.ok, text, body: parsed as T, headers: res.headers };
}

/** The first error of an answer as one line (`code: message`), for answers that are not shown in full. */
export function errorLine(a: Answer): string {
  const b = a.body as { code?: string; message?: string; errors?: Array<{ code: string; message: string }> };
  const e = b.errors?.[0] ?? (b.code ? { code: b.code, message: b.message ?? '' } : undefined);
  return e ? `${e.code}: ${e.message}` : `HTTP ${a.status}`;
}
