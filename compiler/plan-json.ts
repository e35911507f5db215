/**
 * The canonical JSON of a plan's hashed part (`{version, steps, bind, return}`): byte for byte
 * what `canonicalJson` (common/canonical.ts) writes, written straight from the plan instead of
 * from a deep copy with sorted keys (that copy and its `JSON.stringify` were about a fifth of a
 * long program's compile). A step's keys are known, so they are written in sorted order; a
 * string that needs no escape is quoted as it is. Anything off the plan's usual shape (an unknown
 * key, a value of another type, a key JavaScript objects order by number) sends the whole value
 * to `canonicalJson`; nests, sorts, relations and object literals are written by it too.
 */
import { canonicalJson } from '../common/canonical.js';

/*
 * The plan's shape as this module reads it (`Plan` of plan.ts fits it; plan.ts imports this
 * module, so it does not import plan.ts). Values of other types are handled: see `written`.
 */
type PlanArg = { lit: unknown } | { ref: { step: string; field: string } };
interface PlanStep {
  id: string;
  op: string;
  api: string;
  cgs_hash: string;
  entity: string;
  capability: string;
  args: Record<string, PlanArg>;
  depends_on: string[];
  effect: string;
  limit?: number;
  sort?: unknown;
  via?: unknown;
  fanout?: { from: string; max: number };
  nest?: unknown;
  projection?: string[];
}
interface Plan {
  version: number;
  steps: PlanStep[];
  bind: Record<string, string>;
  return: string[];
}

/** `canonicalJson({ version, steps, bind, return })` of the plan. */
export function planJson(plan: Plan): string {
  const { version, steps, bind, return: ret } = plan;
  try {
    return written(plan) ?? canonicalJson({ version, steps, bind, return: ret });
  } finally {
    names.clear();
    frames.clear();
  }
}

/**
 * Strings JSON.stringify writes as they are, between quotes: no `"`, no backslash, no control
 * character (below U+0020), no surrogate (the class lists what is allowed instead).
 */
