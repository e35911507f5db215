/** `svc pack <source-dir>... --out <dir>`: compile catalog sources into CGS artifacts + manifests. */
import { Command } from 'commander';
import { formatError, svcError, SvcFailure, type SvcError } from '../../common/errors.js';
import { compileSource, readSourceDir, writeArtifacts, cgsFileName, manifestFileName } from '../../pack/index.js';
import { teachabilityCheck } from '../../compiler/teachable.js';

interface PackOptions {
  out?: string;
  check?: boolean;
  json?: boolean;
}

interface PackResult {
  source: string;
  ok: boolean;
  entry_id?: string;
  version?: number;
  cgs_hash?: string;
  files?: { cgs: string; manifest: string };
  status?: 'written' | 'unchanged' | 'checked';
  diagnostics: SvcError[];
}

export function packCommand(): Command {
  return new Command('pack')
    .description('compile catalog source directories (YAML) into hash-named CGS artifacts and manifests')
    .argument(
      '<source-dir...>',
      'catalog source directories, each holding catalog.yaml and the entity, capability and mapping files',
    )
    .option(
      '-o, --out <catalog-dir>',
      'directory to write <entry_id>.v<version>.<hash12>.cgs.json and .manifest.json into',
    )
    .option('--check', 'validate only: write nothing, exit 0 when every source is clean')
    .option('--json', 'print machine-readable results on stdout')
    .addHelpText(
      'after',
      `
Every diagnostic names file:line:col, the rule broken (a stable code) and a hint.
Exit status: 0 clean, 1 diagnostics or an artifact conflict, 2 usage error.

Examples:
  svc pack fixtures/catalogs/brewery --out catalogs
  svc pack --check fixtures/catalogs/*        # catalog-authoring CI
  svc pack --check --json my-catalog | jq .`,
    )
    .action(async (dirs: string[], opts: PackOptions) => {
      if (!opts.out && !opts.check)
        throw new SvcFailure([
          svcError('bad_arguments', 'svc pack needs --out <catalog-dir> (or --check to validate only)', {
            hint: 'for example: svc pack fixtures/catalogs/brewery --out catalogs',
          }),
        ]);
      const results: PackResult[] = [];
      for (const dir of dirs) results.push(await packOne(dir, opts));
      print(results, opts);
      if (results.some((r) => !r.ok)) process.exitCode = 1;
    });
}

async function packOne(dir: string, opts: PackOptions): Promise<PackResult> {
  let texts;
  try {
    texts = await readSourceDir(dir);
  } catch (e) {
    if (e instanceof SvcFailure) return { source: dir, ok: false, diagnostics: e.errors };
    throw e;
  }
  const compiled = compileSource(texts, [teachabilityCheck]);
  if (!compiled.cgs || !compiled.cgs_hash) return { source: dir, ok: false, diagnostics: compiled.diagnostics };
  const { cgs, cgs_hash } = compiled;
  const base = { source: dir, ok: true, entry_id: cgs.entry_id, version: cgs.version, cgs_hash, diagnostics: [] };
  if (opts.check || !opts.out)
    return {
      ...base,
      status: 'checked',
      files: {
        cgs: cgsFileName(cgs.entry_id, cgs.version, cgs_hash),
        manifest: manifestFileName(cgs.entry_id, cgs.version, cgs_hash),
      },
    };
  try {
    const w = await writeArtifacts(cgs, cgs_hash, opts.out);
    return { ...base, status: w.status, files: { cgs: w.cgsFile, manifest: w.manifestFile } };
  } catch (e) {
    if (e instanceof SvcFailure) return { source: dir, ok: false, diagnostics: e.errors };
    throw e;
  }
}

function print(results: PackResult[], opts: PackOptions): void {
  if (opts.json) {
    process.stdout.write(JSON.stringify({ ok: results.every((r) => r.ok), catalogs: results }, null, 2) + '\n');
    return;
  }
  for (const r of results) {
    if (!r.ok) {
      for (const d of r.diagnostics) process.stderr.write(formatError(d) + '\n');
      process.stderr.write(`${r.source}: ${r.diagnostics.length} problem${r.diagnostics.length === 1 ? '' : 's'}\n`);
      continue;
    }
    const what = r.status === 'checked' ? 'ok' : r.status === 'unchanged' ? 'unchanged' : 'packed';
    const where = r.status === 'checked' ? '' : ` -> ${r.files!.cgs}`;
    process.stdout.write(`${what} ${r.entry_id} v${r.version} (${r.cgs_hash!.slice(0, 12)})${where}\n`);
  }
}
