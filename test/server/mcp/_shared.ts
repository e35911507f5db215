/**
 * Small helpers shared by the MCP tests (test/server/mcp/*.test.ts): reading tool results, the
 * execute session behind a logical ref, bounded polling, raw JSON-RPC over fetch, and credentials
 * for inbound auth (API key rows and jose-minted HS256 JWTs).
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { SignJWT } from 'jose';
import { InboundAuth, type AuthMode } from '../../../server/auth/inbound.js';
import type { SessionKey } from '../../../server/execute/state.js';
import type { Stack } from '../../_helpers/server.js';
import { svcMeta, textOf } from '../../_helpers/mcp.js';

export type Row = Record<string, unknown>;

export { sleep, until } from '../../_helpers/until.js';

/** `structuredContent` of a result. */
export const sc = (r: CallToolResult): Record<string, any> => (r.structuredContent ?? {}) as Record<string, any>;

/** The rows of a one-block result. */
export const rowsOf = (r: CallToolResult): Row[] => (sc(r).rows ?? []) as Row[];

/** Every error code of an `isError` result, in order. */
export const codesOf = (r: CallToolResult): string[] =>
  ((sc(r).errors ?? []) as Array<{ code: string }>).map((e) => e.code);

/** The run_ref of a "more" field (`svc_run run_ref=l_<token>_pgN`), or undefined. */
export function moreHandle(r: CallToolResult): string | undefined {
  const more = sc(r).more as string | undefined;
  if (more === undefined) return undefined;
  const m = /^svc_run run_ref=(l_[A-Za-z0-9]+_pg\d+)$/.exec(more);
  if (!m) throw new Error(`not a more field: ${more}`);
  return m[1];
}

/** The teaching rows (TSV lines after `form\tmeaning`) of a svc_context text. */
export function teachingRows(r: CallToolResult): string[] {
  const lines = textOf(r).split('\n');
  const i = lines.indexOf('form\tmeaning');
  return i < 0 ? [] : lines.slice(i + 1);
}

/** The execute session a logical ref is bound to (server side, through the real core). */
export async function keyOf(stack: Stack, ref: string, tenant = ''): Promise<SessionKey> {
  const f = await stack.app.service.logical.find(ref, tenant);
  return { prompt_hash: f.session.prompt_hash, session: f.session.session };
}

/** The continuity block of a svc_context result. */
export const continuity = (r: CallToolResult): Record<string, unknown> =>
  svcMeta(r).continuity as Record<string, unknown>;

// ---------------------------------------------------------------- raw JSON-RPC

export const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

export interface RawAnswer {
  status: number;
  headers: Headers;
  text: string;
  /** The JSON-RPC message of the answer: the JSON body, or the first `data:` of an SSE body. */
  message?: Record<string, any>;
}

/** One POST (or other method) to /mcp with the headers a Streamable HTTP client sends. */
export async function rawMcp(
  base: string,
  body: string | undefined,
  headers: Record<string, string> = {},
  method = 'POST',
): Promise<RawAnswer> {
  const res = await fetch(`${base}/mcp`, {
    method,
    headers: {
      accept: 'application/json, text/event-stream',
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    ...(body !== undefined ? { body } : {}),
  });
  const text = await res.text();
  let message: Record<string, any> | undefined;
  const type = res.headers.get('content-type') ?? '';
  try {
    if (type.includes('application/json')) message = JSON.parse(text) as Record<string, any>;
    else if (type.includes('text/event-stream')) {
      const data = text.split('\n').find((l) => l.startsWith('data: '));
      if (data) message = JSON.parse(data.slice(6)) as Record<string, any>;
    }
  } catch {
    /* not JSON */
  }
  return { status: res.status, headers: res.headers, text, message };
}

/** A raw initialize; returns the session id and the headers to send on later requests. */
export async function rawSession(
  base: string,
  headers: Record<string, string> = {},
): Promise<{ sid: string; headers: Record<string, string> }> {
  const a = await rawMcp(base, JSON.stringify(INIT), headers);
  const sid = a.headers.get('mcp-session-id');
  if (a.status !== 200 || !sid) throw new Error(`initialize answered ${a.status}: ${a.text}`);
  const h = { ...headers, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' };
  const n = await rawMcp(base, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), h);
  if (n.status !== 202) throw new Error(`initialized answered ${n.status}: ${n.text}`);
  return { sid, headers: h };
}

// ---------------------------------------------------------------- inbound auth

export const JWT_SECRET = 'svc-mcp-test-hs256-secret-0123456789abcdef';
export const KEYS = [
  { key: 'key-acme-4f9c2a7e1b55', tenant_id: 'acme', subject: 'ci-bot' },
  { key: 'key-globex-8d1e5c3a9077', tenant_id: 'globex', subject: 'ops' },
];
export const KEY_ACME = KEYS[0]!.key;
export const KEY_GLOBEX = KEYS[1]!.key;

/** Inbound auth with the test JWT secret and key rows. */
export function inbound(mode: AuthMode): InboundAuth {
  return new InboundAuth({ mode, jwtSecret: JWT_SECRET, apiKeys: KEYS });
}

/** An HS256 JWT for `tenant` signed with the test secret. */
export function jwt(tenant: string, sub = 'alice', secret = JWT_SECRET): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ sub, tenant_id: tenant, iat: now, exp: now + 3600 })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .sign(new TextEncoder().encode(secret));
}
