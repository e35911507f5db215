/**
 * The line that confirms a write which returns nothing (a delete, an action without a body):
 * `deleted brewery:Beer 3`, `retireBeer done: brewery:Beer 3`. The ids are the values of the
 * capability's path parameters in each call (a fan-out names each row, the first 10 of them).
 */
import type { Capability } from '../pack/cgs.js';
import type { Values } from './request.js';

const SHOWN = 10;

export function doneLine(api: string, cap: Capability, sets: readonly Values[]): string {
  const names = [...cap.http.path.replace(/\{\{|\}\}/g, '').matchAll(/\{([^{}]+)\}/g)].map((m) => m[1]!);
  const ids = names.length
    ? sets.map((v) => names.map((n) => (typeof v[n] === 'string' ? v[n] : JSON.stringify(v[n]))).join('/'))
    : [];
  const more = ids.length > SHOWN ? ` and ${ids.length - SHOWN} more` : '';
  const target = `${api}:${cap.entity}${ids.length ? ' ' + ids.slice(0, SHOWN).join(', ') + more : ''}`;
  return cap.kind === 'delete' ? `deleted ${target}` : `${cap.name} done: ${target}`;
}
