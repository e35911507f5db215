/**
 * Items whose subtree broke the schema are dropped before normalizing, at the finest named level
 * (a field, a relation, a parameter, a mapping, a catalog key), so the rest is still checked.
 * Their names are "poisoned": references to them are not reported a second time.
 */
import { isObj } from './normalize-context.js';
import type { KeyPath, SourceData } from './source.js';

/** Drop the items at `badPaths` from the files' data (in place); returns the poisoned names. */
export function pruneInvalid(files: SourceData[], badPaths: Map<SourceData, KeyPath[]>): Set<string> {
  const poisoned = new Set<string>();
  for (const f of files) {
    for (const bad of badPaths.get(f) ?? []) {
      const path = bad.slice(0, pruneDepth(bad));
      let parent: unknown = f.data;
      for (const seg of path.slice(0, -1)) parent = isObj(parent) ? parent[seg as string] : undefined;
      if (isObj(parent)) delete parent[path[path.length - 1] as string];
      poisoned.add(path.join(':'));
    }
  }
  return poisoned;
}

function pruneDepth(p: KeyPath): number {
  const [section, , sub, item] = p;
  if (section === 'entities' && (sub === 'fields' || sub === 'relations') && item !== undefined) return 4;
  if (section === 'capabilities' && sub === 'params' && item !== undefined) return typeof item === 'number' ? 3 : 4;
  return Math.max(1, Math.min(p.length, 2));
}

/** Whether a name was dropped for a schema error (or its whole section was). */
export function isPoisoned(poisoned: ReadonlySet<string>, ...path: string[]): boolean {
  for (let i = 1; i <= path.length; i++) if (poisoned.has(path.slice(0, i).join(':'))) return true;
  return false;
}
