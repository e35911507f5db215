/** Shared by the import tests: import a fixture document and pack the result as `svc pack` does. */
import { join } from 'node:path';
import { compileSource, importOpenApi, readOpenApi, type ImportOptions, type ImportResult } from '../../pack/index.js';
import { teachabilityCheck } from '../../compiler/teachable.js';
import type { Cgs } from '../../pack/cgs.js';

export const OPENAPI = join(import.meta.dirname, '..', '..', 'fixtures', 'openapi');

const texts = (files: Record<string, string>) =>
  Object.entries(files)
    .filter(([n]) => n.endsWith('.yaml'))
    .map(([file, text]) => ({ file, text }));

/** The pack check the CLI passes: diagnostics of compileSource with the teachability check. */
export const packCheck = (files: Record<string, string>) =>
  compileSource(texts(files), [teachabilityCheck]).diagnostics;

/** Imports fixtures/openapi/<name> (or a path) and packs the result; throws if packing fails. */
export async function importAndPack(
  name: string,
  opts: ImportOptions = {},
): Promise<{ result: ImportResult; cgs: Cgs; cgs_hash: string }> {
  const doc = await readOpenApi(name.startsWith('/') ? name : join(OPENAPI, name));
  const result = importOpenApi(doc, packCheck, opts);
  const packed = compileSource(texts(result.files), [teachabilityCheck]);
  if (!packed.cgs || !packed.cgs_hash) throw new Error(JSON.stringify(packed.diagnostics.slice(0, 3)));
  return { result, cgs: packed.cgs, cgs_hash: packed.cgs_hash };
}
