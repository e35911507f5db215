/**
 * Resolve and type-check a parsed program against the registry and the session symbols, and
 * build the plan IR. Never throws on user input: every problem is a diagnostic with a code, a
 * span and a hint; resolution goes on after an error so all problems are reported at once.
 *
 * This module is the driver (statements, chains, projections, dense step ids); names are looked
 * up in resolve-names.ts, calls in resolve-calls.ts, members of a row in resolve-members.ts,
 * steps and their arguments in build-step.ts and resolve-arg.ts.
 */
import { MAX_SHOWN_ERRORS } from '../common/bound-errors.js';
import type { SvcError } from '../common/errors.js';
import { svcError } from '../common/errors.js';
import { quote } from '../common/quote.js';
import type { Chain, Program } from './ast.js';
import { MAX_PROGRAM_STATEMENTS, programTooLarge } from './limits.js';
import { PLAN_VERSION, type Plan, type PlanStep } from './plan.js';
import { resolveCapabilityCall, resolveEntityCall } from './resolve-calls.js';
import { resolveMember } from './resolve-members.js';
import { dottedQualified, isDottedQualified, resolveTarget } from './resolve-names.js';
import { resolveProjection } from './resolve-projection.js';
import type { ResolveOptions } from './resolve-options.js';
import { ResolveState, type Shape } from './resolve-state.js';
import type { LineIndex } from './spans.js';

export { DEFAULT_MAX_FANOUT, DEFAULT_MAX_LIMIT, LIMIT_ARG } from './resolve-options.js';
export type { ResolveOptions } from './resolve-options.js';

/** Resolve a parsed program; `lines`, when given, is the line index of `source` (made once by compileProgram). */
export function resolveProgram(
  program: Program,
  source: string,
  opts: ResolveOptions,
  lines?: LineIndex,
): { plan?: Plan; diagnostics: SvcError[] } {
  const st = new ResolveState(source, opts, lines);
  const bind: Record<string, string> = {};
  const ret: string[] = [];
  for (const s of program.statements) {
    if (st.tooLarge) break;
    st.quiet = st.diags.length >= MAX_SHOWN_ERRORS;
    if (s.kind === 'binding') {
      if (st.bindings.has(s.name.text)) {
        st.fail(
          'duplicate_binding',
          s.name.span,
          `\`${quote(s.name.text)}\` is already bound`,
          'pick a new name for this binding; a name is bound once per program',
        );
        continue;
      }
      const shape = resolveChain(st, s.expr);
      if (shape) {
        st.bindings.set(s.name.text, shape);
        st.bindingExprs.set(s.name.text, s.expr);
        bind[s.name.text] = shape.step.id;
      }
    } else if (s.kind === 'expr') {
      const shape = resolveChain(st, s.expr);
      if (shape) ret.push(shape.step.id);
    } else {
      st.fail(
        'continuation_not_alone',
        s.span,
        `\`${s.kind}(...)\` is dispatched by the server and cannot be compiled into a plan`,
        `send \`${s.kind}(${quote(s.handle.text)})\` as the whole program`,
      );
    }
  }
  if (st.tooLarge) {
    return {
      diagnostics: [
        programTooLarge(
          `the plan has more than ${MAX_PROGRAM_STATEMENTS} steps; the limit is ${MAX_PROGRAM_STATEMENTS}`,
          st.lines.span(program.span),
        ),
      ],
    };
  }
  if (st.diags.length) return { diagnostics: st.diags };
  if (ret.length === 0) {
    const last = st.steps[st.steps.length - 1];
    if (last) ret.push(last.id);
  }
  if (st.steps.length === 0) {
    return {
      diagnostics: [
        svcError('empty_program', 'the program runs nothing', {
          span: st.lines.span(program.span),
          hint: 'write an expression such as e1(city="Berlin")[name]',
        }),
      ],
    };
  }
  // Steps folded away leave gaps: renumber densely so equal programs give equal plans.
  return { plan: renumber({ version: PLAN_VERSION, steps: st.steps, bind, return: ret }), diagnostics: [] };
}

/** A chain: its head, each member in turn, then its projection. */
function resolveChain(st: ResolveState, chain: Chain): Shape | undefined {
  if (isDottedQualified(st, chain)) return dottedQualified(st, chain);
  const target = resolveTarget(st, chain.head);
  if (!target) return undefined;
  let cur: Shape | undefined;
  if (target.kind === 'binding') {
    const b = quote(chain.head.name.text);
    if (chain.head.args)
      return st.fail(
        'syntax_error',
        chain.head.span,
        `\`${b}\` is a binding, not something to call`,
        `use it as ${b}.<relation> or pass ${b}.<field> as an argument`,
      );
    cur = { ...target.shape, own: false };
  } else if (target.kind === 'entity') {
    cur = resolveEntityCall(st, target.api, target.entity, chain.head);
  } else {
    cur = resolveCapabilityCall(st, target.api, target.cap, chain.head, undefined);
  }
  let prev = chain.head;
  for (const m of chain.members) {
    if (!cur) return undefined;
    cur = resolveMember(st, cur, m, { chain, before: prev });
    prev = m;
  }
  if (cur && chain.projection) resolveProjection(st, cur, chain);
  return cur;
}

/** Dense step ids in order (`n1`, `n2`, ...), rewriting every reference. */
function renumber(plan: Plan): Plan {
  // Without folded steps (the usual case) the ids are dense already: nothing to rewrite.
  if (plan.steps.every((s, i) => s.id === `n${i + 1}`)) return plan;
  const map = new Map(plan.steps.map((s, i) => [s.id, `n${i + 1}`]));
  const id = (x: string) => map.get(x) ?? x;
  const steps = plan.steps.map((s) => {
    const out: PlanStep = { ...s, id: id(s.id), depends_on: s.depends_on.map(id), args: {} };
    for (const [k, v] of Object.entries(s.args))
      out.args[k] = 'ref' in v ? { ref: { step: id(v.ref.step), field: v.ref.field } } : v;
    if (s.via) out.via = s.via.from ? { relation: s.via.relation, from: id(s.via.from) } : { relation: s.via.relation };
    if (s.fanout) out.fanout = { from: id(s.fanout.from), max: s.fanout.max };
    return out;
  });
  const bind = Object.fromEntries(Object.entries(plan.bind).map(([k, v]) => [k, id(v)]));
  return { ...plan, steps, bind, return: plan.return.map(id) };
}