const PLAIN = /^[ !#-[\]-\ud7ff\ue000-\uffff]*$/;

/** `JSON.stringify` of a string, quoting a plain one directly. */
export function jsonString(s: string): string {
  return PLAIN.test(s) ? `"${s}"` : JSON.stringify(s);
}

/** A string as JSON.stringify writes it; undefined for anything else. */
function str(s: unknown): string | undefined {
  return typeof s === 'string' ? jsonString(s) : undefined;
}

/**
 * The names a plan repeats on every step (catalog, hash, entity, capability, argument and field
 * names), quoted once per plan: `names` is emptied after each plan, so it never grows.
 */
const names = new Map<string, string>();

/** `str` of a name a plan repeats. */
function name(s: unknown): string | undefined {
  if (typeof s !== 'string') return undefined;
  let q = names.get(s);
  if (q === undefined) names.set(s, (q = jsonString(s)));
  return q;
}

/** A list of strings; undefined for anything else. */
function strings(xs: unknown, quote: (s: unknown) => string | undefined): string | undefined {
  if (!Array.isArray(xs)) return undefined;
  let out = '[';
  for (let i = 0; i < xs.length; i++) {
    const s = quote(xs[i]);
    if (s === undefined) return undefined;
    out += i ? `,${s}` : s;
  }
  return `${out}]`;
}

/** The keys of a plain record, sorted; undefined when one of them is ordered otherwise by JavaScript objects. */
function sortedKeys(r: unknown): string[] | undefined {
  if (typeof r !== 'object' || r === null || Array.isArray(r)) return undefined;
  const keys = Object.keys(r);
  // An insertion sort: the same order as `sort()` (by UTF-16 code units), without its scratch
  // space, for the few keys of arguments; long records (bindings) take `sort()`.
  if (keys.length > 8) keys.sort();
  else
    for (let i = 1; i < keys.length; i++) {
      const k = keys[i]!;
      let j = i - 1;
      for (; j >= 0 && keys[j]! > k; j--) keys[j + 1] = keys[j]!;
      keys[j + 1] = k;
    }
  for (const k of keys) {
    const c = k.charCodeAt(0);
    if ((c >= 48 && c <= 57) || k === '__proto__') return undefined;
  }
  return keys;
}

/** The step keys this module writes. */
const STEP_KEYS: ReadonlySet<string> = new Set(
  'api args capability cgs_hash depends_on effect entity fanout id limit nest op projection sort via'.split(' '),
);

/**
 * True when the own keys of `o` whose value is not undefined (the keys `canonicalJson` writes)
 * are `n` keys, each one of `names`, and no inherited key has a value.
 */
function ownKeys(o: object, names: ReadonlySet<string>, n: number): boolean {
  // `for...in` lists inherited keys too, unless the prototype is a clean Object.prototype.
  const plain = cleanProto && Object.getPrototypeOf(o) === Object.prototype;
  let count = 0;
  for (const k in o) {
    if ((o as Record<string, unknown>)[k] === undefined) continue;
    if ((!plain && !Object.hasOwn(o, k)) || !names.has(k)) return false;
    count++;
  }
  return count === n;
}

/** Object.prototype has no enumerable key (as it should; checked once per plan). */
let cleanProto = false;

function protoIsClean(): boolean {
  for (const _ in Object.prototype) return false;
  return true;
}

/** Not a function or a symbol (which an object leaves out, but `canonicalJson` alone writes as `undefined`). */
const isData = (v: unknown): boolean => typeof v !== 'function' && typeof v !== 'symbol';

const LIT: ReadonlySet<string> = new Set(['lit']);
const REF: ReadonlySet<string> = new Set(['ref']);
const REF_KEYS: ReadonlySet<string> = new Set(['field', 'step']);
const FANOUT_KEYS: ReadonlySet<string> = new Set(['from', 'max']);

function written(plan: Plan): string | undefined {
  const { version, steps, bind, return: ret } = plan;
  if (typeof version !== 'number' || !Array.isArray(steps)) return undefined;
  cleanProto = protoIsClean();
  const keys = sortedKeys(bind);
  const returned = strings(ret, str);
  if (!keys || returned === undefined) return undefined;
  let out = '{"bind":{';
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const v = str(bind[k]);
    if (v === undefined) return undefined;
    out += `${i ? ',' : ''}${str(k)}:${v}`;
  }
  out += `},"return":${returned},"steps":[`;
  for (let i = 0; i < steps.length; i++) {
    const s = step(steps[i]);
    if (s === undefined) return undefined;
    out += i ? `,${s}` : s;
  }
  return `${out}],"version":${JSON.stringify(version)}}`;
}

/**
 * The JSON around a step's variable parts, for the catalog names it repeats (`api`, `capability`,
 * `cgs_hash`, `effect`, `entity`, `op`): written once per capability of a plan, so each step is a
 * few long pieces (which also makes the final string cheaper to flatten for the hash).
 */
interface Frame {
  api: string;
  hash: string;
  effect: string;
  entity: string;
  op: string;
  /** `{"api":…,"args":`, `,"capability":…,"cgs_hash":…,"depends_on":`, `,"effect":…,"entity":…`, `,"op":…` */
  open: string;
  mid: string;
  tail: string;
  op_: string;
}

/** Frames by capability name, for the plan being written (emptied after it, like `names`). */
const frames = new Map<string, Frame>();

