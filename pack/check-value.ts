/**
 * Checks of a value answer (`response.value`, docs/authoring.md "Value answers"): only a
 * singleton get reads its answer as one value, the value goes into a field of its entity, and a
 * value has no total.
 */
import { suggestHint } from '../common/suggest.js';
import type { Capability, Entity } from './cgs.js';
import type { Fail } from './check-context.js';

/** Reports problems of `c`'s `response.value`, if it has one; `entity` is undefined when unknown (reported elsewhere). */
export function checkValue(c: Capability, entity: Entity | undefined, at: string, fail: Fail): void {
  const value = c.http.response.value;
  if (value === undefined) return;
  const vat = `${at}/http/response/value`;
  if (c.kind !== 'get' || !c.singleton) {
    fail(
      vat,
      'bad_mapping',
      `\`${c.name}\` reads its answer as one value (\`response.value\`), which only a singleton get can`,
      'a value answer is the one row of a `kind: get` with `singleton: true`: make it so, or remove `response.value`',
    );
    return;
  }
  if (entity && !entity.fields.some((f) => f.name === value))
    fail(
      vat,
      'unknown_field',
      `\`response.value\` of \`${c.name}\` names \`${value}\`, which is not a field of ${entity.name}`,
      suggestHint(
        value,
        entity.fields.map((f) => f.name),
        { known: `fields of ${entity.name}` },
      ),
    );
  if (c.http.response.total)
    fail(
      `${at}/http/response/total`,
      'bad_mapping',
      `\`${c.name}\` reads one value (\`response.value\`) and also a total`,
      'a value answer is one value, not rows: remove `response.total`',
    );
}
