/**
 * A request to `/mcp` refused before it reaches the endpoint (the Host/Origin policy, a repeated
 * credential header): answered as `/mcp` answers its own refusals, a JSON-RPC error with no id,
 * with the HTTP status of the code and the svc code and hint in `data`.
 */
import type { ServerResponse } from 'node:http';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import type { SvcError } from '../../common/errors.js';
import { codeStatus } from '../http/status.js';

/** Write the JSON-RPC error answer of `error`. */
export function sendRpcRefusal(res: ServerResponse, error: SvcError): void {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    error: {
      code: ErrorCode.InvalidRequest,
      message: error.hint ? `${error.message}; ${error.hint}` : error.message,
      data: { code: error.code, ...(error.hint ? { hint: error.hint } : {}) },
    },
    id: null,
  });
  res.writeHead(codeStatus(error.code), {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}
