/**
 * Resolve and type-check a parsed program against the registry and the session symbols, and
 * build the plan IR. Never throws on user input: every problem is a diagnostic with a code, a
 * span and a hint; resolution goes on after an error so all problems are reported at once.
 */
import { MAX_SHOWN_ERRORS } from '../common/bound-errors.js';
import type { ErrorCode, SvcError } from '../common/errors.js';
import { svcError } from '../common/errors.js';
import { quote } from '../common/quote.js';
import { nearest } from '../common/suggest.js';
import type { Capability, Entity } from '../pack/cgs.js';
import { WRITE_KINDS } from '../pack/cgs.js';
import type { Registry } from '../pack/registry.js';
import type { Arg, Call, Chain, Name, Program, SrcSpan } from './ast.js';
import { MAX_PROGRAM_STATEMENTS, programTooLarge } from './limits.js';
import { PLAN_VERSION, type Plan, type PlanArg, type PlanStep } from './plan.js';
import { LineIndex } from './spans.js';
import { defaultReads, type SymbolTable } from './symbols.js';
import { checkLiteral, describeType, exampleLiteral } from './values.js';

export interface ResolveOptions {
  registry: Registry;
  /** Session symbols; without them only qualified names (`api:Entity`) resolve. */
  symbols?: SymbolTable;
  /** Most rows a fan-out may iterate over (one vendor call per row). Default 50. */
  maxFanout?: number;
  /** Largest `limit=` a program may ask for. Default 10000. */
  maxLimit?: number;
}

export const DEFAULT_MAX_FANOUT = 50;
export const DEFAULT_MAX_LIMIT = 10_000;
/** The reserved argument asking a rows-returning step for more than one vendor page. */
export const LIMIT_ARG = 'limit';

/** What a resolved expression yields. */
interface Shape {
  api: string;
  entity: Entity;
  card: 'rows' | 'row' | 'none';
  step: PlanStep;
  /** True when the step was made by this chain (so it may be folded or projected). */
  own: boolean;
}

type Target =
  | { kind: 'entity'; api: string; entity: Entity }
  | { kind: 'capability'; api: string; cap: Capability }
  | { kind: 'binding'; shape: Shape };

export function resolveProgram(program: Program, source: string, opts: ResolveOptions): { plan?: Plan; diagnostics: SvcError[] } {
  return new Resolver(source, opts).run(program);
}

class Resolver {
  private readonly lines: LineIndex;
  private readonly diags: SvcError[] = [];
  private readonly steps: PlanStep[] = [];
  /** The steps by id, and how many steps depend on each (so a lookup never scans `steps`). */
  private readonly byId = new Map<string, PlanStep>();
  private readonly dependents = new Map<string, number>();
  /** Step ids are never reused, even when a folded parent is dropped (renumber makes them dense). */
  private stepCount = 0;
  /** Set once the plan has more than `MAX_PROGRAM_STATEMENTS` steps: resolution stops there. */
  private tooLarge = false;
  /**
   * Set while resolving a statement after enough diagnostics to show: its diagnostics are only
   * counted, so they skip the "did you mean" search.
   */
  private quiet = false;
  private readonly bindings = new Map<string, Shape>();
  private readonly maxFanout: number;
  private readonly maxLimit: number;

  constructor(source: string, private readonly opts: ResolveOptions) {
    this.lines = new LineIndex(source);
    this.maxFanout = opts.maxFanout ?? DEFAULT_MAX_FANOUT;
    this.maxLimit = opts.maxLimit ?? DEFAULT_MAX_LIMIT;
  }

  private fail(code: ErrorCode, at: SrcSpan, message: string, hint?: string): undefined {
    this.diags.push(svcError(code, message, { span: this.lines.span(at), ...(hint ? { hint } : {}) }));
    return undefined;
  }

  /** A hint that searches for near names: skipped while `quiet`. */
  private suggest(hint: () => string): string | undefined {
    return this.quiet ? undefined : hint();
  }

