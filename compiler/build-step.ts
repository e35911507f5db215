/**
 * Making one plan step from a capability and its arguments: the arguments fixed by the form, the
 * named arguments (with `limit=`, `sort=` and `order=`), catalog defaults, required ones,
 * dependencies and fan-out. A parent that is an own get-by-literal-id whose only use is to supply
 * its id is folded away.
 */
import { quote } from '../common/quote.js';
import { nearest } from '../common/suggest.js';
import type { Capability, Entity, ParamDef } from '../pack/cgs.js';
import { WRITE_KINDS } from '../pack/cgs.js';
import { limitHint, missingArgumentHint, unknownArgumentHint, type ArgSite, type Reads } from './argument-hint.js';
import type { Arg, Call } from './ast.js';
import { callWith, showable } from './fix-text.js';
import { MAX_PROGRAM_STATEMENTS } from './limits.js';
import type { PlanArg, PlanStep } from './plan.js';
import { resolveArg } from './resolve-arg.js';
import { exampleLiteral } from './values.js';
import { LIMIT_ARG } from './resolve-options.js';
import { isSortArg, resolveSort, type SortArgs } from './resolve-sort.js';
import type { ResolveState, Shape } from './resolve-state.js';

/**
 * Make a step. `pre` holds arguments fixed by the form (an id, relation bindings); `onRow` is the
 * shape the step starts from. A parent that is an own get-by-literal-id whose only use is to
 * supply its id is folded away: `e1("b-1").r1` asks the vendor once.
 */
