import * as crypto from 'node:crypto';

/**
 * Canonical JSON: object keys sorted by code unit, no whitespace; byte-equal to
 * fast-json-stable-stringify on every input (a property test holds the two equal, integer-like
 * keys included). Every hash and commit id in svc is taken over this form. It is written member by
 * member, not by `JSON.stringify` of a sorted copy: JavaScript objects put integer-like keys
 * (`"2"`, `"10"`) first in numeric order whatever their insertion order, so a sorted copy would
 * write `{"2":..,"10":..}` where the sorted order is `{"10":..,"2":..}`.
 */
export function canonicalJson(value: unknown): string {
  return written(value, new Set()) ?? 'undefined';
}

/** One value as fast-json-stable-stringify writes it; undefined for what JSON leaves out. */
function written(value: unknown, open: Set<object>): string | undefined {
  let v = value;
  if (v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function')
    v = (v as { toJSON: () => unknown }).toJSON();
  if (v === undefined) return undefined;
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : 'null';
  if (typeof v !== 'object') return JSON.stringify(v);
  if (v === null) return 'null';
  if (open.has(v)) throw new TypeError('Converting circular structure to JSON');
  open.add(v);
  let out: string;
  if (Array.isArray(v)) out = `[${v.map((x) => written(x, open) ?? 'null').join(',')}]`;
  else {
    const parts: string[] = [];
    for (const k of Object.keys(v).sort()) {
      const member = written((v as Record<string, unknown>)[k], open);
      if (member !== undefined) parts.push(`${JSON.stringify(k)}:${member}`);
    }
    out = `{${parts.join(',')}}`;
  }
  open.delete(v);
  return out;
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
