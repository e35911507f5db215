/**
 * What follows a row in a chain (`.r1`, `.beers`, `.m2(...)`): a relation of its entity, which
 * becomes a step bound to the row (a fan-out when the row is one of many), or a capability that
 * acts on the row. Anything else is a diagnostic that lists what may follow.
 */
import { quote } from '../common/quote.js';
import type { Capability } from '../pack/cgs.js';
import type { Call } from './ast.js';
import { buildStep } from './build-step.js';
import { relationIntoPath } from './path-value.js';
import { entityHead, unknownMemberHint, type MemberAt } from './member-hint.js';
import type { PlanArg } from './plan.js';
import { resolveCapabilityCall } from './resolve-calls.js';
import type { ResolveState, Shape } from './resolve-state.js';

/** The shape after member `m` of `cur` (`at`: where `m` stands), or undefined after recording a diagnostic. */
export function resolveMember(st: ResolveState, cur: Shape, m: Call, at: MemberAt): Shape | undefined {
  const t = m.name.text;
  if (cur.card === 'none')
    return st.fail(
      'write_in_read_position',
      m.name.span,
      `\`${cur.step.capability}\` returns nothing to follow`,
      'start a new line for the next expression',
    );
  if (cur.step.effect === 'write')
    return st.fail(
      'write_in_read_position',
      m.name.span,
      `the result of a write (\`${cur.step.capability}\`) cannot be followed`,
      `bind the write and read in a separate line: x = ${at.before.name.text}(...) then ${entityHead(st, cur)}(x.${cur.entity.id_field}).${t}`,
    );
  if (/^p\d+$/.test(t))
    return st.fail(
      'legacy_symbol',
      m.name.span,
      `\`${quote(t)}\` is a legacy parameter symbol`,
      'relations and capabilities are written as r#/m# symbols or wire names',
    );
  const sym = st.opts.symbols?.lookup(t);
  const sameEntity = (api: string, entity: string) => api === cur.api && entity === cur.entity.name;
  let relName: string | undefined;
  if (sym?.kind === 'relation' && sameEntity(sym.api, sym.entity)) relName = sym.relation;
  else if (!sym && cur.entity.relations.some((r) => r.name === t)) relName = t;
  if (relName) return relation(st, cur, relName, m);
  let cap: Capability | undefined;
  if (sym?.kind === 'capability' && sameEntity(sym.api, sym.entity))
    cap = st.opts.registry.capability(sym.api, sym.capability);
  else if (!sym) cap = st.opts.registry.capabilitiesOf(cur.api, cur.entity.name).find((c) => c.name === t);
  if (cap) return resolveCapabilityCall(st, cur.api, cap, m, cur);
  return st.fail(
    'unknown_relation',
    m.name.span,
    sym
      ? `\`${quote(t)}\` belongs to ${sym.entity}, not to ${cur.entity.name}`
      : `${cur.api}:${cur.entity.name} has no relation or capability \`${quote(t)}\``,
    st.suggest(() => unknownMemberHint(st, cur, m, at, sym)),
  );
}

function relation(st: ResolveState, cur: Shape, relName: string, m: Call): Shape | undefined {
  const rel = cur.entity.relations.find((r) => r.name === relName)!;
  const cap = st.opts.registry.capability(cur.api, rel.capability)!;
  const target = st.opts.registry.entity(cur.api, rel.target)!;
  const pre: Record<string, PlanArg> = {};
  for (const [param, field] of Object.entries(rel.bind)) {
    const intoPath = relationIntoPath(cur.entity, rel, cap, param, field);
    if (intoPath) return st.fail('wrong_type', m.name.span, intoPath.message, intoPath.hint);
    pre[param] = { ref: { step: cur.step.id, field } };
  }
  const shape = buildStep(st, cur.api, target, cap, m, m.args ?? [], pre, cur);
  // The parent may have been folded into a literal (see foldRef): then there is no step to come from.
  if (shape)
    shape.step.via =
      st.byId.get(cur.step.id) === cur.step ? { relation: rel.name, from: cur.step.id } : { relation: rel.name };
  return shape;
}
