/**
 * Calls at the head of a chain or on a row: an entity expression (a get by id, or a list through
 * the default query or search capability that takes the given names) and a capability call with
 * named arguments.
 */
import type { Capability, Entity } from '../pack/cgs.js';
import type { Arg, Call, Value } from './ast.js';
import { buildStep } from './build-step.js';
import { objectAsArgs, showable, sourceOf } from './fix-text.js';
import type { PlanArg, PlanStep } from './plan.js';
import { parseTemplate } from '../pack/template.js';
import { LIMIT_ARG, ORDER_ARG, SORT_ARG } from './resolve-options.js';
import type { ResolveState, Shape } from './resolve-state.js';
import { defaultReads, singletonRead } from './symbols.js';
import { exampleLiteral } from './values.js';

/** The default reads of an entity, by its capability list (registries never change a list they gave out). */
const readsByList = new WeakMap<Capability[], ReturnType<typeof defaultReads>>();

function readsOf(st: ResolveState, api: string, entity: string): ReturnType<typeof defaultReads> {
  const list = st.opts.registry.capabilitiesOf(api, entity);
  let reads = readsByList.get(list);
  if (!reads) readsByList.set(list, (reads = defaultReads(st.opts.registry, api, entity)));
  return reads;
}

/** `e1("b-1")`, `e1(city="Berlin")`: picks the read capability the arguments fit. */
export function resolveEntityCall(st: ResolveState, api: string, entity: Entity, call: Call): Shape | undefined {
  const reads = readsOf(st, api, entity.name);
  const positional: Arg[] = [];
  const named: Arg[] = [];
  for (const a of call.args ?? []) (a.name ? named : positional).push(a);
  if (positional.length > 0) {
    // A get whose path takes more than the id (`/repos/{owner}/{repo}/issues/{index}`) takes those by name.
    const scoped = !!reads.get && reads.get.params.some((p) => p.required && p.name !== reads.get!.id_param);
    if (positional.length > 1 || (named.length > 0 && !scoped))
      return st.fail(
        'syntax_error',
        call.span,
        'only a get by id takes a value without a name',
        st.suggest(() => positionalHint(st, call, positional)),
      );
    // An object or a list is never an id of a scalar type: say what was meant instead.
    const idType = reads.get?.params.find((p) => p.name === reads.get!.id_param)?.type;
    const shaped =
      idType === 'object' || idType === 'array' ? undefined : positionalShapeHint(st, call, positional[0]!.value);
    if (shaped) return st.fail('wrong_type', positional[0]!.span, shaped.message, shaped.hint);
    if (!reads.get)
      return st.fail(
        'unknown_argument',
        positional[0]!.span,
        `${api}:${entity.name} has no get capability to fetch one row by id`,
        singletonHint(st, api, entity) ?? 'list rows with filters instead',
      );
    return buildStep(st, api, entity, reads.get, call, named, { [reads.get.id_param!]: positional[0]! });
  }
  const names: string[] = [];
  for (const a of named) if (!RESERVED.includes(a.name!.text)) names.push(a.name!.text);
  const takes = (c: Capability | undefined) => !!c && takesAll(c, names);
  if (reads.get && names.length === 1 && names[0] === reads.get.id_param && !takes(reads.query)) {
    return buildStep(st, api, entity, reads.get, call, named, {});
  }
  // A search is chosen by its own terms (`q` given): it wins over a list that takes `q` as a filter too.
  if (reads.search && takes(reads.search) && searchTerms(reads.search, names))
    return buildStep(st, api, entity, reads.search, call, named, {}, undefined, reads);
  if (reads.query && takes(reads.query))
    return buildStep(st, api, entity, reads.query, call, named, {}, undefined, reads);
  if (reads.search && takes(reads.search))
    return buildStep(st, api, entity, reads.search, call, named, {}, undefined, reads);
  const base = reads.query ?? reads.search;
  if (!base)
    return st.fail(
      'unknown_argument',
      call.span,
      `${api}:${entity.name} has no query or search capability`,
      reads.get
        ? `fetch one row by id: ${call.name.text}("<id>")`
        : (singletonHint(st, api, entity) ?? 'use one of its m# capabilities'),
    );
  // Report against the capability that takes the most of the given names.
  const best = [reads.query, reads.search]
    .filter((c): c is Capability => !!c)
    .sort((a, b) => score(b, names) - score(a, names))[0]!;
  return buildStep(st, api, entity, best, call, named, {}, undefined, reads);
}