  run(program: Program): { plan?: Plan; diagnostics: SvcError[] } {
    const bind: Record<string, string> = {};
    const ret: string[] = [];
    for (const st of program.statements) {
      if (this.tooLarge) break;
      this.quiet = this.diags.length >= MAX_SHOWN_ERRORS;
      if (st.kind === 'binding') {
        if (this.bindings.has(st.name.text)) {
          this.fail('duplicate_binding', st.name.span, `\`${quote(st.name.text)}\` is already bound`, 'pick a new name for this binding; a name is bound once per program');
          continue;
        }
        const shape = this.chain(st.expr);
        if (shape) {
          this.bindings.set(st.name.text, shape);
          bind[st.name.text] = shape.step.id;
        }
      } else if (st.kind === 'expr') {
        const shape = this.chain(st.expr);
        if (shape) ret.push(shape.step.id);
      } else {
        this.fail('continuation_not_alone', st.span, `\`${st.kind}(...)\` is dispatched by the server and cannot be compiled into a plan`, `send \`${st.kind}(${quote(st.handle.text)})\` as the whole program`);
      }
    }
    if (this.tooLarge) {
      return { diagnostics: [programTooLarge(`the plan has more than ${MAX_PROGRAM_STATEMENTS} steps; the limit is ${MAX_PROGRAM_STATEMENTS}`, this.lines.span(program.span))] };
    }
    if (this.diags.length) return { diagnostics: this.diags };
    if (ret.length === 0) {
      const last = this.steps[this.steps.length - 1];
      if (last) ret.push(last.id);
    }
    if (this.steps.length === 0) {
      return { diagnostics: [svcError('empty_program', 'the program runs nothing', { span: this.lines.span(program.span), hint: 'write an expression such as e1(city="Berlin")[name]' })] };
    }
    // Steps folded away leave gaps: renumber densely so equal programs give equal plans.
    return { plan: renumber({ version: PLAN_VERSION, steps: this.steps, bind, return: ret }), diagnostics: [] };
  }

  // ---- chains -------------------------------------------------------------------------------

  private chain(chain: Chain): Shape | undefined {
    const target = this.target(chain.head.name);
    if (!target) return undefined;
    let cur: Shape | undefined;
    if (target.kind === 'binding') {
      const b = quote(chain.head.name.text);
      if (chain.head.args) return this.fail('syntax_error', chain.head.span, `\`${b}\` is a binding, not something to call`, `use it as ${b}.<relation> or pass ${b}.<field> as an argument`);
      cur = { ...target.shape, own: false };
    } else if (target.kind === 'entity') {
      cur = this.entityCall(target.api, target.entity, chain.head);
    } else {
      cur = this.capabilityCall(target.api, target.cap, chain.head, undefined);
    }
    for (const m of chain.members) {
      if (!cur) return undefined;
      cur = this.member(cur, m);
    }
    if (cur && chain.projection) {
      if (!cur.own) return this.fail('syntax_error', chain.projection.span, 'a projection belongs where the rows are fetched', 'move the [fields] to the line that binds the name');
      const fields = cur.entity.fields.map((f) => f.name);
      const proj: string[] = [];
      for (const f of chain.projection.fields) {
        if (!fields.includes(f.text)) this.fail('projection_unknown_field', f.span, `${cur.api}:${cur.entity.name} has no field \`${quote(f.text)}\``, this.suggest(() => fieldHint(f.text, fields)));
        else if (!proj.includes(f.text)) proj.push(f.text);
      }
      if (cur.card === 'none') this.fail('projection_unknown_field', chain.projection.span, `\`${cur.step.capability}\` returns no rows to project`, 'remove the projection');
      cur.step.projection = proj;
    }
    return cur;
  }

