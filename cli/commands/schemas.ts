/** `svc schemas --out <dir>`: write the JSON Schemas svc ships (for editors and other tools). */
import { Command } from 'commander';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cgsSchema, CatalogSourceFileSchema } from '../../pack/index.js';

/** File name -> schema; `schemas/` in the package holds exactly these (a test keeps them in sync). */
export const SHIPPED_SCHEMAS: Record<string, unknown> = {
  'catalog-source.schema.json': CatalogSourceFileSchema,
  'cgs.schema.json': cgsSchema,
};

export function schemaFileText(schema: unknown): string {
  return JSON.stringify(schema, null, 2) + '\n';
}

export function schemasCommand(): Command {
  return new Command('schemas')
    .description('write the JSON Schemas of the catalog source format and of the CGS artifact')
    .requiredOption('-o, --out <dir>', 'directory to write the *.schema.json files into')
    .action(async (opts: { out: string }) => {
      await mkdir(opts.out, { recursive: true });
      for (const [name, schema] of Object.entries(SHIPPED_SCHEMAS)) {
        await writeFile(join(opts.out, name), schemaFileText(schema));
        process.stdout.write(`wrote ${join(opts.out, name)}\n`);
      }
    });
}
