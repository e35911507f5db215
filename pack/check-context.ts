/**
 * What the semantic checks of a CGS share: the located problem they report, the `fail` callback
 * that records one, the by-name index of first declarations, and the duplicate-name rule.
 */
import type { ErrorCode, SvcError } from '../common/errors.js';
import type { Capability, Entity } from './cgs.js';

/** A problem and the CGS JSON pointer it is about. */
export interface Located {
  error: SvcError;
  at: string;
}

/** Names whose declarations were dropped earlier (schema errors): references to them are not re-reported. */
export type Poisoned = ReadonlySet<string>;

/** Records one problem at a CGS JSON pointer. */
export type Fail = (at: string, code: ErrorCode, message: string, hint?: string) => void;

/** True for a declared (or dropped) entity name; `names` lists the declared ones, for hints. */
export type KnownEntity = ((n: string) => boolean) & { names: string[] };

/** The first declaration of each entity and capability name. */
export interface Index {
  entities: Map<string, Entity>;
  capabilities: Map<string, Capability>;
}

/** The first item of each name (a later one is a duplicate_name): lookups stay linear in big catalogs. */
export function firstByName<T extends { name: string }>(items: T[]): Map<string, T> {
  const out = new Map<string, T>();
  for (const x of items) if (!out.has(x.name)) out.set(x.name, x);
  return out;
}

/** Reports each name of `names` declared a second time, at `${at}/${index}`. */
export function duplicates(names: string[], at: string, what: string, fail: Fail): void {
  const seen = new Set<string>();
  names.forEach((n, i) => {
    if (seen.has(n))
      fail(
        `${at}/${i}`,
        'duplicate_name',
        `${what} \`${n}\` is declared twice`,
        `rename or remove one of the two \`${n}\` declarations`,
      );
    seen.add(n);
  });
}