  private target(name: Name): Target | undefined {
    const t = name.text;
    if (name.qualified) return this.qualified(name);
    if (/^p\d+$/.test(t)) return this.fail('legacy_symbol', name.span, `\`${quote(t)}\` is a legacy parameter symbol`, 'parameters are written with their wire names, e.g. city="Berlin"');
    if (/^s\d+$/.test(t)) return this.fail('legacy_slot', name.span, `\`${quote(t)}\` is a removed transport slot`, 'write the entity symbol (e1) or its qualified name (api:Entity)');
    const b = this.bindings.get(t);
    if (b) return { kind: 'binding', shape: b };
    const sym = this.opts.symbols?.lookup(t);
    if (sym?.kind === 'entity') {
      const entity = this.opts.registry.entity(sym.api, sym.entity);
      if (entity) return { kind: 'entity', api: sym.api, entity };
    } else if (sym?.kind === 'capability') {
      const cap = this.opts.registry.capability(sym.api, sym.capability);
      if (cap) return { kind: 'capability', api: sym.api, cap };
    } else if (sym?.kind === 'relation') {
      return this.fail('unknown_symbol', name.span, `\`${quote(t)}\` is a relation: it follows a row`, `write e.g. ${this.opts.symbols?.entitySymbol(sym.api, sym.entity)?.sym ?? `${sym.api}:${sym.entity}`}("<id>").${t}`);
    }
    return this.fail('unknown_symbol', name.span, `\`${quote(t)}\` is not a symbol of this session`, this.suggest(() => this.symbolHint(t)));
  }

  private qualified(name: Name): Target | undefined {
    const { api, entity: what } = name.qualified!;
    const entry = this.opts.registry.get(api);
    if (!entry) {
      const apis = this.opts.registry.list().map((e) => e.entry_id);
      return this.fail('unknown_symbol', name.span, `no catalog \`${quote(api)}\` is loaded`, this.suggest(() => listHint(api, apis, 'catalogs')));
    }
    const entity = this.opts.registry.entity(api, what);
    if (entity) return { kind: 'entity', api, entity };
    const cap = this.opts.registry.capability(api, what);
    if (cap) return { kind: 'capability', api, cap };
    const names = [...entry.cgs.entities.map((e) => `${api}:${e.name}`), ...entry.cgs.capabilities.map((c) => `${api}:${c.name}`)];
    return this.fail('unknown_symbol', name.span, `${api} has no entity or capability \`${quote(what)}\``, this.suggest(() => listHint(`${api}:${what}`, names, 'names')));
  }

  private symbolHint(t: string): string {
    const syms = this.opts.symbols?.all() ?? [];
    const label = new Map(syms.map((s) => [s.sym, s.kind === 'entity' ? `${s.api}:${s.entity}` : s.kind === 'capability' ? `${s.api}:${s.capability}` : `${s.entity}.${s.relation}`]));
    const cands = [...label.keys(), ...this.bindings.keys()];
    const near = nearest(t, cands, 3);
    const show = (c: string) => (label.has(c) ? `\`${c}\` (${label.get(c)})` : `\`${c}\``);
    if (near.length === 1) return `did you mean ${show(near[0]!)}?`;
    if (near.length > 1) return `did you mean one of: ${near.map(show).join(', ')}?`;
    if (syms.length === 0) return 'this session has no symbols yet: open a context with api:Entity seeds, or write qualified names such as brewery:Beer';
    return `symbols of this session: ${[...label.keys()].slice(0, 8).map(show).join(', ')}${label.size > 8 ? ', ...' : ''}`;
  }

  // ---- entity expressions ------------------------------------------------------------------

