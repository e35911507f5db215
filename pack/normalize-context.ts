/**
 * What normalizing one catalog source records as it goes: where each CGS node came from (so that
 * diagnostics found on the CGS point at file:line:col of the source), the problems found, and
 * the names dropped for schema errors ("poisoned").
 */
import type { SvcError } from '../common/errors.js';
import { svcError } from '../common/errors.js';
import type { KeyPath, SourceData } from './source.js';

export interface Origin {
  src: SourceData;
  path: KeyPath;
}

export type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

export class NormalizeContext {
  /** CGS JSON pointer -> where in the source it was written. */
  readonly origins = new Map<string, Origin>();
  readonly errors: Array<{ error: SvcError; at: string }> = [];
  constructor(readonly poisoned: Set<string>) {}

  /** Record that the CGS node at pointer `at` was written at `path` of `src`. */
  mark(at: string, src: SourceData, path: KeyPath): void {
    this.origins.set(at, { src, path });
  }

  fail(at: string, code: SvcError['code'], message: string, hint?: string): void {
    this.errors.push({ error: svcError(code, message, hint ? { hint } : {}), at });
  }
}

/**
 * A text field of validated source data: a string as it is, a number or boolean written out, and
 * `fallback` for anything else (absent, null, or a shape the schema check already reported).
 */
export function text(v: unknown, fallback = ''): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return fallback;
}
