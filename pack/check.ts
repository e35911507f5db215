/**
 * Semantic checks of a CGS: everything the JSON Schema cannot say (references, duplicates, kinds,
 * templates). Run at pack time (diagnostics mapped back to YAML positions) and again at load time
 * on every artifact, so a hand-edited CGS gets the same scrutiny. Pure: returns problems as values.
 */
import type { ErrorCode } from '../common/errors.js';
import { svcError } from '../common/errors.js';
import type { Cgs } from './cgs.js';
import { checkCapability } from './check-capability.js';
import { duplicates, firstByName, type Index, type KnownEntity, type Located, type Poisoned } from './check-context.js';
import { checkEntity } from './check-entity.js';
import { checkHeader } from './check-header.js';
import { isPoisoned } from './normalize.js';

export type { Located, Poisoned } from './check-context.js';
export { valueFits } from './check-type.js';

/** Every semantic problem of `cgs`, in a stable order; `poisoned` names declarations dropped earlier. */
export function checkCgs(cgs: Cgs, poisoned: Poisoned = new Set()): Located[] {
  const out: Located[] = [];
  const fail = (at: string, code: ErrorCode, message: string, hint?: string) =>
    out.push({ error: svcError(code, message, hint ? { hint } : {}), at });
  const entityNames = cgs.entities.map((e) => e.name);
  const capNames = cgs.capabilities.map((c) => c.name);
  // First declarations by name (a second one is a duplicate_name): lookups stay linear in big catalogs.
  const index: Index = { entities: firstByName(cgs.entities), capabilities: firstByName(cgs.capabilities) };
  const knownEntity: KnownEntity = Object.assign(
    (n: string) => index.entities.has(n) || isPoisoned(poisoned, 'entities', n),
    { names: entityNames },
  );
  const knownCap = (n: string) => index.capabilities.has(n) || isPoisoned(poisoned, 'capabilities', n);

  checkHeader(cgs, (at, ...rest) => {
    if (!isPoisoned(poisoned, 'catalog', at.split('/')[1]!)) fail(at, ...rest);
  });
  duplicates(entityNames, '/entities', 'entity', fail);
  duplicates(capNames, '/capabilities', 'capability', fail);

  // A name declared twice is reported once (above); only its first declaration is checked further.
  cgs.entities.forEach((e, i) => {
    if (index.entities.get(e.name) === e)
      checkEntity(
        cgs,
        index,
        e,
        `/entities/${i}`,
        knownEntity,
        knownCap,
        (n) => isPoisoned(poisoned, 'entities', e.name, 'fields', n),
        fail,
      );
  });
  cgs.capabilities.forEach((c, i) => {
    if (index.capabilities.get(c.name) === c)
      checkCapability(cgs, index, c, `/capabilities/${i}`, knownEntity, poisoned, fail);
  });
  return out;
}