  private entityCall(api: string, entity: Entity, call: Call): Shape | undefined {
    const reads = defaultReads(this.opts.registry, api, entity.name);
    const args = call.args ?? [];
    const positional = args.filter((a) => !a.name);
    const named = args.filter((a) => a.name);
    const qn = `${api}:${entity.name}`;
    if (positional.length > 0) {
      if (positional.length > 1 || named.length > 0) return this.fail('syntax_error', call.span, 'only a get by id takes a value without a name', `write ${call.name.text}("<id>") for one row, or name every argument: ${call.name.text}(field=value)`);
      if (!reads.get) return this.fail('unknown_argument', positional[0]!.span, `${qn} has no get capability to fetch one row by id`, 'list rows with filters instead');
      return this.step(api, entity, reads.get, call, [], { [reads.get.id_param!]: positional[0]! });
    }
    const names = named.map((a) => a.name!.text).filter((n) => n !== LIMIT_ARG);
    const takes = (c: Capability | undefined) => !!c && names.every((n) => c.params.some((p) => p.name === n));
    if (reads.get && names.length === 1 && names[0] === reads.get.id_param && !takes(reads.query)) {
      return this.step(api, entity, reads.get, call, named, {});
    }
    if (reads.query && takes(reads.query)) return this.step(api, entity, reads.query, call, named, {});
    if (reads.search && takes(reads.search)) return this.step(api, entity, reads.search, call, named, {});
    const base = reads.query ?? reads.search;
    if (!base) return this.fail('unknown_argument', call.span, `${qn} has no query or search capability`, reads.get ? `fetch one row by id: ${call.name.text}("<id>")` : 'use one of its m# capabilities');
    // Report against the capability that takes the most of the given names.
    const best = [reads.query, reads.search].filter((c): c is Capability => !!c).sort((a, b) => score(b, names) - score(a, names))[0]!;
    return this.step(api, entity, best, call, named, {});
  }

  private capabilityCall(api: string, cap: Capability, call: Call, onRow: Shape | undefined): Shape | undefined {
    const entity = this.opts.registry.entity(api, cap.entity)!;
    const args = call.args ?? [];
    const pos = args.find((a) => !a.name);
    if (pos) return this.fail('syntax_error', pos.span, `\`${call.name.text}\` takes named arguments`, `write ${call.name.text}(${cap.params.slice(0, 2).map((p) => `${p.name}=${exampleLiteral(p)}`).join(', ')})`);
    const pre: Record<string, Arg | PlanArg> = {};
    if (onRow) {
      if (!cap.id_param) return this.fail('not_on_row', call.name.span, `\`${call.name.text}\` (${cap.name}) does not act on one row`, `call it on its own line: ${call.name.text}(...)`);
      pre[cap.id_param] = { ref: { step: onRow.step.id, field: onRow.entity.id_field } };
    }
    return this.step(api, entity, cap, call, args, pre, onRow);
  }

  // ---- members: relations and capabilities on rows -----------------------------------------

  private member(cur: Shape, m: Call): Shape | undefined {
    const t = m.name.text;
    if (cur.card === 'none') return this.fail('write_in_read_position', m.name.span, `\`${cur.step.capability}\` returns nothing to follow`, 'start a new line for the next expression');
    if (cur.step.effect === 'write') return this.fail('write_in_read_position', m.name.span, `the result of a write (\`${cur.step.capability}\`) cannot be followed`, 'bind the write and read in a separate line: x = m1(...) then e1(x.id).r1');
    if (/^p\d+$/.test(t)) return this.fail('legacy_symbol', m.name.span, `\`${quote(t)}\` is a legacy parameter symbol`, 'relations and capabilities are written as r#/m# symbols or wire names');
    const sym = this.opts.symbols?.lookup(t);
    const sameEntity = (api: string, entity: string) => api === cur.api && entity === cur.entity.name;
    let relName: string | undefined;
    if (sym?.kind === 'relation' && sameEntity(sym.api, sym.entity)) relName = sym.relation;
    else if (!sym && cur.entity.relations.some((r) => r.name === t)) relName = t;
    if (relName) return this.relation(cur, relName, m);
    let cap: Capability | undefined;
    if (sym?.kind === 'capability' && sameEntity(sym.api, sym.entity)) cap = this.opts.registry.capability(sym.api, sym.capability);
    else if (!sym) cap = this.opts.registry.capabilitiesOf(cur.api, cur.entity.name).find((c) => c.name === t);
    if (cap) return this.capabilityCall(cur.api, cap, m, cur);
    return this.fail('unknown_relation', m.name.span, sym ? `\`${quote(t)}\` belongs to ${sym.entity}, not to ${cur.entity.name}` : `${cur.api}:${cur.entity.name} has no relation or capability \`${quote(t)}\``, this.suggest(() => this.memberHint(cur, t)));
  }

