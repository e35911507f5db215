/** Catalog loading options shared by the commands that load catalogs (`catalogs`, later `serve`). */
import { type Command, Option } from 'commander';
import { formatError, svcError, SvcFailure } from '../common/errors.js';
import { loadCatalogDir, loadSchemaFile, type LoadOptions, type LoadResult } from '../pack/index.js';
import { displayUrl } from '../pack/urls.js';
import { teachabilityCheck } from '../compiler/teachable.js';

export interface CatalogFlags {
  catalogDir?: string;
  schema?: string;
  backend?: string[];
}

export function addCatalogOptions(cmd: Command): Command {
  return cmd
    .addOption(
      new Option('--catalog-dir <dir>', 'load every packed catalog (manifest + CGS) in a directory').conflicts(
        'schema',
      ),
    )
    .addOption(new Option('--schema <path>', 'load one CGS file').conflicts('catalogDir'))
    .option(
      '--backend <entry_id=url>',
      'override the backend URL of an entry (repeatable; also SVC_BACKEND_URL_<ENTRY_ID>)',
      collect,
      [] as string[],
    );
}

function collect(v: string, prev: string[]): string[] {
  return [...prev, v];
}

/** `a=url` pairs -> map; malformed pairs are usage errors. */
export function parseBackendFlags(flags: string[] = []): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of flags) {
    const i = f.indexOf('=');
    // The value is shown without userinfo or query: it may carry a credential.
    if (i <= 0)
      throw new SvcFailure([
        svcError('bad_arguments', `--backend \`${displayUrl(f)}\` is not entry_id=url`, {
          hint: 'for example --backend brewery=http://127.0.0.1:3000',
        }),
      ]);
    out[f.slice(0, i)] = f.slice(i + 1);
  }
  return out;
}

/** Load catalogs as the flags say; exactly one of --catalog-dir and --schema is required. */
export async function loadFromFlags(flags: CatalogFlags, extra: LoadOptions = {}): Promise<LoadResult> {
  if (!flags.catalogDir === !flags.schema) {
    throw new SvcFailure([
      svcError(
        'bad_arguments',
        flags.catalogDir
          ? '--catalog-dir and --schema are mutually exclusive'
          : 'give --catalog-dir <dir> or --schema <path>',
        { hint: 'for example: --catalog-dir catalogs (a directory written by `svc pack --out catalogs`)' },
      ),
    ]);
  }
  const opts: LoadOptions = {
    extraChecks: [teachabilityCheck],
    ...extra,
    backendOverrides: parseBackendFlags(flags.backend),
  };
  return flags.catalogDir ? loadCatalogDir(flags.catalogDir, opts) : loadSchemaFile(flags.schema!, opts);
}

/** Print load problems on stderr (each one line plus hint). */
export function reportProblems(result: LoadResult): void {
  for (const p of result.problems) process.stderr.write(`warning: ${formatError(p)}\n`);
}
