/**
 * Checks of one capability: its entity, its parameters (duplicates, types, defaults), what its
 * kind demands (an id parameter, the rows it returns, a search text), then its HTTP mapping.
 */
import { article } from '../common/article.js';
import { suggestHint } from '../common/suggest.js';
import type { Capability, Cgs, Entity, FieldDef, ParamDef, TypeSpec } from './cgs.js';
import { CONSTRAINT_KEYS, SCALAR_TYPES } from './cgs.js';
import { duplicates, type Fail, type Index, type KnownEntity, type Poisoned } from './check-context.js';
import { checkMapping } from './check-mapping.js';
import { checkSort } from './check-sort.js';
import { checkValue } from './check-value.js';
import { checkAtLeastOne, checkConstraints, checkDefaultConstraints } from './check-constraints.js';
import { checkType } from './check-type.js';
import { paramValueFits } from './param-constraints.js';
import { isPoisoned } from './normalize.js';

/** Reports problems of capability `c` (at `at`); parts dropped by schema errors are not re-reported. */
export function checkCapability(
  cgs: Cgs,
  index: Index,
  c: Capability,
  at: string,
  knownEntity: KnownEntity,
  poisoned: Poisoned,
  fail: Fail,
): void {
  const entity = index.entities.get(c.entity);
  if (!entity && !knownEntity(c.entity))
    fail(
      `${at}/entity`,
      'unknown_entity',
      `capability \`${c.name}\` is about unknown entity \`${c.entity}\``,
      suggestHint(
        c.entity,
        cgs.entities.map((e) => e.name),
      ),
    );
  const names = c.params.map((p) => p.name);
  duplicates(names, `${at}/params`, `parameter of ${c.name}:`, fail);
  c.params.forEach((p, i) => checkParam(c, p, entity, `${at}/params/${i}`, knownEntity, fail));
  c.params.forEach((p, i) => checkRequires(c, p, names, `${at}/params/${i}/requires`, fail));
  checkAtLeastOne(c, names, `${at}/at_least_one`, fail);
  const droppedParam = (n: string) => isPoisoned(poisoned, 'capabilities', c.name, 'params', n);
  checkKind(c, at, fail);
  if (!isPoisoned(poisoned, 'mappings', c.name)) {
    checkMapping(c, at, droppedParam, fail);
    checkSort(c, entity, at, fail);
    checkValue(c, entity, at, fail);
  }
}

function checkParam(
  c: Capability,
  p: ParamDef,
  entity: Entity | undefined,
  at: string,
  knownEntity: KnownEntity,
  fail: Fail,
): void {
  // A type taken from the entity field of the same name is checked (and reported) at the field.
  const type = typeOf(p);
  const field = entity?.fields.find((f) => f.name === p.name);
  const inherited = field !== undefined && JSON.stringify(sortType(field)) === JSON.stringify(sortType(type));
  if (!inherited) checkType(p, at, `parameter \`${c.name}.${p.name}\``, knownEntity, fail);
  checkConstraints(c, p, at, fail);
  if (p.default === undefined) return;
  const items = p.many && Array.isArray(p.default) ? p.default : [p.default];
  const badItem = p.type === 'enum' && Array.isArray(p.values) && items.find((x) => !p.values.includes(x as string));
  if (badItem !== undefined && badItem !== false) {
    fail(
      `${at}/default`,
      'bad_enum',
      `default ${JSON.stringify(badItem)} of \`${c.name}.${p.name}\` is not one of its values`,
      `use one of: ${p.values.map((v) => JSON.stringify(v)).join(', ')}`,
    );
  } else if (
    p.type !== 'enum' &&
    (SCALAR_TYPES as readonly string[]).concat(['array']).includes(p.type) &&
    !paramValueFits(p, p.default)
  ) {
    fail(
      `${at}/default`,
      'bad_default',
      `default ${JSON.stringify(p.default)} of \`${c.name}.${p.name}\` is not ${article(p.type)}${p.many ? ' or a non-empty list of them' : ''}`,
      `write ${article(p.type)} value or remove the default`,
    );
  } else checkDefaultConstraints(c, p, `${at}/default`, fail);
  if (p.required)
    fail(
      `${at}/default`,
      'bad_default',
      `\`${c.name}.${p.name}\` is required and also has a default`,
      'a parameter with a default is optional: remove `required: true` or the default',
    );
}

