/**
 * The pure half of `svc pack`: catalog source texts -> CGS + hash, or every diagnostic at once.
 * Each file is parsed once, with positions (`yaml`, see `parse-yaml.ts`), so that a diagnostic
 * found at any stage names file:line:col.
 */
import type { SvcError } from '../common/errors.js';
import { svcError } from '../common/errors.js';
import { canonicalHash } from '../common/canonical.js';
import type { Cgs } from './cgs.js';
import { checkCgs, type Located } from './check.js';
import { normalize, pruneInvalid, type Origin } from './normalize.js';
import { locate, parseSource, schemaDiagnostics, type KeyPath, type SourceFile, type SourceText } from './source.js';

export interface CompiledCatalog {
  /** Present only when there is no diagnostic. */
  cgs?: Cgs;
  cgs_hash?: string;
  diagnostics: SvcError[];
}

/** Extra checks run on a clean CGS (the compiler adds its teachability check here). */
export type CgsCheck = (cgs: Cgs) => Located[];

/**
 * Compile a catalog source. Files are taken in name order, so the CGS does not depend on the
 * order the file system lists them in. Diagnostics are sorted by file, line and column.
 */
export function compileSource(texts: SourceText[], extraChecks: CgsCheck[] = []): CompiledCatalog {
  const sorted = [...texts].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  return compileSorted(sorted, extraChecks);
}

/** Parse, check the schema, prune what breaks it, normalize, then every semantic problem. */
function compileSorted(sorted: SourceText[], extraChecks: CgsCheck[]): CompiledCatalog {
  const diagnostics: SvcError[] = [];
  const files: SourceFile[] = [];
  const badPaths = new Map<SourceFile, KeyPath[]>();
  for (const t of sorted) {
    const { source, errors } = parseSource(t);
    diagnostics.push(...errors);
    if (!source) continue;
    files.push(source);
    const schema = schemaDiagnostics(source);
    diagnostics.push(...schema.errors);
    if (schema.paths.length) badPaths.set(source, schema.paths);
  }
  if (files.length === 0) {
    if (diagnostics.length === 0)
      diagnostics.push(
        svcError('source_read_failed', 'the catalog source holds no YAML file', {
          hint: 'put catalog.yaml (and the entity, capability and mapping files) in the directory',
        }),
      );
    return { diagnostics: sortDiagnostics(diagnostics) };
  }
  const poisoned = pruneInvalid(files, badPaths);
  // The catalog metadata may sit in a file that is not even YAML: then its absence is not news.
  if (files.length < sorted.length && !files.some((f) => f.data.catalog !== undefined)) poisoned.add('catalog');
  const n = normalize(files, poisoned);
  const located = [...n.errors, ...checkCgs(n.cgs, poisoned)];
  if (located.length === 0 && diagnostics.length === 0) for (const check of extraChecks) located.push(...check(n.cgs));
  for (const l of located) diagnostics.push({ ...l.error, span: spanOf(l.at, n.origins, files) });
  if (diagnostics.length) return { diagnostics: sortDiagnostics(diagnostics) };
  return { cgs: n.cgs, cgs_hash: canonicalHash(n.cgs), diagnostics: [] };
}

/** The source position of a CGS pointer: its own origin or that of its nearest ancestor. */
function spanOf(at: string, origins: Map<string, Origin>, files: SourceFile[]) {
  let p = at;
  for (;;) {
    const o = origins.get(p);
    // Every origin is one of the parsed files (normalize sees them as plain data).
    const src = o && files.find((f) => f === o.src);
    if (o && src) return locate(src, o.path, isKeyLevel(o.path));
    if (p === '') return locate(files[0]!, []);
    p = p.slice(0, p.lastIndexOf('/'));
  }
}

/** Named items (an entity, a field, a capability) are best shown at their key. */
function isKeyLevel(path: KeyPath): boolean {
  const parent = path[path.length - 2];
  return path.length === 2 || parent === 'fields' || parent === 'relations' || parent === 'params' || parent === 'bind';
}

function sortDiagnostics(d: SvcError[]): SvcError[] {
  return d
    .map((e, i) => ({ e, i }))
    .sort((a, b) => {
      const x = a.e.span,
        y = b.e.span;
      if (!x || !y) return x ? 1 : y ? -1 : a.i - b.i;
      return (x.file ?? '').localeCompare(y.file ?? '') || x.line - y.line || x.col - y.col || a.i - b.i;
    })
    .map(({ e }) => e);
}
