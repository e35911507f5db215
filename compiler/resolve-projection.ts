/**
 * The projection at the end of a chain (`[name,city]`): every name must be a field of the rows
 * the chain returns. A relation named there is answered with the chain that follows it.
 */
import { quote } from '../common/quote.js';
import { suggestHint } from '../common/suggest.js';
import type { Chain } from './ast.js';
import { showable, sourceOf } from './fix-text.js';
import { listOf, type ResolveState, type Shape } from './resolve-state.js';

/** Check `chain.projection` against the fields of `cur` and set the step's projection. */
export function resolveProjection(st: ResolveState, cur: Shape, chain: Chain): void {
  const projection = chain.projection!;
  if (!cur.own) {
    st.fail(
      'syntax_error',
      projection.span,
      'a projection belongs where the rows are fetched',
      'move the [fields] to the line that binds the name',
    );
    return;
  }
  const fields = cur.entity.fields.map((f) => f.name);
  const proj: string[] = [];
  for (const f of projection.fields) {
    if (!fields.includes(f.text))
      st.fail(
        'projection_unknown_field',
        f.span,
        `${cur.api}:${cur.entity.name} has no field \`${quote(f.text)}\``,
        st.suggest(() => relationInProjection(st, cur, chain, f.text) ?? suggestHint(f.text, fields, listOf('fields'))),
      );
    else if (!proj.includes(f.text)) proj.push(f.text);
  }
  if (cur.card === 'none')
    st.fail(
      'projection_unknown_field',
      projection.span,
      `\`${cur.step.capability}\` returns no rows to project`,
      'remove the projection',
    );
  cur.step.projection = proj;
}

/** "`brewery` is a relation, not a field: follow it with e2(7).brewery, or keep its id `breweryId`". */
function relationInProjection(st: ResolveState, cur: Shape, chain: Chain, name: string): string | undefined {
  const sym = st.opts.symbols?.lookup(name);
  const rel = cur.entity.relations.find(
    (r) =>
      r.name === name ||
      (sym?.kind === 'relation' && sym.api === cur.api && sym.entity === cur.entity.name && sym.relation === r.name),
  );
  if (!rel) return undefined;
  const last = chain.members[chain.members.length - 1] ?? chain.head;
  const follow = `${sourceOf(st.lines.text, { start: chain.head.span.start, end: last.span.end })}.${name}`;
  const ids = Object.values(rel.bind).filter((f) => f !== cur.entity.id_field && f !== name);
  const keep = ids.length ? `, or keep its id field \`${ids[0]}\`` : '';
  return `\`${name}\` is a relation, not a field: follow it on its own line${showable(follow) ? `: ${follow}` : ''}${keep}`;
}
