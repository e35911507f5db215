/**
 * A bundled authored catalog copied into a temporary directory, edited there and, when asked,
 * packed: how a test runs a fixture catalog with one mapping or parameter changed.
 */
import type { Test } from 'tap';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileSource, readSourceDir, writeArtifacts } from '../../pack/index.js';
import { ROOT } from './server.js';

/** A new temporary directory, removed when `t` ends. */
export async function tmp(t: Test, prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** One edit of a source file: `from` (which must be there) replaced by `to`. */
export interface Edit {
  file: string;
  from: string;
  to: string;
}

/** `fixtures/catalogs/<name>` copied into a temporary directory with `edits` applied; its path. */
export async function editedCatalog(t: Test, name: string, edits: Edit[]): Promise<string> {
  const src = await tmp(t, `svc-${name}-src-`);
  await cp(join(ROOT, 'fixtures', 'catalogs', name), src, { recursive: true });
  for (const e of edits) {
    const file = join(src, e.file);
    const before = await readFile(file, 'utf8');
    if (!before.includes(e.from)) throw new Error(`${file}: no ${e.from}`);
    await writeFile(file, before.replace(e.from, e.to));
  }
  return src;
}

/** The edited catalog packed into a temporary directory (asserting it compiles clean); its path. */
export async function packedCatalog(t: Test, name: string, edits: Edit[]): Promise<string> {
  const compiled = compileSource(await readSourceDir(await editedCatalog(t, name, edits)));
  t.same(compiled.diagnostics, [], 'the test catalog compiles');
  const dir = await tmp(t, `svc-${name}-packed-`);
  await writeArtifacts(compiled.cgs!, compiled.cgs_hash!, dir);
  return dir;
}
