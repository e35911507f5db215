/** `svc import openapi <file-or-dir> --out <dir>`: an OpenAPI document -> an authored catalog source. */
import { Command } from 'commander';
import { svcError, SvcFailure } from '../../common/errors.js';
import { compileSource, importOpenApi, readOpenApi, writeImport } from '../../pack/index.js';
import { teachabilityCheck } from '../../compiler/teachable.js';

interface ImportFlags {
  out?: string;
  entryId?: string;
  baseUrl?: string;
  include: string[];
  exclude: string[];
  allowRefDir: string[];
}

const collect = (v: string, acc: string[]) => [...acc, v];

function openapiCommand(): Command {
  return new Command('openapi')
    .description('import an OpenAPI 3.x or Swagger 2.0 document as a catalog source that `svc pack` accepts')
    .argument('<file-or-dir>', 'the document (YAML or JSON), or a directory holding openapi.yaml / swagger.json')
    .requiredOption(
      '-o, --out <dir>',
      'directory to write catalog.yaml, entities.yaml, capabilities.yaml, mappings.yaml and import-report.md into',
    )
    .option('--entry-id <id>', 'entry_id of the catalog (default: from the document title)')
    .option('--base-url <url>', 'backend URL (default: the first server of the document)')
    .option('--include <glob>', 'import only operations whose path or operationId matches (repeatable)', collect, [])
    .option('--exclude <glob>', 'leave out operations whose path or operationId matches (repeatable)', collect, [])
    .option(
      '--allow-ref-dir <dir>',
      "let a $ref read files in this folder too, not only in the document's own (repeatable; URLs are never fetched)",
      collect,
      [],
    )
    .addHelpText(
      'after',
      `
Globs: * within a path segment, ** across segments, ? one character; matched against paths
(/repos/**) and operationIds (issues*). What was skipped and why is in import-report.md.
A $ref may read only files inside the document's folder (symlinks followed) or an
--allow-ref-dir folder; any other path, file:// or http(s):// $ref stops the import
(openapi_ref_outside). URLs are never fetched.
Exit status: 0 written, 1 the document cannot be read or imported, 2 usage error.

Examples:
  svc import openapi petstore.yaml --out catalogs-src/petstore
  svc import openapi api.github.com.json --out src/github --entry-id github --include '/repos/**'`,
    )
    .action(async (input: string, flags: ImportFlags) => {
      if (flags.entryId !== undefined && !/^[a-z][a-z0-9_-]{0,62}$/.test(flags.entryId))
        throw new SvcFailure([
          svcError('bad_arguments', `--entry-id \`${flags.entryId}\` is not a valid entry_id`, {
            hint: 'a lower-case letter, then up to 62 lower-case letters, digits, _ or -',
          }),
        ]);
      if (flags.baseUrl !== undefined && !/^https?:\/\/\S+$/.test(flags.baseUrl))
        throw new SvcFailure([
          svcError('bad_arguments', `--base-url \`${flags.baseUrl}\` is not an http(s) URL`, {
            hint: 'for example --base-url https://api.example.com/v1',
          }),
        ]);
      const doc = await readOpenApi(input, { allowRefDirs: flags.allowRefDir });
      const pack = (files: Record<string, string>) =>
        compileSource(
          Object.entries(files).map(([file, text]) => ({ file, text })),
          [teachabilityCheck],
        ).diagnostics;
      const result = importOpenApi(doc, pack, {
        ...(flags.entryId !== undefined ? { entryId: flags.entryId } : {}),
        ...(flags.baseUrl !== undefined ? { baseUrl: flags.baseUrl } : {}),
        include: flags.include,
        exclude: flags.exclude,
      });
      await writeImport(flags.out!, result.files);
      const c = result.catalog;
      process.stdout.write(
        `imported ${c.entry_id}: ${c.entities.length} entities, ${c.capabilities.length} capabilities, ` +
          `${result.log.skipped.length} skipped -> ${flags.out} (see import-report.md)\n`,
      );
    });
}

export function importCommand(): Command {
  return new Command('import')
    .description('import an API description as a catalog source (openapi)')
    .addCommand(openapiCommand().exitOverride());
}
