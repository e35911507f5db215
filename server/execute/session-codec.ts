/**
 * A session's state as one JSON text and back, for shared stores (Redis). Lossless: the maps
 * (pins, tokens, pages, ops) become arrays of `[key, value]` pairs so their insertion order
 * survives, the symbol table goes through `SymbolTable.toJSON()` / `SymbolTable.fromJSON()`, and an
 * optional field that is undefined stays absent. Everything else in a session is plain JSON data.
 * The text carries a format version (`v`) so a later format can still read an older one.
 */
import { SymbolTable, type SymbolTableJson } from '../../compiler/symbols.js';
import type { OpDescriptor, PageEntry, PlanToken, SessionState } from './state.js';

/** The format version written; decoding refuses any other. */
export const SESSION_FORMAT = 1;

/** The JSON form of a session. */
interface SessionJson extends Omit<SessionState, 'pins' | 'symbols' | 'tokens' | 'pages' | 'ops'> {
  v: typeof SESSION_FORMAT;
  pins: Array<[string, string]>;
  symbols: SymbolTableJson;
  tokens: Array<[string, PlanToken]>;
  pages: Array<[string, PageEntry]>;
  ops: Array<[string, OpDescriptor]>;
}

/** The session as JSON text. */
export function encodeSession(s: SessionState): string {
  const json: SessionJson = {
    v: SESSION_FORMAT,
    ...s,
    pins: [...s.pins],
    symbols: s.symbols.toJSON(),
    tokens: [...s.tokens],
    pages: [...s.pages],
    ops: [...s.ops],
  };
  return JSON.stringify(json);
}

/**
 * A fresh session state from `encodeSession` text (a new object each call: nothing is shared). Its
 * keys keep the order of the text, so encoding it again unchanged gives the same text.
 */
export function decodeSession(text: string): SessionState {
  const json = JSON.parse(text) as unknown;
  if (!isSessionJson(json)) throw new Error(`a stored session is not in session format ${SESSION_FORMAT}`);
  const { v: _v, ...rest } = json;
  // A key spread in first keeps its place when it is given again: the order of the text stays.
  return {
    ...rest,
    pins: new Map(json.pins),
    symbols: SymbolTable.fromJSON(json.symbols),
    tokens: new Map(json.tokens),
    pages: new Map(json.pages),
    ops: new Map(json.ops),
  };
}

/** Enough of a shape check to catch a foreign or older value before it is used as a session. */
function isSessionJson(j: unknown): j is SessionJson {
  if (typeof j !== 'object' || j === null) return false;
  const o = j as Record<string, unknown>;
  return (
    o.v === SESSION_FORMAT &&
    typeof o.prompt_hash === 'string' &&
    typeof o.session === 'string' &&
    ['pins', 'tokens', 'pages', 'ops', 'runs', 'logical'].every((k) => Array.isArray(o[k])) &&
    typeof o.symbols === 'object' &&
    o.symbols !== null &&
    typeof o.counters === 'object'
  );
}
