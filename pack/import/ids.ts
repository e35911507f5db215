/**
 * Which field of an entity a path parameter names, and what the parameter holding a row's id is
 * called: `issue_number` names Issue.number (the words of the entity's name dropped), `petId`
 * and `id` name Pet's id field; other wire names stay as they are.
 */
import type { ImportEntity } from './model.js';
import { singular } from './names.js';
import { paramName } from './params.js';

/**
 * The field of `e` a path parameter names: the parameter's own name, or its last words once the
 * leading words that name the entity are dropped (`issue_number` of Issue, `pull_number` of
 * PullRequest, `alertNumber` of CodeScanningAlert -> `number`).
 */
export function fieldNamedBy(wire: string, e: ImportEntity): string | undefined {
  if (e.fields.has(wire)) return wire;
  const ws = wordsOf(wire);
  const own = new Set(wordsOf(e.name));
  let lead = 0;
  while (lead < ws.length - 1 && own.has(ws[lead]!)) lead++;
  // The longest lead first: `gpg_key_id` of GpgKey is its `id`, not its `key_id`.
  for (let i = lead; i >= 1; i--) {
    const rest = ws.slice(i);
    const snake = rest.join('_');
    const camel =
      rest[0]! +
      rest
        .slice(1)
        .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
        .join('');
    if (e.fields.has(snake)) return snake;
    if (e.fields.has(camel)) return camel;
  }
  return undefined;
}

const wordsOf = (s: string) =>
  s
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w)
    .map(singular);

/**
 * The parameter name of the path parameter holding a row's id: the entity's id field when the
 * wire name says so (`id`, `petId` for Pet, `issue_number` for Issue.number, the field itself),
 * else the wire name (`username`).
 */
export function idParamName(wire: string, e: ImportEntity): string {
  const w = wire.toLowerCase();
  const n = e.name.toLowerCase();
  return w === 'id' || w === `${n}id` || w === `${n}_id` || fieldNamedBy(wire, e) === e.id ? e.id : paramName(wire);
}
