/**
 * `sort="field"` and `order="asc"|"desc"` on a list that sorts: checked against the fields its
 * catalog mapping sorts by, recorded as the step's `sort`. Each error names the fix: the list of
 * the entity that does sort, the sortable fields, or `order="desc"` for a `-field`.
 */
import { quote } from '../common/quote.js';
import { didYouMean } from '../common/suggest.js';
import { SORT_ORDERS, type Capability, type Entity, type SortOrder } from '../pack/cgs.js';
import type { Arg, Call, Value } from './ast.js';
import { showable, sourceOf } from './fix-text.js';
import { entityHead } from './member-hint.js';
import type { PlanSort } from './plan.js';
import { ORDER_ARG, SORT_ARG } from './resolve-options.js';
import type { ResolveState } from './resolve-state.js';
import { defaultReads } from './symbols.js';

/** Where sort arguments were given: the call and its capability (an `ArgSite` of argument-hint.ts). */
export interface SortSite {
  api: string;
  entity: string;
  cap: Capability;
  call: Call;
}

/** The sort arguments of one call, as written. */
export interface SortArgs {
  sort?: Arg;
  order?: Arg;
}

/** True when `name` is a reserved sort argument of `cap` (a parameter of the same name wins). */
export function isSortArg(cap: Capability, name: string): name is 'sort' | 'order' {
  return (name === SORT_ARG || name === ORDER_ARG) && !cap.params.some((p) => p.name === name);
}

/** The order the arguments ask for (`sort` absent when none was given); `ok` is false after an error. */
export function resolveSort(st: ResolveState, site: SortSite, args: SortArgs): { ok: boolean; sort?: PlanSort } {
  const first = args.sort ?? args.order;
  if (!first) return { ok: true };
  const { cap, call } = site;
  const s = cap.returns === 'rows' ? cap.http.sort : undefined;
  if (!s) {
    const what =
      cap.returns === 'rows'
        ? `\`${cap.name}\` (${site.api}:${site.entity}) does not sort`
        : `\`${first.name!.text}\` applies to lists; \`${cap.name}\` returns ${cap.returns === 'row' ? 'one row' : 'nothing'}`;
    st.fail(
      'not_sortable',
      first.name!.span,
      what,
      st.suggest(() => sortingListsHint(st, site)),
    );
    return { ok: false };
  }
  let order: SortOrder = 'asc';
  if (args.order) {
    const o = orderOf(st, args.order.value);
    if (!o) return { ok: false };
    order = o;
  }
  if (!args.sort) {
    const field = exampleSortField(st.opts.registry.entity(site.api, site.entity), s.fields);
    const written = sourceOf(st.lines.text, args.order!.span);
    const fix = replaced(st, call, args.order!, `sort="${field}", ${written}`) ?? `sort="${field}", ${written}`;
    st.fail(
      'missing_argument',
      args.order!.name!.span,
      '`order=` needs `sort=`: the field to order by',
      `add sort: ${fix}; ${sortsBy(cap, s.fields)}`,
    );
    return { ok: false };
  }
  const field = fieldOf(st, site, args.sort, s.fields);
  return field === undefined ? { ok: false } : { ok: true, sort: { field, order } };
}

/** The direction of an `order=` value, or undefined after reporting it. */
function orderOf(st: ResolveState, v: Value): SortOrder | undefined {
  const word = v.kind === 'string' ? v.value : v.kind === 'ref' && !v.field ? v.binding.text : undefined;
  if (v.kind === 'string' && (SORT_ORDERS as readonly string[]).includes(v.value)) return v.value as SortOrder;
  const lower = word?.trim().toLowerCase() ?? '';
  const meant = /^(desc|descending|down|reverse|newest|latest|-)/.test(lower)
    ? 'desc'
    : /^(asc|ascending|up|oldest|\+)/.test(lower)
      ? 'asc'
      : undefined;
  const hint = meant ? `write order="${meant}"` : 'write order="asc" or order="desc"';
  if (v.kind !== 'string') return st.fail('wrong_type', v.span, '`order` takes "asc" or "desc" in double quotes', hint);
  return st.fail('enum_value_not_allowed', v.span, `${JSON.stringify(v.value)} is not allowed for \`order\``, hint);
}