  /** What may follow a row of `cur`: its relations (symbol and wire name) and its row capabilities. */
  private memberHint(cur: Shape, t: string): string {
    const s = this.opts.symbols;
    const label = new Map<string, string>();
    for (const r of cur.entity.relations) {
      const sym = s?.relationSymbol(cur.api, cur.entity.name, r.name)?.sym;
      label.set(sym ?? r.name, sym ? `\`${sym}\` (${r.name} -> ${r.target})` : `\`${r.name}\` (-> ${r.target})`);
      if (sym) label.set(r.name, `\`${r.name}\` (-> ${r.target})`);
    }
    for (const c of this.opts.registry.capabilitiesOf(cur.api, cur.entity.name)) {
      const sym = s?.capabilitySymbol(cur.api, c.name)?.sym;
      if (sym && c.id_param) label.set(sym, `\`${sym}\` (${c.name})`);
    }
    const near = nearest(t, [...label.keys()], 3);
    if (near.length) return `did you mean ${near.map((n) => label.get(n)).join(' or ')}?`;
    if (label.size === 0) return `${cur.entity.name} has no relations or row capabilities`;
    return `after a ${cur.entity.name} row: ${[...new Set(label.values())].join(', ')}`;
  }

  private relation(cur: Shape, relName: string, m: Call): Shape | undefined {
    const rel = cur.entity.relations.find((r) => r.name === relName)!;
    const cap = this.opts.registry.capability(cur.api, rel.capability)!;
    const target = this.opts.registry.entity(cur.api, rel.target)!;
    const pre: Record<string, PlanArg> = {};
    for (const [param, field] of Object.entries(rel.bind)) pre[param] = { ref: { step: cur.step.id, field } };
    const shape = this.step(cur.api, target, cap, m, m.args ?? [], pre, cur);
    // The parent may have been folded into a literal (see foldRef): then there is no step to come from.
    if (shape) shape.step.via = this.byId.get(cur.step.id) === cur.step ? { relation: rel.name, from: cur.step.id } : { relation: rel.name };
    return shape;
  }

  // ---- steps and arguments ------------------------------------------------------------------

