/**
 * Checks of a list's `sort:`: only lists sort; the direction is said one way (`order_param` with
 * two distinct values, or `desc_prefix`); the fields are sortable fields of the entity; and the
 * sort's query keys collide with nothing else the request sends.
 */
import { suggestHint } from '../common/suggest.js';
import type { Capability, Entity } from './cgs.js';
import type { Fail } from './check-context.js';
import { isSortable } from './normalize-sort.js';

/** Reports problems of the `sort` of `c` (about `entity`, when it is known), at CGS pointer `at`. */
export function checkSort(c: Capability, entity: Entity | undefined, at: string, fail: Fail): void {
  const s = c.http.sort;
  if (!s) return;
  const sat = `${at}/http/sort`;
  if ((c.kind !== 'query' && c.kind !== 'search') || c.returns !== 'rows') {
    fail(
      sat,
      'bad_mapping',
      `\`${c.name}\` is a ${c.kind} returning ${c.returns} but declares sort`,
      'only lists sort (a query or search returning rows): remove `sort:`',
    );
    return;
  }
  checkDirection(c, s as unknown as Record<string, string | undefined>, sat, fail);
  if (entity) checkFields(c, entity, sat, fail);
  checkKeys(c, sat, fail);
}

function checkDirection(c: Capability, s: Record<string, string | undefined>, sat: string, fail: Fail): void {
  if (s.order_param !== undefined && s.desc_prefix !== undefined)
    fail(
      `${sat}/desc_prefix`,
      'bad_mapping',
      `sort of \`${c.name}\` has both order_param and desc_prefix`,
      'keep order_param (`_order=desc`) or desc_prefix (`-createdAt`), whichever the vendor reads',
    );
  else if (s.order_param === undefined && s.desc_prefix === undefined)
    fail(
      sat,
      'bad_mapping',
      `sort of \`${c.name}\` does not say how to ask for descending order`,
      'add `order_param: <query key>` (as json-server: `_order`) or `desc_prefix: "-"` (sort=-createdAt)',
    );
  if (s.order_param === undefined && (s.asc !== undefined || s.desc !== undefined))
    fail(
      `${sat}/${s.asc !== undefined ? 'asc' : 'desc'}`,
      'bad_mapping',
      `sort of \`${c.name}\` gives asc/desc values without order_param`,
      'asc and desc are the values of order_param: add order_param, or remove them',
    );
  else if (s.order_param !== undefined && s.asc === s.desc)
    fail(
      `${sat}/desc`,
      'bad_mapping',
      `sort of \`${c.name}\` uses "${s.asc}" for both directions`,
      'give asc and desc different values (default "asc" and "desc")',
    );
}

function checkFields(c: Capability, entity: Entity, sat: string, fail: Fail): void {
  const s = c.http.sort!;
  const names = entity.fields.map((f) => f.name);
  const check = (name: string, where: string) => {
    const f = entity.fields.find((x) => x.name === name);
    if (!f) {
      fail(
        where,
        'unknown_field',
        `sort of \`${c.name}\` names \`${name}\`, which is not a field of ${entity.name}`,
        suggestHint(name, names, { known: `fields of ${entity.name}` }),
      );
      return false;
    }
    if (!isSortable(f)) {
      fail(
        where,
        'bad_mapping',
        `sort of \`${c.name}\` names \`${name}\`, ${f.type === 'array' ? 'an array' : 'an object'} field`,
        'a list sorts by fields holding one value (scalars, enums, refs): remove it from `fields:`',
      );
      return false;
    }
    return true;
  };
  s.fields.forEach((n, i) => check(n, `${sat}/fields/${i}`));
  if (s.fields.length === 0)
    fail(
      `${sat}/fields`,
      'bad_mapping',
      `sort of \`${c.name}\` names no field`,
      `list the fields the vendor sorts by, or leave \`fields:\` out for every field of ${entity.name}`,
    );
  if (s.default && check(s.default.field, `${sat}/default/field`) && !s.fields.includes(s.default.field))
    fail(
      `${sat}/default/field`,
      'bad_mapping',
      `the default sort field \`${s.default.field}\` of \`${c.name}\` is not one of its sort fields`,
      `add \`${s.default.field}\` to \`fields:\`, or pick one of: ${s.fields.join(', ')}`,
    );
}

/** The sort's query keys must be its own: not a mapped query key, a pagination key or a parameter. */
function checkKeys(c: Capability, sat: string, fail: Fail): void {
  const s = c.http.sort!;
  const pg = (c.http.pagination ?? {}) as Record<string, unknown>;
  const paging = ['page_param', 'offset_param', 'cursor_param', 'size_param'].map((k) => pg[k]);
  const keys: Array<[string, string]> = [['param', s.param]];
  if ('order_param' in s && s.order_param !== undefined) keys.push(['order_param', s.order_param]);
  if (keys.length === 2 && keys[0]![1] === keys[1]![1])
    fail(
      `${sat}/order_param`,
      'bad_mapping',
      `sort of \`${c.name}\` sends the field and the direction in one key \`${s.param}\``,
      'param and order_param are two query keys; for one key write desc_prefix instead',
    );
  for (const [k, key] of keys) {
    const clash = c.params.some((p) => p.name === key)
      ? `a parameter of \`${c.name}\``
      : paging.includes(key)
        ? 'a pagination parameter'
        : key in c.http.query
          ? 'a mapped query key'
          : undefined;
    if (clash)
      fail(
        `${sat}/${k}`,
        'bad_mapping',
        `sort key \`${key}\` of \`${c.name}\` is also ${clash}`,
        clash === 'a mapped query key'
          ? 'let sort own its query keys: remove the key from `query:` (a fixed order belongs in `sort.default`)'
          : clash === 'a pagination parameter'
            ? 'let pagination and sort own different query keys: check the vendor names of both'
            : `rename the parameter, or check the vendor's name of the sort key`,
      );
  }
}
