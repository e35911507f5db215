/**
 * The core of a session's state as JSON text and back, for the Redis repository: everything but
 * the page handles, plan tokens, runs and counters, which it keeps item by item under keys of
 * their own (redis-items.ts), so a request does not move them. Lossless: the maps (pins, ops)
 * become arrays of `[key, value]` pairs so their insertion order survives, the symbol table goes
 * through `SymbolTable.toJSON()` / `SymbolTable.fromJSON()`, and an optional field that is
 * undefined stays absent. The text carries a format version (`v`, 2: format 1 held the whole
 * session) so a later format can still read an older one.
 */
import { SymbolTable, type SymbolTableJson } from '../../compiler/symbols.js';
import type { OpDescriptor, SessionState } from './state.js';

/** What the core of a session leaves out: kept item by item apart from it (redis-items.ts). */
export type CoreState = Omit<SessionState, 'pages' | 'tokens' | 'runs' | 'counters'>;

/** The format version of a core text; decoding refuses any other. */
export const CORE_FORMAT = 2;

/** The JSON form of a session's core. */
interface CoreJson extends Omit<CoreState, 'pins' | 'symbols' | 'ops' | 'entity_writes'> {
  entity_writes?: Record<string, number>;
  v: typeof CORE_FORMAT;
  pins: Array<[string, string]>;
  symbols: SymbolTableJson;
  ops: Array<[string, OpDescriptor]>;
}

/** The core of a session as JSON text: its page handles, plan tokens, runs and counters left out. */
export function encodeCore(s: SessionState): string {
  const { pages: _pages, tokens: _tokens, runs: _runs, counters: _counters, ...core } = s;
  const json: CoreJson = {
    v: CORE_FORMAT,
    ...core,
    pins: [...s.pins],
    symbols: s.symbols.toJSON(),
    ops: [...s.ops],
  };
  return JSON.stringify(json);
}

/** A fresh core from `encodeCore` text (a new object each call; keys in the order of the text). */
export function decodeCore(text: string): CoreState {
  const json = JSON.parse(text) as unknown;
  if (!isCoreJson(json)) throw new Error(`a stored session core is not in format ${CORE_FORMAT}`);
  const { v: _v, ...rest } = json;
  return {
    ...rest,
    pins: new Map(json.pins),
    symbols: SymbolTable.fromJSON(json.symbols),
    ops: new Map(json.ops),
    // Cores stored before write counts were kept have none: no write counted yet.
    entity_writes: json.entity_writes ?? {},
  };
}

function isCoreJson(j: unknown): j is CoreJson {
  if (typeof j !== 'object' || j === null) return false;
  const o = j as Record<string, unknown>;
  return (
    o.v === CORE_FORMAT &&
    typeof o.prompt_hash === 'string' &&
    typeof o.session === 'string' &&
    ['pins', 'ops', 'logical'].every((k) => Array.isArray(o[k])) &&
    typeof o.symbols === 'object' &&
    o.symbols !== null
  );
}