/** The field of a `sort=` value when the list sorts by it, or undefined after reporting it. */
function fieldOf(st: ResolveState, site: SortSite, a: Arg, fields: string[]): string | undefined {
  const v = a.value;
  const own = sortsBy(site.cap, fields);
  if (v.kind !== 'string' || v.heredoc) {
    const word = v.kind === 'ref' && !v.field ? v.binding.text : undefined;
    const fix = word ? `sort="${word}"` : v.kind === 'list' ? 'one field: sort="<field>"' : `sort="${fields[0]}"`;
    return st.fail('wrong_type', v.span, '`sort` takes one field name in double quotes', `write ${fix}; ${own}`);
  }
  if (fields.includes(v.value)) return v.value;
  // `-createdAt`, `+name`, `createdAt desc`, `createdAt:asc`: the direction goes to order=.
  const m = /^\s*([-+]?)\s*([A-Za-z_][A-Za-z0-9_]*)(?:\s*[\s:,]\s*(asc|desc)\w*)?\s*$/i.exec(v.value);
  const bare = m?.[2];
  if (m && bare && fields.includes(bare) && (m[1] || m[3])) {
    const order = m[1] === '-' || m[3]?.toLowerCase() === 'desc' ? 'desc' : 'asc';
    const fix = replaced(st, site.call, a, `sort="${bare}", order="${order}"`);
    return st.fail(
      'unsortable_field',
      v.span,
      `\`sort\` takes a field name; the direction goes in \`order\``,
      `write ${fix ?? `sort="${bare}", order="${order}"`}`,
    );
  }
  const parts = v.value.split(',').map((x) => x.trim());
  if (parts.length > 1 && fields.includes(parts[0]!)) {
    const fix = replaced(st, site.call, a, `sort="${parts[0]}"`) ?? `sort="${parts[0]}"`;
    return st.fail('unsortable_field', v.span, '`sort` takes one field', `sort by one field at a time: ${fix}`);
  }
  const entity = st.opts.registry.entity(site.api, site.entity);
  const isField = entity?.fields.some((f) => f.name === v.value) ?? false;
  const message = isField
    ? `\`${site.cap.name}\` does not sort by \`${quote(v.value)}\``
    : `${site.api}:${site.entity} has no field \`${quote(v.value)}\` to sort by`;
  const near = isField ? undefined : didYouMean(bare ?? v.value, fields);
  return st.fail('unsortable_field', v.span, message, `${near ? `${near} ` : ''}${own}`);
}

/** The field examples sort by: the first date or datetime (the newest first is the usual wish), else a name, else the first. */
export function exampleSortField(entity: Entity | undefined, fields: string[]): string {
  const typeOf = (n: string) => entity?.fields.find((f) => f.name === n)?.type;
  return (
    fields.find((n) => typeOf(n) === 'datetime' || typeOf(n) === 'date') ??
    fields.find((n) => n === 'name') ??
    fields[0] ??
    'id'
  );
}

/** `listTickets sorts by id, createdAt, ...`: at most 12 fields, so a hint stays short. */
function sortsBy(cap: Capability, fields: string[]): string {
  const more = fields.length > 12 ? `, ... (${fields.length} in all)` : '';
  return `${cap.name} sorts by ${fields.slice(0, 12).join(', ')}${more}`;
}

/** `call` with argument `a` written as `text`, when short enough to quote. */
function replaced(st: ResolveState, call: Call, a: Arg, text: string): string | undefined {
  const src = st.lines.text;
  const fix = src.slice(call.span.start, a.span.start) + text + src.slice(a.span.end, call.span.end);
  return showable(fix) ? fix : undefined;
}

/** The hint for `orderBy=`, `sort_by=` and the like: `sort=` when the list sorts, else which lists do. */
export function sortWordHint(st: ResolveState, site: SortSite, a: Arg): string {
  const n = a.name!.text;
  const s = site.cap.returns === 'rows' ? site.cap.http.sort : undefined;
  if (!s) return sortingListsHint(st, site, `\`${n}\``);
  const v = a.value;
  const field =
    v.kind === 'string' && s.fields.includes(v.value)
      ? v.value
      : exampleSortField(st.opts.registry.entity(site.api, site.entity), s.fields);
  const fix = replaced(st, site.call, a, `sort="${field}"`) ?? `sort="${field}"`;
  return `write ${fix} instead of \`${n}\` (add order="desc" for descending); ${sortsBy(site.cap, s.fields)}`;
}

/** Which lists of the entity do sort (their forms with `sort=`), or that none does; `what` is to be removed. */
export function sortingListsHint(st: ResolveState, site: SortSite, what = 'sort/order'): string {
  const { api, entity } = site;
  const reads = defaultReads(st.opts.registry, api, entity);
  const head = entityHead(st, { api, entity: { name: entity } });
  const forms = st.opts.registry
    .capabilitiesOf(api, entity)
    .filter((c) => c !== site.cap && c.returns === 'rows' && c.http.sort)
    .slice(0, 2)
    .map((c) => {
      const sort = `sort="${exampleSortField(st.opts.registry.entity(api, entity), c.http.sort!.fields)}"`;
      const req = c.params.filter((p) => p.required).map((p) => `${p.name}=...`);
      const name =
        c === reads.query || c === reads.search
          ? head
          : (st.opts.symbols?.capabilitySymbol(api, c.name)?.sym ?? `${api}:${c.name}`);
      return `${name}(${[...req, sort].join(', ')}) (${c.name})`;
    });
  if (forms.length) return `remove ${what} here; these lists of ${entity} sort: ${forms.join(', ')}`;
  return `remove ${what}: no list of ${api}:${entity} sorts; sort the rows after reading them`;
}
