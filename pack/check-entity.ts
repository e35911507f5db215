/**
 * Checks of one entity: duplicate and missing id fields, field types, and each relation (its
 * target, the capability that follows it, its cardinality and the parameters it binds).
 */
import { suggestHint } from '../common/suggest.js';
import type { Cgs, Entity } from './cgs.js';
import { READ_KINDS } from './cgs.js';
import { duplicates, type Fail, type Index, type KnownEntity } from './check-context.js';
import { checkType } from './check-type.js';

/** Reports problems of entity `e` (at `at`); `droppedField` names fields dropped by schema errors. */
export function checkEntity(
  cgs: Cgs,
  index: Index,
  e: Entity,
  at: string,
  knownEntity: KnownEntity,
  knownCap: (n: string) => boolean,
  droppedField: (n: string) => boolean,
  fail: Fail,
): void {
  const fieldNames = e.fields.map((f) => f.name);
  duplicates(fieldNames, `${at}/fields`, `field of ${e.name}:`, fail);
  if (!fieldNames.includes(e.id_field) && !droppedField(e.id_field) && !singletonOnly(cgs, e)) {
    fail(
      `${at}/id_field`,
      'missing_id_field',
      `entity \`${e.name}\` has no id field \`${e.id_field}\` among its fields`,
      `declare the field \`${e.id_field}\`, or name the id field with \`id: <field>\` (${suggestHint(e.id_field, fieldNames)})`,
    );
  }
  e.fields.forEach((f, i) => checkType(f, `${at}/fields/${i}`, `field \`${e.name}.${f.name}\``, knownEntity, fail));
  e.relations.forEach((r, i) => {
    const rat = `${at}/relations/${i}`;
    if (fieldNames.includes(r.name))
      fail(
        rat,
        'duplicate_name',
        `relation \`${r.name}\` of ${e.name} has the name of a field`,
        'give the relation a name no field of the entity uses',
      );
    if (e.relations.findIndex((x) => x.name === r.name) < i)
      fail(rat, 'duplicate_name', `relation \`${r.name}\` of ${e.name} is declared twice`, 'remove one of the two');
    if (!knownEntity(r.target)) {
      fail(
        `${rat}/target`,
        'unknown_entity',
        `relation \`${e.name}.${r.name}\` targets unknown entity \`${r.target}\``,
        suggestHint(
          r.target,
          cgs.entities.map((x) => x.name),
        ),
      );
    }
    const cap = index.capabilities.get(r.capability);
    if (!cap) {
      if (!knownCap(r.capability))
        fail(
          `${rat}/capability`,
          'unknown_capability',
          `relation \`${e.name}.${r.name}\` is followed by unknown capability \`${r.capability}\``,
          suggestHint(
            r.capability,
            (knownEntity.names.includes(r.target)
              ? cgs.capabilities.filter((c) => c.entity === r.target)
              : cgs.capabilities
            ).map((c) => c.name),
          ),
        );
      return;
    }
    if (cap.kind !== 'query' && cap.kind !== 'get' && cap.kind !== 'search') {
      fail(
        `${rat}/capability`,
        'bad_relation',
        `relation \`${e.name}.${r.name}\` is followed by \`${cap.name}\`, a ${cap.kind}: following a relation must not change vendor data`,
        'follow relations with a query, get or search capability',
      );
    }
    if (cap.entity !== r.target)
      fail(
        `${rat}/capability`,
        'bad_relation',
        `relation \`${e.name}.${r.name}\` targets ${r.target} but capability \`${cap.name}\` returns ${cap.entity}`,
        `use a capability of ${r.target}`,
      );
    const want = r.cardinality === 'many' ? 'rows' : 'row';
    if (cap.returns !== want)
      fail(
        `${rat}/cardinality`,
        'bad_relation',
        `relation \`${e.name}.${r.name}\` has cardinality ${r.cardinality} but \`${cap.name}\` returns ${cap.returns}`,
        r.cardinality === 'many'
          ? 'follow a many-relation with a query or search capability'
          : 'follow a one-relation with a get capability',
      );
    for (const [param, field] of Object.entries(r.bind)) {
      if (!cap.params.some((p) => p.name === param))
        fail(
          `${rat}/bind/${param}`,
          'unknown_parameter',
          `relation \`${e.name}.${r.name}\` binds \`${param}\`, which \`${cap.name}\` does not take`,
          suggestHint(
            param,
            cap.params.map((p) => p.name),
          ),
        );
      if (!fieldNames.includes(field) && !droppedField(field))
        fail(
          `${rat}/bind/${param}`,
          'unknown_field',
          `relation \`${e.name}.${r.name}\` binds \`${param}\` to unknown field \`${field}\` of ${e.name}`,
          suggestHint(field, fieldNames),
        );
    }
    for (const p of cap.params) {
      if (p.required && !(p.name in r.bind))
        fail(
          `${rat}/bind`,
          'bad_relation',
          `relation \`${e.name}.${r.name}\` leaves required parameter \`${p.name}\` of \`${cap.name}\` unbound`,
          `add \`${p.name}: <field of ${e.name}>\` to bind`,
        );
    }
  });
}

/**
 * An entity read only as the one row of a singleton get (`GET /rate_limit`), with no list and no
 * capability acting on one of its rows by id: its rows have no identity, so it needs no id field.
 */
function singletonOnly(cgs: Cgs, e: Entity): boolean {
  const caps = cgs.capabilities.filter((c) => c.entity === e.name);
  return (
    caps.some((c) => c.singleton) &&
    caps.every((c) => c.singleton || (!READ_KINDS.has(c.kind) && c.id_param === undefined))
  );
}
