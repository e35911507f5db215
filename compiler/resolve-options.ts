/** What resolving a program is given: the registry, the session symbols and the bounds of fan-out and `limit=`. */
import type { Registry } from '../pack/registry.js';
import type { SymbolTable } from './symbols.js';

export interface ResolveOptions {
  registry: Registry;
  /** Session symbols; without them only qualified names (`api:Entity`) resolve. */
  symbols?: SymbolTable;
  /** Most rows a fan-out may iterate over (one vendor call per row). Default 50. */
  maxFanout?: number;
  /** Largest `limit=` a program may ask for. Default 10000. */
  maxLimit?: number;
  /** A caller that may only read: hints suggest no capability that writes. */
  readsOnly?: boolean;
}

export const DEFAULT_MAX_FANOUT = 50;
export const DEFAULT_MAX_LIMIT = 10_000;
/** The reserved argument asking a rows-returning step for more than one vendor page. */
export const LIMIT_ARG = 'limit';
/** The reserved arguments ordering a list that sorts: `sort="field"`, `order="asc"|"desc"`. */
export const SORT_ARG = 'sort';
export const ORDER_ARG = 'order';