/** `requires` names other parameters of the same capability. */
function checkRequires(c: Capability, p: ParamDef, names: string[], at: string, fail: Fail): void {
  for (const r of p.requires ?? []) {
    if (r === p.name)
      fail(at, 'unknown_parameter', `\`${c.name}.${p.name}\` requires itself`, `remove \`${r}\` from its requires`);
    else if (!names.includes(r))
      fail(
        at,
        'unknown_parameter',
        `\`${c.name}.${p.name}\` requires \`${r}\`, which is not a parameter of \`${c.name}\``,
        suggestHint(
          r,
          names.filter((n) => n !== p.name),
        ),
      );
  }
}

function checkKind(c: Capability, at: string, fail: Fail): void {
  const names = c.params.map((p) => p.name);
  if (c.id_param !== undefined && !names.includes(c.id_param)) {
    fail(
      `${at}/id_param`,
      'unknown_parameter',
      `id_param \`${c.id_param}\` of \`${c.name}\` is not one of its parameters`,
      suggestHint(c.id_param, names),
    );
  }
  if (c.singleton) checkSingleton(c, at, fail);
  else if ((c.kind === 'get' || c.kind === 'update' || c.kind === 'delete') && c.id_param === undefined) {
    fail(
      `${at}/kind`,
      'bad_capability',
      `${c.kind} capability \`${c.name}\` has no id parameter`,
      'add a parameter named like the entity id field, or say which one with `id_param:`',
    );
  }
  if (c.kind === 'get' && c.returns !== 'row')
    fail(
      `${at}/returns`,
      'bad_capability',
      `get capability \`${c.name}\` must return one row`,
      'remove `returns` or write `returns: row`',
    );
  if ((c.kind === 'query' || c.kind === 'search') && c.returns !== 'rows')
    fail(
      `${at}/returns`,
      'bad_capability',
      `${c.kind} capability \`${c.name}\` must return rows`,
      'remove `returns` or write `returns: rows`',
    );
  if (c.kind === 'search' && !c.params.some((p) => p.required && p.type === 'string')) {
    fail(
      `${at}/params`,
      'bad_capability',
      `search capability \`${c.name}\` has no required string parameter for the search text`,
      'add for example `q: {type: string, required: true}`',
    );
  }
}

/** `singleton: true` is a get of the one row its path answers: no other kind, no id parameter. */
function checkSingleton(c: Capability, at: string, fail: Fail): void {
  if (c.kind !== 'get')
    fail(
      `${at}/singleton`,
      'bad_capability',
      `${c.kind} capability \`${c.name}\` is marked singleton, which only a get can be`,
      'remove `singleton: true`, or make it `kind: get` if it reads one row without an id',
    );
  else if (c.id_param !== undefined)
    fail(
      `${at}/id_param`,
      'bad_capability',
      `singleton get \`${c.name}\` has an id parameter \`${c.id_param}\``,
      'a singleton reads the one row its path answers: remove `id_param`, or remove `singleton: true` to get a row by id',
    );
}

/** The type spec of a parameter: everything but its name, description and the keys only parameters have. */
function typeOf(p: ParamDef): TypeSpec {
  const { name: _n, description: _d, required: _r, default: _v, requires: _q, many: _m, ...rest } = p;
  for (const k of CONSTRAINT_KEYS) delete (rest as Record<string, unknown>)[k];
  return rest;
}

/** A type spec without its name and description, keys sorted: a parameter's type compared with a field's. */
function sortType(t: TypeSpec | FieldDef): unknown {
  const { name: _n, description: _d, ...rest } = t as FieldDef;
  return Object.fromEntries(Object.entries(rest).sort(([a], [b]) => (a < b ? -1 : 1)));
}
