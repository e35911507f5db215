/**
 * Link fields the catalog makes redundant: a string field `<x>_url` (or `<x>Url`) of an entity
 * whose item path has a capability below it at `<x>` (GitHub's Issue `comments_url` when
 * `/repos/{owner}/{repo}/issues/{issue_number}/comments` is imported) is a hypermedia link to
 * rows an agent reaches by that capability, never by the URL. Such fields are left out of the
 * entity (each listed for review): they cost teaching tokens and teach nothing.
 */
import { shapeOf } from './capabilities.js';
import type { ImportCapability, ImportEntity, ImportLog } from './model.js';
import { singular } from './names.js';

const LINK = /^(.+?)(_url|Url)$/;

/** The first literal segment below `item` (a path shape) of each capability path shape under it. */
function segmentsBelow(item: string, shapes: string[]): Set<string> {
  const out = new Set<string>();
  for (const shape of shapes) {
    if (!shape.startsWith(`${item}/`)) continue;
    const seg = shape.slice(item.length + 1).split('/')[0]!;
    if (seg && seg !== '{}') out.add(singular(seg.toLowerCase()));
  }
  return out;
}

/** Leaves out (in place) the link fields of each entity that its capabilities make redundant. */
export function dropLinkFields(entities: ImportEntity[], caps: ImportCapability[], log: ImportLog): void {
  const shapes = caps.map((c) => shapeOf(c.path));
  for (const e of entities) {
    const get = caps.find((c) => c.entity === e.name && c.kind === 'get');
    if (!get) continue;
    const below = segmentsBelow(shapeOf(get.path), shapes);
    const dropped: string[] = [];
    for (const [name, t] of e.fields) {
      const m = LINK.exec(name);
      if (!m || t.type !== 'string' || name === e.id) continue;
      if (below.has(singular(m[1]!.toLowerCase()))) dropped.push(name);
    }
    if (dropped.length === 0) continue;
    for (const f of dropped) e.fields.delete(f);
    log.review.push({
      what: `entity ${e.name}`,
      note: `link fields left out (their rows are reached by capabilities below its get): ${dropped.join(', ')}`,
    });
  }
}
