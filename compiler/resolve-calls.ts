/**
 * Calls at the head of a chain or on a row: an entity expression (a get by id, or a list through
 * the default query or search capability that takes the given names) and a capability call with
 * named arguments.
 */
import type { Capability, Entity } from '../pack/cgs.js';
import type { Arg, Call } from './ast.js';
import { buildStep } from './build-step.js';
import type { PlanArg } from './plan.js';
import { LIMIT_ARG } from './resolve-options.js';
import type { ResolveState, Shape } from './resolve-state.js';
import { defaultReads } from './symbols.js';
import { exampleLiteral } from './values.js';

/** `e1("b-1")`, `e1(city="Berlin")`: picks the read capability the arguments fit. */
export function resolveEntityCall(st: ResolveState, api: string, entity: Entity, call: Call): Shape | undefined {
  const reads = defaultReads(st.opts.registry, api, entity.name);
  const args = call.args ?? [];
  const positional = args.filter((a) => !a.name);
  const named = args.filter((a) => a.name);
  const qn = `${api}:${entity.name}`;
  if (positional.length > 0) {
    if (positional.length > 1 || named.length > 0)
      return st.fail(
        'syntax_error',
        call.span,
        'only a get by id takes a value without a name',
        `write ${call.name.text}("<id>") for one row, or name every argument: ${call.name.text}(field=value)`,
      );
    if (!reads.get)
      return st.fail(
        'unknown_argument',
        positional[0]!.span,
        `${qn} has no get capability to fetch one row by id`,
        'list rows with filters instead',
      );
    return buildStep(st, api, entity, reads.get, call, [], { [reads.get.id_param!]: positional[0]! });
  }
  const names = named.map((a) => a.name!.text).filter((n) => n !== LIMIT_ARG);
  const takes = (c: Capability | undefined) => !!c && names.every((n) => c.params.some((p) => p.name === n));
  if (reads.get && names.length === 1 && names[0] === reads.get.id_param && !takes(reads.query)) {
    return buildStep(st, api, entity, reads.get, call, named, {});
  }
  if (reads.query && takes(reads.query)) return buildStep(st, api, entity, reads.query, call, named, {});
  if (reads.search && takes(reads.search)) return buildStep(st, api, entity, reads.search, call, named, {});
  const base = reads.query ?? reads.search;
  if (!base)
    return st.fail(
      'unknown_argument',
      call.span,
      `${qn} has no query or search capability`,
      reads.get ? `fetch one row by id: ${call.name.text}("<id>")` : 'use one of its m# capabilities',
    );
  // Report against the capability that takes the most of the given names.
  const best = [reads.query, reads.search]
    .filter((c): c is Capability => !!c)
    .sort((a, b) => score(b, names) - score(a, names))[0]!;
  return buildStep(st, api, entity, best, call, named, {});
}

/** `m3(name="Pen")`, or on a row (`onRow`): `e1("b-1").m2(...)` passes the row's id. */
export function resolveCapabilityCall(
  st: ResolveState,
  api: string,
  cap: Capability,
  call: Call,
  onRow: Shape | undefined,
): Shape | undefined {
  const entity = st.opts.registry.entity(api, cap.entity)!;
  const args = call.args ?? [];
  const pos = args.find((a) => !a.name);
  if (pos)
    return st.fail(
      'syntax_error',
      pos.span,
      `\`${call.name.text}\` takes named arguments`,
      `write ${call.name.text}(${cap.params
        .slice(0, 2)
        .map((p) => `${p.name}=${exampleLiteral(p)}`)
        .join(', ')})`,
    );
  const pre: Record<string, Arg | PlanArg> = {};
  if (onRow) {
    if (!cap.id_param)
      return st.fail(
        'not_on_row',
        call.name.span,
        `\`${call.name.text}\` (${cap.name}) does not act on one row`,
        `call it on its own line: ${call.name.text}(...)`,
      );
    pre[cap.id_param] = { ref: { step: onRow.step.id, field: onRow.entity.id_field } };
  }
  return buildStep(st, api, entity, cap, call, args, pre, onRow);
}

function score(c: Capability, names: string[]): number {
  return names.filter((n) => c.params.some((p) => p.name === n)).length;
}
