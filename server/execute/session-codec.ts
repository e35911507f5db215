/**
 * A session's state as JSON text and back, for shared stores (Redis). Lossless: the maps
 * (pins, tokens, pages, ops) become arrays of `[key, value]` pairs so their insertion order
 * survives, the symbol table goes through `SymbolTable.toJSON()` / `SymbolTable.fromJSON()`, and an
 * optional field that is undefined stays absent. Everything else in a session is plain JSON data.
 * The text carries a format version (`v`) so a later format can still read an older one.
 *
 * Two forms: the whole session (`encodeSession`, format 1), and its core (`encodeCore`, format 2):
 * everything but the page handles, plan tokens, runs and counters, which the Redis repository
 * keeps item by item under keys of their own (redis-items.ts), so a request does not move them.
 */
import { SymbolTable, type SymbolTableJson } from '../../compiler/symbols.js';
import type { OpDescriptor, PageEntry, PlanToken, SessionState } from './state.js';

/** What the core of a session leaves out: kept item by item apart from it (redis-items.ts). */
export type CoreState = Omit<SessionState, 'pages' | 'tokens' | 'runs' | 'counters'>;

/** The format version of a core text; decoding refuses any other. */
export const CORE_FORMAT = 2;

/** The JSON form of a session's core. */
interface CoreJson extends Omit<CoreState, 'pins' | 'symbols' | 'ops'> {
  v: typeof CORE_FORMAT;
  pins: Array<[string, string]>;
  symbols: SymbolTableJson;
  ops: Array<[string, OpDescriptor]>;
}

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
  return { ...rest, pins: new Map(json.pins), symbols: SymbolTable.fromJSON(json.symbols), ops: new Map(json.ops) };
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