  /**
   * Make a step. `pre` holds arguments fixed by the form (an id, relation bindings); `onRow` is the
   * shape the step starts from. A parent that is an own get-by-literal-id whose only use is to
   * supply its id is folded away: `e1("b-1").r1` asks the vendor once.
   */
  private step(api: string, entity: Entity, cap: Capability, call: Call, args: Arg[], pre: Record<string, Arg | PlanArg>, onRow?: Shape): Shape | undefined {
    if (this.tooLarge) return undefined;
    const step: PlanStep = {
      id: `n${++this.stepCount}`, op: cap.kind, api, cgs_hash: this.opts.registry.get(api)!.cgs_hash, entity: entity.name,
      capability: cap.name, args: {}, depends_on: [], effect: WRITE_KINDS.has(cap.kind) ? 'write' : 'read',
    };
    let ok = true;
    const seen = new Set<string>();
    for (const [param, v] of Object.entries(pre)) {
      seen.add(param);
      const p = cap.params.find((x) => x.name === param)!;
      if ('value' in v) {
        const arg = this.value(cap, p.name, v, call);
        if (arg) step.args[param] = arg;
        else ok = false;
      } else {
        step.args[param] = this.foldRef(v, onRow);
      }
    }
    for (const a of args) {
      const n = a.name!;
      if (n.text === LIMIT_ARG && !cap.params.some((p) => p.name === LIMIT_ARG)) {
        if (cap.returns !== 'rows') { ok = this.fail('unknown_argument', n.span, `\`limit\` applies to rows; \`${cap.name}\` returns ${cap.returns === 'row' ? 'one row' : 'nothing'}`, 'remove limit') ?? false; continue; }
        if (a.value.kind !== 'integer' || a.value.value < 1 || a.value.value > this.maxLimit) { ok = this.fail('wrong_type', a.value.span, `\`limit\` takes a whole number from 1 to ${this.maxLimit}`, 'write for example limit=100') ?? false; continue; }
        step.limit = a.value.value;
        continue;
      }
      if (/^p\d+$/.test(n.text)) { ok = this.fail('legacy_symbol', n.span, `\`${quote(n.text)}\` is a legacy parameter symbol`, `parameters use wire names: ${paramList(cap)}`) ?? false; continue; }
      if (/^s\d+$/.test(n.text)) { ok = this.fail('legacy_slot', n.span, `\`${quote(n.text)}\` is a removed transport slot`, `parameters use wire names: ${paramList(cap)}`) ?? false; continue; }
      const p = cap.params.find((x) => x.name === n.text);
      if (!p) { ok = this.fail('unknown_argument', n.span, `\`${cap.name}\` (${api}:${entity.name}) takes no argument \`${quote(n.text)}\``, this.suggest(() => listHint(n.text, cap.params.map((x) => x.name), 'parameters'))) ?? false; continue; }
      if (seen.has(p.name)) { ok = this.fail('duplicate_argument', n.span, `\`${p.name}\` is given twice`, 'keep one of the two') ?? false; continue; }
      seen.add(p.name);
      const arg = this.value(cap, p.name, a, call);
      if (arg) step.args[p.name] = arg;
      else ok = false;
    }
    // A catalog default is what an absent argument means: the plan says it, the vendor gets it.
    for (const p of cap.params) if (!seen.has(p.name) && p.default !== undefined) step.args[p.name] = { lit: p.default };
    const missing = cap.params.filter((p) => p.required && !seen.has(p.name));
    if (missing.length) {
      ok = this.fail('missing_argument', call.span, `\`${call.name.text}\` (${cap.name}) needs ${missing.map((p) => `\`${p.name}\``).join(', ')}`, `add ${missing.map((p) => `${p.name}=${exampleLiteral(p)}`).join(', ')}`) ?? false;
    }
    if (!ok) return undefined;
    for (const v of Object.values(step.args)) if ('ref' in v && !step.depends_on.includes(v.ref.step)) step.depends_on.push(v.ref.step);
    for (const v of Object.values(step.args)) {
      if ('ref' in v) {
        const from = this.byId.get(v.ref.step);
        if (from && (from.op === 'query' || from.op === 'search' || from.fanout)) step.fanout = { from: from.id, max: this.maxFanout };
      }
    }
    this.push(step);
    if (this.steps.length > MAX_PROGRAM_STATEMENTS) {
      this.tooLarge = true;
      return undefined;
    }
    return { api, entity, card: step.fanout && cap.returns !== 'none' ? 'rows' : cap.returns, step, own: true };
  }

  private push(step: PlanStep): void {
    this.steps.push(step);
    this.byId.set(step.id, step);
    for (const d of step.depends_on) this.dependents.set(d, (this.dependents.get(d) ?? 0) + 1);
  }

  /** Drop the last step (a folded parent). */
  private pop(): void {
    const step = this.steps.pop()!;
    this.byId.delete(step.id);
    for (const d of step.depends_on) this.dependents.set(d, (this.dependents.get(d) ?? 1) - 1);
  }

  /** A ref to an own get-by-literal-id parent's id field becomes that literal; the parent step is dropped. */
  private foldRef(v: PlanArg, onRow: Shape | undefined): PlanArg {
    if (!('ref' in v) || !onRow?.own || onRow.step.op !== 'get' || v.ref.field !== onRow.entity.id_field) return v;
    const cap = this.opts.registry.capability(onRow.api, onRow.step.capability)!;
    const idArg = onRow.step.args[cap.id_param!];
    if (!idArg || !('lit' in idArg) || onRow.step.projection) return v;
    // Another step needs the parent row itself (a step never depends on itself).
    if ((this.dependents.get(onRow.step.id) ?? 0) > 0) return v;
    if (this.steps[this.steps.length - 1] === onRow.step) this.pop();
    return { lit: idArg.lit };
  }

  private value(cap: Capability, param: string, a: Arg, call: Call): PlanArg | undefined {
    const p = cap.params.find((x) => x.name === param)!;
    const v = a.value;
    if (v.kind === 'ref') {
      const b = this.bindings.get(v.binding.text);
      if (!b) {
        const name = quote(v.binding.text);
        if (!v.field && this.opts.symbols?.lookup(v.binding.text)) return this.fail('wrong_type', v.span, `\`${name}\` is a symbol, not a value`, `\`${param}\` takes ${describeType(p)}; write for example ${param}=${exampleLiteral(p)}`);
        return this.fail('unknown_binding', v.binding.span, `\`${name}\` is not bound by an earlier line`, `bind it first (${name} = e1(...)), or write a literal such as ${param}=${exampleLiteral(p)}${/^[A-Za-z]/.test(v.binding.text) ? ` (a string needs quotes: "${name}")` : ''}`);
      }
      const field = v.field?.text ?? b.entity.id_field;
      if (!b.entity.fields.some((f) => f.name === field)) return this.fail('projection_unknown_field', v.field?.span ?? v.span, `${b.api}:${b.entity.name} has no field \`${quote(field)}\``, this.suggest(() => fieldHint(field, b.entity.fields.map((f) => f.name))));
      if (b.card === 'none') return this.fail('write_in_read_position', v.span, `\`${quote(v.binding.text)}\` holds no rows`, 'bind a read or a write that returns a row');
      return { ref: { step: b.step.id, field } };
    }
    const c = checkLiteral(param, p, v, !p.required);
    if (!c.ok) return this.fail(c.code, c.at.span, c.message, c.hint);
    void call;
    return { lit: c.value };
  }
}

