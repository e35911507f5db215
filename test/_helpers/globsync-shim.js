// Node 20 shim for `fs.globSync` (added in Node 22), which the @modelcontextprotocol/conformance
// bundle imports by name from "fs". A named import of a missing builtin export fails at link time,
// before any code runs, and a builtin's ESM export names are fixed once it is first loaded, so
// assigning `fs.globSync` is not enough: this module registers a resolve hook that hands the
// conformance bundle a module re-exporting `node:fs` plus the `globSync` below.
//
//   node --import ./test/_helpers/globsync-shim.js \
//     node_modules/@modelcontextprotocol/conformance/dist/index.js server --url ... --scenario ...
//
// On Node 22+ (native fs.globSync) it does nothing. The bundle only calls globSync('**/checks.json',
// { cwd }) (tier-check), so the implementation covers `*`, `**`, `?` and literal characters only.
import fs from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { register } from 'node:module';
import { isMainThread } from 'node:worker_threads';

function globToRegExp(pattern) {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '*' && pattern[i + 1] === '*') {
      if (pattern[i + 2] === '/') {
        re += '(?:.*/)?';
        i += 2;
      } else {
        re += '.*';
        i += 1;
      }
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

/** Minimal fs.globSync: relative paths under options.cwd (default process.cwd()) matching the pattern(s). */
export function globSync(pattern, options = {}) {
  const cwd = options.cwd === undefined ? process.cwd() : String(options.cwd);
  const patterns = (Array.isArray(pattern) ? pattern : [pattern]).map(globToRegExp);
  const entries = fs.readdirSync(cwd, { recursive: true }).map(String);
  return entries.filter((p) => patterns.some((re) => re.test(p.split(path.sep).join('/'))));
}

const FS_WITH_GLOB =
  'data:text/javascript,' +
  encodeURIComponent(
    'export * from "node:fs"; export { default } from "node:fs"; ' +
      `export { globSync } from ${JSON.stringify(import.meta.url)};`,
  );

/** Resolve hook (runs on the loader thread): "fs" imported by the conformance bundle gets globSync. */
export async function resolve(specifier, context, nextResolve) {
  if (
    (specifier === 'fs' || specifier === 'node:fs') &&
    context.parentURL !== undefined &&
    context.parentURL.includes('/@modelcontextprotocol/conformance/')
  ) {
    return { url: FS_WITH_GLOB, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}

if (isMainThread && typeof fs.globSync !== 'function') register(import.meta.url);
