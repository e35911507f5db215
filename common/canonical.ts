import * as crypto from 'node:crypto';

/**
 * Canonical JSON: object keys sorted, no whitespace, exactly what fast-json-stable-stringify
 * writes for JSON data (a property test holds the two byte-identical). Every hash in svc is
 * taken over this form; sorting first and letting JSON.stringify write is about 3x faster.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeysDeep(value)) ?? 'undefined';
}

/** Node's one-shot digest (20.12+): no Hash object per call, about half the time on short inputs. */
const oneShot = (crypto as { hash?: (algorithm: string, data: string | Uint8Array, encoding: 'hex') => string }).hash;

/** Lower-case hex SHA-256 of a string (UTF-8) or bytes. */
export function sha256Hex(data: string | Uint8Array): string {
  return oneShot ? oneShot('sha256', data, 'hex') : crypto.createHash('sha256').update(data).digest('hex');
}

/** SHA-256 hex of the canonical JSON of a value. */
export function canonicalHash(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}

/** Deep copy of a JSON value with object keys sorted, for pretty but deterministic files. */
export function sortKeysDeep<T>(value: T): T {
  if (Array.isArray(value)) return (value as unknown[]).map((v) => sortKeysDeep(v)) as T;
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[k];
      if (v !== undefined) out[k] = sortKeysDeep(v);
    }
    return out as T;
  }
  return value;
}
