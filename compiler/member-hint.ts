/**
 * Hints for a member that is neither a relation nor a capability of the row before it. The usual
 * mistakes get the corrected program: a field read as a member (`e2(7).name` is `e2(7)[name]`),
 * a method from another query language (`.limit(5)`, `.where(...)`), a capability of another
 * entity written on this row (`e1("b-1").m4(...)` is `m4(breweryId="b-1", ...)`). Anything else
 * gets the nearest relation or row capability, by symbol or by wire name.
 */
import { quote } from '../common/quote.js';
import { knownList, nearest } from '../common/suggest.js';
import type { Capability } from '../pack/cgs.js';
import type { Call, Chain } from './ast.js';
import { argsText, callWith, showable, sourceOf } from './fix-text.js';
import type { ResolveState, Shape } from './resolve-state.js';
import type { AnySymbol } from './symbols.js';
import { exampleId } from './values.js';

/** Where a member stands: its chain and the call right before it. */
export interface MemberAt {
  chain: Chain;
  before: Call;
}

/** Methods other query languages chain, whose arguments svc writes in the call before. */
const ARG_METHODS = new Set(['where', 'filter', 'find', 'filterBy', 'findBy']);

/** How a program names entity `entity` of `api`: its symbol, or its qualified name. */
export function entityHead(st: ResolveState, cur: Pick<Shape, 'api'> & { entity: { name: string } }): string {
  return st.opts.symbols?.entitySymbol(cur.api, cur.entity.name)?.sym ?? `${cur.api}:${cur.entity.name}`;
}

/** The hint of an unknown member `m` after `cur`; `sym` is what `m` names in the session, if anything. */
export function unknownMemberHint(
  st: ResolveState,
  cur: Shape,
  m: Call,
  at: MemberAt,
  sym: AnySymbol | undefined,
): string {
  if (sym?.kind === 'capability') {
    const cap = st.opts.registry.capability(sym.api, sym.capability);
    if (cap) return otherEntityCapability(st, cur, m, sym.api, cap);
  }
  return (
    (!sym && fieldAsMember(st, cur, m, at)) || (!sym && methodMember(st, m, at)) || nearestMember(st, cur, m.name.text)
  );
}

/** The chain's text up to the call before the member. */
function prefix(st: ResolveState, at: MemberAt): string {
  return sourceOf(st.lines.text, { start: at.chain.head.span.start, end: at.before.span.end });
}

/** `e2(7).name`: "`name` is a field: write e2(7)[name]". */
function fieldAsMember(st: ResolveState, cur: Shape, m: Call, at: MemberAt): string | undefined {
  const f = m.name.text;
  if (!cur.entity.fields.some((x) => x.name === f)) return undefined;
  if (!cur.own) {
    // A binding used alone: the projection belongs to the line that binds it.
    const b = at.chain.head.name.text;
    const expr = st.bindingExprs.get(b);
    let bound = expr ? sourceOf(st.lines.text, expr.span) : '';
    if (expr?.projection) bound = `${bound.slice(0, -1).trimEnd()}, ${f}]`;
    else bound += `[${f}]`;
    const keep =
      expr && showable(bound) ? `keep it where ${b} is bound: ${b} = ${bound}` : `project it where ${b} is bound`;
    return `\`${f}\` is a field: ${keep}, or pass ${b}.${f} as an argument`;
  }
  const fix = `${prefix(st, at)}[${f}]`;
  return `\`${f}\` is a field: write ${showable(fix) ? fix : `[${f}]` + ' at the end of the expression'}`;
}

/** `.limit(5)`, `.where(city="Berlin")`: the arguments belong in the call before. */
function methodMember(st: ResolveState, m: Call, at: MemberAt): string | undefined {
  const t = m.name.text;
  let extra: string | undefined;
  if (t === 'limit' || t === 'take' || t === 'top') {
    const v = m.args?.[0]?.value;
    extra = `limit=${v?.kind === 'integer' && v.value >= 1 ? v.value : 100}`;
  } else if (ARG_METHODS.has(t) && m.args?.length && m.args.every((a) => a.name)) {
    extra = argsText(st.lines.text, m);
  }
  if (!extra) return undefined;
  const text = st.lines.text;
  const start = at.chain.head.span.start;
  const fix =
    sourceOf(text, { start, end: at.before.span.start }) +
    callWith(text, at.before, [extra]) +
    text.slice(m.span.end, at.chain.span.end);
  const where = `\`${quote(t)}\` is not a member: write ${extra} as an argument of the call before`;
  return showable(fix) ? `${where}: ${fix}` : where;
}

