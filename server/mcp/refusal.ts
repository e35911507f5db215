/**
 * A request to `/mcp` refused before it reaches the endpoint (the Host/Origin policy, a repeated
 * credential header): answered as `/mcp` answers its own refusals, a JSON-RPC error with no id,
 * with the HTTP status of the code and the svc code and hint in `data`.
 */
import type { ServerResponse } from 'node:http';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import type { SvcError } from '../../common/errors.js';
import { codeStatus } from '../http/status.js';

/** Write a JSON-RPC error with no id: the one shape every refusal of `/mcp` is answered in. */
export function rpcError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
  data?: Record<string, unknown>,
): void {
  const error = { code, message, ...(data ? { data } : {}) };
  const body = JSON.stringify({ jsonrpc: '2.0', error, id: null });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

/** Write the JSON-RPC error answer of `error` (its status, message and hint; the svc code in `data`). */
export function sendRpcRefusal(res: ServerResponse, error: SvcError): void {
  rpcError(
    res,
    codeStatus(error.code),
    ErrorCode.InvalidRequest,
    error.hint ? `${error.message}; ${error.hint}` : error.message,
    {},
    { code: error.code, ...(error.hint ? { hint: error.hint } : {}) },
  );
}