function frameOf(s: PlanStep): Frame | undefined {
  const { api, capability, cgs_hash: hash, effect, entity, op } = s;
  if (typeof capability !== 'string') return undefined;
  const f = frames.get(capability);
  if (f && f.api === api && f.hash === hash && f.effect === effect && f.entity === entity && f.op === op) return f;
  const [a, c, h, e, n, o] = [str(api), str(capability), str(hash), str(effect), str(entity), str(op)];
  if (a === undefined || c === undefined || h === undefined || e === undefined || n === undefined || o === undefined)
    return undefined;
  const frame: Frame = {
    api,
    hash,
    effect,
    entity,
    op,
    open: `{"api":${a},"args":`,
    mid: `,"capability":${c},"cgs_hash":${h},"depends_on":`,
    tail: `,"effect":${e},"entity":${n}`,
    op_: `,"op":${o}`,
  };
  frames.set(capability, frame);
  return frame;
}

/** One step, its keys in sorted order; undefined when it is not of the usual shape. */
function step(s: PlanStep | undefined): string | undefined {
  if (typeof s !== 'object' || s === null || Array.isArray(s)) return undefined;
  const frame = frameOf(s);
  const args = stepArgs(s.args);
  const deps = strings(s.depends_on, str);
  const id = str(s.id);
  if (frame === undefined || args === undefined || deps === undefined || id === undefined) return undefined;
  let known = 9;
  let out = frame.open + args + frame.mid + deps + frame.tail;
  if (s.fanout !== undefined) {
    const f = s.fanout;
    if (typeof f !== 'object' || f === null || typeof f.max !== 'number' || !ownKeys(f, FANOUT_KEYS, 2))
      return undefined;
    const from = str(f.from);
    if (from === undefined) return undefined;
    out += `,"fanout":{"from":${from},"max":${JSON.stringify(f.max)}}`;
    known++;
  }
  out += `,"id":${id}`;
  if (s.limit !== undefined) {
    if (typeof s.limit !== 'number') return undefined;
    out += `,"limit":${JSON.stringify(s.limit)}`;
    known++;
  }
  if (s.nest !== undefined) {
    if (!isData(s.nest)) return undefined;
    out += `,"nest":${canonicalJson(s.nest)}`;
    known++;
  }
  out += frame.op_;
  if (s.projection !== undefined) {
    const p = strings(s.projection, name);
    if (p === undefined) return undefined;
    out += `,"projection":${p}`;
    known++;
  }
  if (s.sort !== undefined) {
    if (!isData(s.sort)) return undefined;
    out += `,"sort":${canonicalJson(s.sort)}`;
    known++;
  }
  if (s.via !== undefined) {
    if (!isData(s.via)) return undefined;
    out += `,"via":${canonicalJson(s.via)}`;
    known++;
  }
  return ownKeys(s, STEP_KEYS, known) ? `${out}}` : undefined;
}

/** The arguments, keys sorted: `{"lit":...}` or `{"ref":{"field":...,"step":...}}` each. */
function stepArgs(args: Record<string, PlanArg>): string | undefined {
  const keys = sortedKeys(args);
  if (!keys) return undefined;
  let out = '{';
  let n = 0;
  for (const k of keys) {
    const v = args[k];
    if (v === undefined) continue;
    const a = arg(v);
    if (a === undefined) return undefined;
    out += `${n++ ? ',' : ''}${name(k)}:${a}`;
  }
  return `${out}}`;
}

function arg(v: PlanArg): string | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  if (ownKeys(v, LIT, 1)) {
    const lit: unknown = (v as { lit: unknown }).lit;
    if (typeof lit === 'string') return `{"lit":${str(lit)}}`;
    if (lit === null || typeof lit === 'number' || typeof lit === 'boolean') return `{"lit":${JSON.stringify(lit)}}`;
    return typeof lit === 'object' ? `{"lit":${canonicalJson(lit)}}` : undefined;
  }
  if (!ownKeys(v, REF, 1)) return undefined;
  const r = (v as { ref: { field: unknown; step: unknown } }).ref;
  if (typeof r !== 'object' || r === null || !ownKeys(r, REF_KEYS, 2)) return undefined;
  const field = name(r.field);
  const from = str(r.step);
  return field === undefined || from === undefined ? undefined : `{"ref":{"field":${field},"step":${from}}}`;
}