export function buildStep(
  st: ResolveState,
  api: string,
  entity: Entity,
  cap: Capability,
  call: Call,
  args: Arg[],
  pre: Record<string, Arg | PlanArg>,
  onRow?: Shape,
  reads?: Reads,
): Shape | undefined {
  if (st.tooLarge) return undefined;
  const step: PlanStep = {
    id: st.nextStepId(),
    op: cap.kind,
    api,
    cgs_hash: st.opts.registry.get(api)!.cgs_hash,
    entity: entity.name,
    capability: cap.name,
    args: {},
    depends_on: [],
    effect: WRITE_KINDS.has(cap.kind) ? 'write' : 'read',
  };
  let ok = true;
  const seen = new Set<string>();
  const site: ArgSite = { api, entity: entity.name, cap, call };
  if (reads) site.reads = reads;
  const unknown: string[] = [];
  const sorting: SortArgs = {};
  for (const param in pre) {
    const v = pre[param]!;
    seen.add(param);
    const p = paramNamed(cap, param)!;
    if ('value' in v) {
      const arg = resolveArg(st, cap, p.name, v, v.name ? undefined : call.name.text);
      if (arg) step.args[param] = arg;
      else ok = false;
    } else {
      step.args[param] = foldRef(st, v, onRow);
    }
  }
  for (const a of args) {
    const n = a.name;
    if (!n) {
      // A value without a name after a relation (`e2(7).reviews(5)`): only a get by id takes one.
      ok =
        st.fail(
          'syntax_error',
          a.span,
          `\`${call.name.text}\` takes named arguments`,
          `write name=value: ${paramList({ ...cap, params: cap.params.filter((p) => !(p.name in pre)) })}`,
        ) ?? false;
      continue;
    }
    if (n.text === LIMIT_ARG && !cap.params.some((p) => p.name === LIMIT_ARG)) {
      if (cap.returns !== 'rows') {
        ok =
          st.fail(
            'unknown_argument',
            n.span,
            `\`limit\` applies to rows; \`${cap.name}\` returns ${cap.returns === 'row' ? 'one row' : 'nothing'}`,
            'remove limit',
          ) ?? false;
        continue;
      }
      if (a.value.kind !== 'integer' || a.value.value < 1 || a.value.value > st.maxLimit) {
        ok =
          st.fail(
            'wrong_type',
            a.value.span,
            `\`limit\` takes a whole number from 1 to ${st.maxLimit}`,
            limitHint(a.value, st.maxLimit),
          ) ?? false;
        continue;
      }
      step.limit = a.value.value;
      continue;
    }
    if (isSortArg(cap, n.text)) {
      if (sorting[n.text])
        ok = st.fail('duplicate_argument', n.span, `\`${n.text}\` is given twice`, 'keep one of the two') ?? false;
      sorting[n.text] = a;
      continue;
    }
    // `p3`, `s0`: only names starting with p or s can be one (skip the tests for the others).
    const c0 = n.text.charCodeAt(0);
    if (c0 === 112 && /^p\d+$/.test(n.text)) {
      ok =
        st.fail(
          'legacy_symbol',
          n.span,
          `\`${quote(n.text)}\` is a legacy parameter symbol`,
          `parameters use wire names: ${paramList(cap)}`,
        ) ?? false;
      continue;
    }
    if (c0 === 115 && /^s\d+$/.test(n.text)) {
      ok =
        st.fail(
          'legacy_slot',
          n.span,
          `\`${quote(n.text)}\` is a removed transport slot`,
          `parameters use wire names: ${paramList(cap)}`,
        ) ?? false;
      continue;
    }
    const p = paramNamed(cap, n.text);
    if (!p) {
      unknown.push(n.text);
      ok =
        st.fail(
          'unknown_argument',
          n.span,
          `\`${cap.name}\` (${api}:${entity.name}) takes no argument \`${quote(n.text)}\``,
          st.suggest(() => unknownArgumentHint(st, site, a)),
        ) ?? false;
      continue;
    }
    if (seen.has(p.name)) {
      ok = st.fail('duplicate_argument', n.span, `\`${p.name}\` is given twice`, 'keep one of the two') ?? false;
      continue;
    }
    seen.add(p.name);
    const arg = resolveArg(st, cap, p.name, a, undefined, call);
    if (arg) step.args[p.name] = arg;
    else ok = false;
  }
  if (sorting.sort || sorting.order) {
    const sorted = resolveSort(st, site, sorting);
    if (sorted.sort) step.sort = sorted.sort;
    ok &&= sorted.ok;
  }
  // A catalog default is what an absent argument means: the plan says it, the vendor gets it.
  for (const p of cap.params) if (!seen.has(p.name) && p.default !== undefined) step.args[p.name] = { lit: p.default };
  // A parameter that works only with others (`requires`): json-server ignores `_order` without `_sort`.
  for (const a of args) {
    const p = a.name && paramNamed(cap, a.name.text);
    if (!p?.requires?.length) continue;
    const absent = p.requires.filter((r) => !(r in step.args));
    if (absent.length)
      ok =
        st.fail(
          'missing_argument',
          a.name!.span,
          `\`${p.name}\` works only with ${absent.map((r) => `\`${r}\``).join(', ')}`,
          `add ${absent.map((r) => `${r}=${exampleLiteral(cap.params.find((x) => x.name === r)!)}`).join(', ')}, or remove ${p.name}`,
        ) ?? false;
  }
  // At least one of these (an update that changes nothing): misspelt names are reported as such first.
  if (!unknown.length) ok = atLeastOne(st, cap, call, step) && ok;
  // A required parameter given under a misspelt name is reported once, as the misspelling.
  const missing: ParamDef[] = [];
  for (const p of cap.params)
    if (p.required && !seen.has(p.name) && !unknown.some((u) => nearest(u, [p.name]).length > 0)) missing.push(p);
  if (missing.length) {
    ok =
      st.fail(
        'missing_argument',
        call.span,
        `\`${call.name.text}\` (${cap.name}) needs ${missing.map((p) => `\`${p.name}\``).join(', ')}`,
        st.suggest(() => missingArgumentHint(st, site, missing, !!onRow)),
      ) ?? false;
  }
  if (!ok) return undefined;
  // One pass over the arguments: the steps referred to, and the last of them that yields many rows.
  for (const k in step.args) {
    const v = step.args[k]!;
    if (!('ref' in v)) continue;
    if (!step.depends_on.includes(v.ref.step)) step.depends_on.push(v.ref.step);
    const from = st.byId.get(v.ref.step);
    if (from && (from.op === 'query' || from.op === 'search' || from.fanout))
      step.fanout = { from: from.id, max: st.maxFanout };
  }
  st.push(step);
  if (st.steps.length > MAX_PROGRAM_STATEMENTS) {
    st.tooLarge = true;
    return undefined;
  }
  return { api, entity, card: step.fanout && cap.returns !== 'none' ? 'rows' : cap.returns, step, own: true };
}

/** A ref to an own get-by-literal-id parent's id field becomes that literal; the parent step is dropped. */
function foldRef(st: ResolveState, v: PlanArg, onRow: Shape | undefined): PlanArg {
  if (!('ref' in v) || !onRow?.own || onRow.step.op !== 'get' || v.ref.field !== onRow.entity.id_field) return v;
  const cap = st.opts.registry.capability(onRow.api, onRow.step.capability)!;
  const idArg = onRow.step.args[cap.id_param!];
  if (!idArg || !('lit' in idArg) || onRow.step.projection) return v;
  // Another step needs the parent row itself (a step never depends on itself).
  if (st.dependentsOf(onRow.step.id) > 0) return v;
  if (st.steps[st.steps.length - 1] === onRow.step) st.pop();
  return { lit: idArg.lit };
}

/** `at_least_one` of the capability: one of them must be in the step's arguments (defaults count). */
function atLeastOne(st: ResolveState, cap: Capability, call: Call, step: PlanStep): boolean {
  const names = cap.at_least_one;
  if (!names?.length || names.some((n) => n in step.args)) return true;
  const first = cap.params.find((p) => p.name === names[0])!;
  const text = st.lines.text;
  const line = text.slice(text.lastIndexOf('\n', call.span.start - 1) + 1, call.span.start);
  const fix = `${line}${callWith(text, call, [`${first.name}=${exampleLiteral(first)}`])}`.trim();
  return (
    st.fail(
      'missing_argument',
      call.span,
      `\`${call.name.text}\` needs at least one of ${names.join(', ')}`,
      showable(fix) ? `add one of them: ${fix}` : `add one of them, for example ${first.name}=${exampleLiteral(first)}`,
    ) ?? false
  );
}

/** The parameter of `cap` named `name` (a loop: this runs for every argument of every step). */
function paramNamed(cap: Capability, name: string): ParamDef | undefined {
  for (const p of cap.params) if (p.name === name) return p;
  return undefined;
}

function paramList(cap: Capability): string {
  return cap.params.length ? cap.params.map((p) => p.name).join(', ') : '(none)';
}