function score(c: Capability, names: string[]): number {
  return names.filter((n) => c.params.some((p) => p.name === n)).length;
}

function paramList(cap: Capability): string {
  return cap.params.length ? cap.params.map((p) => p.name).join(', ') : '(none)';
}

function fieldHint(word: string, fields: string[]): string {
  return listHint(word, fields, 'fields');
}

/** "did you mean `x`?" / "one of: `a`, `b`" / the full list when nothing is close. */
export function listHint(word: string, candidates: string[], what: string): string {
  const uniq = [...new Set(candidates)];
  const near = nearest(word, uniq, 3);
  if (near.length === 1) return `did you mean \`${near[0]}\`?`;
  if (near.length > 1) return `one of: ${near.map((c) => `\`${c}\``).join(', ')}`;
  if (uniq.length === 0) return `there are no ${what} here`;
  return `${what}: ${uniq.slice(0, 12).map((c) => `\`${c}\``).join(', ')}${uniq.length > 12 ? ', ...' : ''}`;
}

/** Dense step ids in order (`n1`, `n2`, ...), rewriting every reference. */
function renumber(plan: Plan): Plan {
  const map = new Map(plan.steps.map((s, i) => [s.id, `n${i + 1}`]));
  const id = (x: string) => map.get(x) ?? x;
  const steps = plan.steps.map((s) => {
    const out: PlanStep = { ...s, id: id(s.id), depends_on: s.depends_on.map(id), args: {} };
    for (const [k, v] of Object.entries(s.args)) out.args[k] = 'ref' in v ? { ref: { step: id(v.ref.step), field: v.ref.field } } : v;
    if (s.via) out.via = s.via.from ? { relation: s.via.relation, from: id(s.via.from) } : { relation: s.via.relation };
    if (s.fanout) out.fanout = { from: id(s.fanout.from), max: s.fanout.max };
    return out;
  });
  const bind = Object.fromEntries(Object.entries(plan.bind).map(([k, v]) => [k, id(v)]));
  return { ...plan, steps, bind, return: plan.return.map(id) };
}
