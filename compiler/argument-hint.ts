/**
 * Hints for arguments: one a capability does not take, required ones left out, and a bad
 * `limit=`. Each names the fix: the nearest parameter, the search form of the entity
 * (`e1(q="Pen")`) when its list cannot filter by that name, the get form for an id
 * (`e1("b-1")`), the call with the missing arguments added, the form that is meant on a row, or
 * `sort="field"` for another API's sorting argument (`orderBy=`).
 */
import { didYouMean, knownList } from '../common/suggest.js';
import { WRITE_KINDS, type Capability, type ParamDef as Param } from '../pack/cgs.js';
import type { Arg, Call, Value } from './ast.js';
import { callWith, showable, sourceOf } from './fix-text.js';
import { entityHead } from './member-hint.js';
import { LIMIT_ARG, ORDER_ARG, SORT_ARG } from './resolve-options.js';
import { sortWordHint } from './resolve-sort.js';
import type { ResolveState } from './resolve-state.js';
import type { defaultReads } from './symbols.js';
import { exampleId, exampleLiteral } from './values.js';

/** The default reads of an entity, when the call is an entity expression (`e1(...)`). */
export type Reads = ReturnType<typeof defaultReads>;

/** Where an argument was given: the call, its capability and, for an entity expression, the entity's reads. */
export interface ArgSite {
  api: string;
  entity: string;
  cap: Capability;
  call: Call;
  reads?: Reads;
}

/** Arguments of other APIs that approve a write: svc reviews writes outside the program. */
const REVIEW_WORDS = new Set(['force', 'confirm', 'confirmed', 'dry_run', 'dryRun', 'review', 'approve', 'commit']);
/** Arguments of other APIs that page or size a list: svc has `limit=` and `page(pgN)`. */
const PAGING_WORDS = new Set(['offset', 'skip', 'page', 'cursor', 'after', 'start', 'pageToken', 'page_token']);
const SIZE_WORDS = new Set(['page_size', 'pageSize', 'per_page', 'perPage', 'size', 'top', 'count', 'max', 'first']);
/** Arguments of other APIs that sort (`sort` and `order` are svc's own, unless a capability declares them). */
const SORT_WORDS = new Set(['sort', 'order', 'orderBy', 'order_by', 'sortBy', 'sort_by', 'sort_order', 'direction']);

/** The hint for argument `a`, which the capability of `site` does not take. */
export function unknownArgumentHint(st: ResolveState, site: ArgSite, a: Arg): string {
  const { cap } = site;
  const n = a.name!.text;
  const params = cap.params.map((p) => p.name);
  const rows = cap.returns === 'rows';
  if (REVIEW_WORDS.has(n) && WRITE_KINDS.has(cap.kind))
    return `remove \`${n}\`: a write is reviewed outside the program: dry-run the program for a pcN, then run it with that pcN (or force)`;
  // `orderBy="abv"` is near `order`, but means sort="abv".
  if (SORT_WORDS.has(n)) return sortWordHint(st, site, a);
  const sorts = rows && cap.http.sort ? [SORT_ARG, ORDER_ARG] : [];
  const near = didYouMean(n, rows ? [...params, LIMIT_ARG, ...sorts] : params);
  if (near) return near;
  if (rows && PAGING_WORDS.has(n))
    return `remove \`${n}\`: ask for more rows with limit=N (1 to ${st.maxLimit}), or continue a paged result with page(pgN) from its "more pages" line`;
  if (rows && SIZE_WORDS.has(n)) return `write limit=N (1 to ${st.maxLimit}) instead of \`${n}\``;
  return readsHint(st, site, a) ?? knownList(params, { known: 'parameters', none: 'there are no parameters here' });
}

/** For an entity expression: the get form for its id parameter, or the search form for a text. */
function readsHint(st: ResolveState, site: ArgSite, a: Arg): string | undefined {
  const { reads, call } = site;
  if (!reads) return undefined;
  const head = call.name.text;
  const text = st.lines.text;
  if (reads.get && a.name!.text === reads.get.id_param) {
    const fix = `${head}(${sourceOf(text, a.value.span)})`;
    if (showable(fix)) return `fetch one row by id: ${fix}`;
  }
  // A text given to a name the list does not filter by is most likely a search.
  const q = reads.search?.params.find((p) => p.required && p.type === 'string');
  if (!reads.search || !q || a.value.kind !== 'string' || a.value.heredoc) return undefined;
  const fix = `${head}(${q.name}=${sourceOf(text, a.value.span)})`;
  const filters = site.cap === reads.search ? '' : `${head} filters by ${names(site.cap.params)}; `;
  return `${filters}to find rows by text use the search: ${showable(fix) ? fix : `${head}(${q.name}="...")`}`;
}

function names(params: Param[]): string {
  return params.length ? params.map((p) => `\`${p.name}\``).join(', ') : 'nothing';
}

/**
 * The hint for required arguments left out of `call`: the call with them added, or, for a
 * capability that acts on one row called on its own, the call written on a row.
 */
export function missingArgumentHint(st: ResolveState, site: ArgSite, missing: Param[], onRow: boolean): string {
  const { cap, call } = site;
  const text = st.lines.text;
  const add = missing.filter((p) => p.name !== cap.id_param).map((p) => `${p.name}=${exampleLiteral(p)}`);
  const idParam = cap.params.find((p) => p.name === cap.id_param);
  if (!onRow && idParam && missing.includes(idParam)) {
    const fix = `${entityHead(st, { api: site.api, entity: { name: site.entity } })}(${exampleId(idParam)}).${callWith(text, call, add)}`;
    if (showable(fix)) return `\`${call.name.text}\` (${cap.name}) acts on one row: write ${fix}`;
  }
  const fix = callWith(text, call, add);
  if (!onRow && add.length === missing.length && showable(fix))
    return `add ${missing.map((p) => `\`${p.name}\``).join(', ')}: ${fix}`;
  return `add ${missing.map((p) => `${p.name}=${exampleLiteral(p)}`).join(', ')}`;
}

/** The hint for a `limit=` value that is not a whole number from 1 to `max`. */
export function limitHint(v: Value, max: number): string {
  const n = v.kind === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(v.value) ? Number(v.value) : undefined;
  const num = v.kind === 'integer' || v.kind === 'decimal' ? v.value : n;
  if (num === undefined) return `write a whole number without quotes, e.g. limit=100`;
  const fixed = Math.round(num);
  if (fixed > max)
    return `write limit=${max} at most; read further with page(pgN) from the "more pages" line, or narrow the filters`;
  if (fixed < 1) return `leave limit out to read one page, or write limit=1 to ${max}, e.g. limit=100`;
  return `write limit=${fixed}${v.kind === 'string' ? ' (a number, without quotes)' : ' (a whole number)'}`;
}