/** `e1("b-1").m4(...)`: a capability of another entity, written as it is called. */
function otherEntityCapability(st: ResolveState, cur: Shape, m: Call, api: string, cap: Capability): string {
  const name = m.name.text;
  const of = `\`${name}\` (${cap.name})`;
  const text = st.lines.text;
  if (cap.id_param) {
    const head = entityHead(st, { api, entity: { name: cap.entity } });
    const idType = cap.params.find((p) => p.name === cap.id_param)!;
    const fix = `${head}(${exampleId(idType)}).${m.args ? callWith(text, m, []) : name}`;
    return `${of} acts on a ${cap.entity} row: write ${showable(fix) ? fix : `it after a ${cap.entity} row`}`;
  }
  const given = new Set((m.args ?? []).map((a) => a.name?.text));
  const ref = cap.params.find((p) => p.type === 'ref' && p.entity === cur.entity.name && !given.has(p.name));
  const extra = ref ? [`${ref.name}=${rowIdText(cur, ref)}`] : [];
  const fix = `${name}(${[...extra, argsText(text, m)].filter((a) => a).join(', ')})`;
  const rel = cur.entity.relations.find((r) => r.target === cap.entity && cap.kind === 'query');
  const follow = rel ? `, or follow the relation: ${prefixOfRow(st, cur)}.${rel.name}` : '';
  return `${of} is not called on a ${cur.entity.name} row: write ${showable(fix) ? fix : `${name}(...)`} on its own line${follow}`;
}

/** The id of the row `cur` as program text: its literal when the row is a get by a literal id. */
function rowIdText(cur: Shape, ref: Parameters<typeof exampleId>[0]): string {
  const arg = Object.values(cur.step.op === 'get' ? cur.step.args : {})[0];
  return arg && 'lit' in arg ? JSON.stringify(arg.lit) : exampleId(ref);
}

/** The row `cur` as a short form for a hint: `e1("b-1")` when it is a get by a literal id. */
function prefixOfRow(st: ResolveState, cur: Shape): string {
  const head = entityHead(st, cur);
  const arg = Object.values(cur.step.op === 'get' ? cur.step.args : {})[0];
  return arg && 'lit' in arg ? `${head}(${JSON.stringify(arg.lit)})` : `${head}(...)`;
}

/** What may follow a row of `cur`: its relations (symbol and wire name) and row capabilities (symbol, by either name). */
function nearestMember(st: ResolveState, cur: Shape, t: string): string {
  const s = st.opts.symbols;
  const label = new Map<string, string>();
  for (const r of cur.entity.relations) {
    const sym = s?.relationSymbol(cur.api, cur.entity.name, r.name)?.sym;
    label.set(sym ?? r.name, sym ? `\`${sym}\` (${r.name} -> ${r.target})` : `\`${r.name}\` (-> ${r.target})`);
    if (sym) label.set(r.name, `\`${r.name}\` (-> ${r.target})`);
  }
  const byName = new Map<string, string>();
  for (const c of st.opts.registry.capabilitiesOf(cur.api, cur.entity.name)) {
    const sym = s?.capabilitySymbol(cur.api, c.name)?.sym;
    if (sym && c.id_param) {
      label.set(sym, `\`${sym}\` (${c.name})`);
      byName.set(c.name, sym);
    }
  }
  const near = [
    ...new Set(nearest(t, [...label.keys(), ...byName.keys()], 6).map((k) => label.get(byName.get(k) ?? k)!)),
  ];
  if (near.length === 1) return `did you mean ${near[0]}?`;
  if (near.length > 1) return `did you mean one of: ${near.slice(0, 3).join(', ')}?`;
  return knownList(label.keys(), {
    show: (k) => label.get(k)!,
    known: `after a ${cur.entity.name} row`,
    limit: Infinity,
    none: `${cur.entity.name} has no relations or row capabilities`,
  });
}