/** `m3(name="Pen")`, or on a row (`onRow`): `e1("b-1").m2(...)` passes the row's id. */
export function resolveCapabilityCall(
  st: ResolveState,
  api: string,
  cap: Capability,
  call: Call,
  onRow: Shape | undefined,
): Shape | undefined {
  const entity = st.opts.registry.entity(api, cap.entity)!;
  const args = call.args ?? [];
  const pos = args.find((a) => !a.name);
  if (pos) {
    const fields = objectAsArgs(st.lines.text, pos.value);
    const fix = `${call.name.text}(${
      fields ??
      cap.params
        .slice(0, 2)
        .map((p) => `${p.name}=${exampleLiteral(p)}`)
        .join(', ')
    })`;
    const how = fields ? 'arguments are written name=value, not as an object: write ' : 'write ';
    return st.fail('syntax_error', pos.span, `\`${call.name.text}\` takes named arguments`, how + fix);
  }
  const pre: Record<string, Arg | PlanArg> = {};
  if (onRow) {
    if (!cap.id_param)
      return st.fail(
        'not_on_row',
        call.name.span,
        `\`${call.name.text}\` (${cap.name}) does not act on one row`,
        `call it on its own line: ${call.name.text}(...)`,
      );
    pre[cap.id_param] = { ref: { step: onRow.step.id, field: onRow.entity.id_field } };
    Object.assign(pre, pathScope(st, cap, onRow.step, args));
  }
  return buildStep(st, api, entity, cap, call, args, pre, onRow);
}

/**
 * The path parameters of row capability `cap` that `source` (the capability that produced the row)
 * takes too, the id parameter aside: `/repos/{owner}/{repo}/issues/{n}/close` shares owner and repo
 * with `/repos/{owner}/{repo}/issues/{n}`. Only path parameters: a list filter is not an argument
 * of an update that happens to have a parameter of the same name.
 */
export function sharedPathParams(cap: Capability, source: Capability): string[] {
  const theirs = new Set(parseTemplate(source.http.path).params);
  return parseTemplate(cap.http.path).params.filter((n) => n !== cap.id_param && theirs.has(n));
}

/** The shared path parameters, taken from the step that produced the row unless the call gives them. */
function pathScope(st: ResolveState, cap: Capability, from: PlanStep, args: Arg[]): Record<string, PlanArg> {
  const source = st.opts.registry.capability(from.api, from.capability);
  const out: Record<string, PlanArg> = {};
  for (const name of source ? sharedPathParams(cap, source) : []) {
    const arg = from.args[name];
    if (arg && !args.some((a) => a.name?.text === name)) out[name] = arg;
  }
  return out;
}

/** `its one row has no id: read it with m3()`, for an entity that has a singleton get (`GET /user`). */
function singletonHint(st: ResolveState, api: string, entity: Entity): string | undefined {
  const one = singletonRead(st.opts.registry, api, entity.name);
  if (!one) return undefined;
  const req = one.params.filter((p) => p.required).map((p) => `${p.name}=${exampleLiteral(p)}`);
  const head = st.opts.symbols?.capabilitySymbol(api, one.name)?.sym ?? `${api}:${one.name}`;
  return `its one row has no id: read it with ${head}(${req.join(', ')})`;
}

function score(c: Capability, names: string[]): number {
  return names.filter((n) => c.params.some((p) => p.name === n)).length;
}

/** `e1("b-1", "b-2")`: one row per call; anything else: name every argument. */
function positionalHint(st: ResolveState, call: Call, positional: Arg[]): string {
  const head = call.name.text;
  const ids = positional.every((a) => a.value.kind === 'string' || a.value.kind === 'integer');
  const calls = positional.map((a) => `${head}(${sourceOf(st.lines.text, a.value.span)})`);
  if (ids && positional.length === (call.args ?? []).length && calls.every(showable))
    return `one row per call: ${calls.slice(0, 2).join(' then ')} on separate lines, or name every argument: ${head}(field=value)`;
  return `write ${head}("<id>") for one row, or name every argument: ${head}(field=value)`;
}

/** A JSON object or a list of ids where one id goes: the named arguments, or one call per id. */
function positionalShapeHint(st: ResolveState, call: Call, v: Value): { message: string; hint: string } | undefined {
  const head = call.name.text;
  if (v.kind === 'object') {
    const args = objectAsArgs(st.lines.text, v);
    const fix = args === undefined ? `${head}(field=value)` : `${head}(${args})`;
    return {
      message: `\`${head}\` takes named arguments, not an object`,
      hint: `arguments are written name=value: ${showable(fix) ? fix : `${head}(field=value)`}`,
    };
  }
  if (v.kind === 'list' && v.items.length > 0) {
    const calls = v.items.slice(0, 2).map((i) => `${head}(${sourceOf(st.lines.text, i.span)})`);
    return {
      message: `\`${head}\` takes one id, not a list`,
      hint: `fetch one row per call: ${calls.every(showable) ? calls.join(' then ') : `${head}("<id>")`} on separate lines`,
    };
  }
  return undefined;
}

/** Arguments every list takes besides its parameters (a parameter of the same name wins, see build-step.ts). */
const RESERVED: readonly string[] = [LIMIT_ARG, SORT_ARG, ORDER_ARG];

/** `cap` has a parameter of every name (loops: this runs for every entity call). */
function takesAll(cap: Capability, names: string[]): boolean {
  for (const n of names) {
    let found = false;
    for (const p of cap.params)
      if (p.name === n) {
        found = true;
        break;
      }
    if (!found) return false;
  }
  return true;
}

/** Every required parameter of a search that has some (its search terms) is among the names. */
function searchTerms(search: Capability, names: string[]): boolean {
  const req = search.params.filter((p) => p.required);
  return req.length > 0 && req.every((p) => names.includes(p.name));
}
