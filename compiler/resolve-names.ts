/**
 * What the head of a chain names: a binding of this program, a session symbol (`e#`, `m#`) or a
 * qualified name (`api:Entity`, `api:capability`). Legacy `p#`/`s#` symbols and unknown names
 * are diagnostics that suggest the nearest known name.
 */
import { quote } from '../common/quote.js';
import { suggestHint } from '../common/suggest.js';
import type { Capability, Entity } from '../pack/cgs.js';
import type { Call, Chain, Name } from './ast.js';
import { showable } from './fix-text.js';
import { listOf, type ResolveState, type Shape } from './resolve-state.js';
import { entityCallFor, unknownNameHint, unknownQualifiedHint } from './symbol-hint.js';

const withFix = (fix: string | undefined): string => (fix ? `: ${fix}` : '');

export type Target =
  | { kind: 'entity'; api: string; entity: Entity }
  | { kind: 'capability'; api: string; cap: Capability }
  | { kind: 'binding'; shape: Shape };

/** The target of the name a chain starts with, or undefined after recording a diagnostic. */
export function resolveTarget(st: ResolveState, head: Call): Target | undefined {
  const name = head.name;
  const t = name.text;
  if (name.qualified) return qualified(st, name);
  if (/^p\d+$/.test(t))
    return st.fail(
      'legacy_symbol',
      name.span,
      `\`${quote(t)}\` is a legacy parameter symbol`,
      `p# symbols were removed: start with an entity or capability symbol and write parameters by wire name, e.g. ${(st.quiet ? undefined : entityCallFor(st, head)) ?? 'e1(city="Berlin")'}`,
    );
  if (/^s\d+$/.test(t))
    return st.fail(
      'legacy_slot',
      name.span,
      `\`${quote(t)}\` is a removed transport slot`,
      `write the entity symbol (e1) or its qualified name (api:Entity)${withFix(st.quiet ? undefined : entityCallFor(st, head))}`,
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
    st.suggest(() => unknownNameHint(st, t)),
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
  return st.fail(
    'unknown_symbol',
    name.span,
    `${api} has no entity or capability \`${quote(what)}\``,
    st.suggest(() => unknownQualifiedHint(st, api, what)),
  );
}

/** `brewery.Beer(...)`: a catalog id followed by a member, where a qualified name was meant. */
export function isDottedQualified(st: ResolveState, chain: Chain): boolean {
  const head = chain.head.name.text;
  const m = chain.members[0];
  return (
    !chain.head.args &&
    !!m &&
    !chain.head.name.qualified &&
    !st.bindings.has(head) &&
    !st.opts.symbols?.lookup(head) &&
    !!st.opts.registry.get(head) &&
    !!(st.opts.registry.entity(head, m.name.text) ?? st.opts.registry.capability(head, m.name.text))
  );
}

/** The diagnostic of a dotted qualified name: write it with a colon, or use its symbol. */
export function dottedQualified(st: ResolveState, chain: Chain): undefined {
  const api = chain.head.name.text;
  const m = chain.members[0]!;
  const rest = st.lines.text.slice(m.name.span.end, chain.span.end);
  const fix = `${api}:${m.name.text}${rest}`;
  const sym =
    st.opts.symbols?.entitySymbol(api, m.name.text)?.sym ?? st.opts.symbols?.capabilitySymbol(api, m.name.text)?.sym;
  return st.fail(
    'unknown_symbol',
    { ...chain.head.span, end: m.name.span.end },
    `\`${quote(`${api}.${m.name.text}`)}\` is not a name: a qualified name joins catalog and name with \`:\``,
    `write ${showable(fix) ? fix : `${api}:${m.name.text}`}${sym ? ` or its symbol ${sym}${showable(rest) ? rest : ''}` : ''}`,
  );
}
