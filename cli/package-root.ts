/** Locating files shipped in the package (fixtures, schemas) from source or from `dist/`. */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | undefined;

/** The directory of svc's own package.json, found by walking up from this module. */
export function packageRoot(): string {
  if (root) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pj = join(dir, 'package.json');
    if (existsSync(pj) && (JSON.parse(readFileSync(pj, 'utf8')) as { name?: string }).name === 'svc')
      return (root = dir);
    const up = dirname(dir);
    if (up === dir) throw new Error('svc package root not found above ' + fileURLToPath(import.meta.url));
    dir = up;
  }
}

/** Where the web build (`npm run build`, scripts/build-web.mjs) puts the playground: dist/web of the package. */
export function playgroundDir(): string {
  return join(packageRoot(), 'dist', 'web');
}
