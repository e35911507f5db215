/**
 * The API key file (`SVC_AUTH_API_KEYS_FILE`): its schema, the row type read from it (one
 * definition), and reading it at startup, where every problem is a clear `auth_config_invalid`.
 */
import { readFile } from 'node:fs/promises';
import { Type, type Static } from '@sinclair/typebox';
import type { ErrorObject } from 'ajv';
import { check } from '../../pack/ajv.js';
import { errnoCode } from '../../pack/errno.js';
import { startupFail } from './startup-fail.js';

/**
 * The API key file (`SVC_AUTH_API_KEYS_FILE`): a JSON array of principals. Keys are compared
 * exactly, and HTTP drops the white space around a header value, so a key with leading or
 * trailing white space could never be presented: the schema refuses it. Other members of an
 * entry are ignored.
 */
const ApiKeyRowSchema = Type.Object({
  key: Type.String({ minLength: 1, pattern: '^\\S(?:[\\s\\S]*\\S)?$' }),
  tenant_id: Type.String({ minLength: 1 }),
  subject: Type.String({ minLength: 1 }),
});
export const ApiKeyFileSchema = Type.Array(ApiKeyRowSchema, { $id: 'svc:config/api-key-file' });
export type ApiKeyRow = Static<typeof ApiKeyRowSchema>;

/** The key file: a JSON array of {key, tenant_id, subject}, all non-empty strings, keys unique. */
export async function readKeyFile(path: string): Promise<ApiKeyRow[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    return startupFail(
      `SVC_AUTH_API_KEYS_FILE cannot be read (${errnoCode(e)})`,
      'point it at a JSON file: [{"key": "...", "tenant_id": "...", "subject": "..."}]',
    );
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return startupFail(
      'SVC_AUTH_API_KEYS_FILE is not valid JSON',
      'write a JSON array of {"key", "tenant_id", "subject"} objects',
    );
  }
  const file = check(ApiKeyFileSchema, data);
  if (!file.ok) return keyFileProblem(file.errors);
  const seen = new Map<string, number>();
  file.value.forEach((r, i) => {
    const first = seen.get(r.key);
    if (first !== undefined)
      startupFail(
        `entries ${first} and ${i} of SVC_AUTH_API_KEYS_FILE have the same key`,
        'give every principal its own key; one key cannot name two tenants',
      );
    seen.set(r.key, i);
  });
  return file.value.map((r) => ({ key: r.key, tenant_id: r.tenant_id, subject: r.subject }));
}

/** The startup failure for a key file that breaks its schema: the first bad entry, and why. */
function keyFileProblem(errors: ErrorObject[]): never {
  if (errors.some((e) => e.instancePath === ''))
    startupFail(
      'SVC_AUTH_API_KEYS_FILE must hold a JSON array',
      'write [{"key": "...", "tenant_id": "...", "subject": "..."}]',
    );
  const entry = (e: ErrorObject) => Number(e.instancePath.split('/')[1]);
  const i = errors.reduce((min, e) => Math.min(min, entry(e)), Infinity);
  const own = errors.filter((e) => entry(e) === i);
  // Only the white-space rule broken: say so (HTTP would drop the spaces from the header).
  if (own.every((e) => e.instancePath === `/${i}/key` && e.keyword === 'pattern')) {
    startupFail(
      `entry ${i} of SVC_AUTH_API_KEYS_FILE has a key with leading or trailing white space`,
      'remove the white space: HTTP drops it from the X-API-Key header, so that key could never match',
    );
  }
  return startupFail(
    `entry ${i} of SVC_AUTH_API_KEYS_FILE needs non-empty string key, tenant_id and subject`,
    'fix that entry; the server does not start with a malformed key file',
  );
}
