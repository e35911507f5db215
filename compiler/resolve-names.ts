/**
 * What the head of a chain names: a binding of this program, a session symbol (`e#`, `m#`) or a
 * qualified name (`api:Entity`, `api:capability`). Legacy `p#`/`s#` symbols and unknown names
 * are diagnostics that suggest the nearest known name.
 */
import { quote } from '../common/quote.js';
import { didYouMean, knownList, suggestHint } from '../common/suggest.js';
import type { Capability, Entity } from '../pack/cgs.js';
import type { Name } from './ast.js';
import { listOf, type ResolveState, type Shape } from './resolve-state.js';

export type Target =
  | { kind: 'entity'; api: string; entity: Entity }
  | { kind: 'capability'; api: string; cap: Capability }
  | { kind: 'binding'; shape: Shape };

/** The target of a name, or undefined after recording a diagnostic. */
export function resolveTarget(st: ResolveState, name: Name): Target | undefined {
  const t = name.text;
  if (name.qualified) return qualified(st, name);
  if (/^p\d+$/.test(t))
    return st.fail(
      'legacy_symbol',
      name.span,
      `\`${quote(t)}\` is a legacy parameter symbol`,
      'parameters are written with their wire names, e.g. city="Berlin"',
    );
  if (/^s\d+$/.test(t))
    return st.fail(
      'legacy_slot',
      name.span,
      `\`${quote(t)}\` is a removed transport slot`,
      'write the entity symbol (e1) or its qualified name (api:Entity)',
    );
  const b = st.bindings.get(t);
  if (b) return { kind: 'binding', shape: b };
  const sym = st.opts.symbols?.lookup(t);
  if (sym?.kind === 'entity') {
    const entity = st.opts.registry.entity(sym.api, sym.entity);
    if (entity) return { kind: 'entity', api: sym.api, entity };
  } else if (sym?.kind === 'capability') {
    const cap = st.opts.registry.capability(sym.api, sym.capability);
    if (cap) return { kind: 'capability', api: sym.api, cap };
  } else if (sym?.kind === 'relation') {
    return st.fail(
      'unknown_symbol',
      name.span,
      `\`${quote(t)}\` is a relation: it follows a row`,
      `write e.g. ${st.opts.symbols?.entitySymbol(sym.api, sym.entity)?.sym ?? `${sym.api}:${sym.entity}`}("<id>").${t}`,
    );
  }
  return st.fail(
    'unknown_symbol',
    name.span,
    `\`${quote(t)}\` is not a symbol of this session`,
    st.suggest(() => symbolHint(st, t)),
  );
}

function qualified(st: ResolveState, name: Name): Target | undefined {
  const { api, entity: what } = name.qualified!;
  const entry = st.opts.registry.get(api);
  if (!entry) {
    const apis = st.opts.registry.list().map((e) => e.entry_id);
    return st.fail(
      'unknown_symbol',
      name.span,
      `no catalog \`${quote(api)}\` is loaded`,
      st.suggest(() => suggestHint(api, apis, listOf('catalogs'))),
    );
  }
  const entity = st.opts.registry.entity(api, what);
  if (entity) return { kind: 'entity', api, entity };
  const cap = st.opts.registry.capability(api, what);
  if (cap) return { kind: 'capability', api, cap };
  const names = [
    ...entry.cgs.entities.map((e) => `${api}:${e.name}`),
    ...entry.cgs.capabilities.map((c) => `${api}:${c.name}`),
  ];
  return st.fail(
    'unknown_symbol',
    name.span,
    `${api} has no entity or capability \`${quote(what)}\``,
    st.suggest(() => suggestHint(`${api}:${what}`, names, listOf('names'))),
  );
}

/** Near session symbols and bindings, each symbol with what it stands for: "did you mean `e1` (brewery:Brewery)?". */
function symbolHint(st: ResolveState, t: string): string {
  const syms = st.opts.symbols?.all() ?? [];
  const label = new Map(
    syms.map((s) => [
      s.sym,
      s.kind === 'entity'
        ? `${s.api}:${s.entity}`
        : s.kind === 'capability'
          ? `${s.api}:${s.capability}`
          : `${s.entity}.${s.relation}`,
    ]),
  );
  const show = (c: string) => (label.has(c) ? `\`${c}\` (${label.get(c)})` : `\`${c}\``);
  return (
    didYouMean(t, [...label.keys(), ...st.bindings.keys()], { show }) ??
    knownList(label.keys(), {
      show,
      known: 'symbols of this session',
      limit: 8,
      none: 'this session has no symbols yet: open a context with api:Entity seeds, or write qualified names such as brewery:Beer',
    })
  );
}
