/** I/O edge of packing: read the YAML files of a catalog source directory. */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { svcError, SvcFailure } from '../common/errors.js';
import { errnoCode } from './errno.js';
import type { SourceText } from './source.js';

/** Every `*.yaml` / `*.yml` file directly inside `dir`, named `dir/<file>` for diagnostics. */
export async function readSourceDir(dir: string): Promise<SourceText[]> {
  let names: string[];
  try {
    const s = await stat(dir);
    if (!s.isDirectory())
      throw new SvcFailure([
        svcError('source_read_failed', `\`${dir}\` is not a directory`, {
          hint: 'svc pack takes catalog source directories (each holding catalog.yaml and friends)',
        }),
      ]);
    names = (await readdir(dir, { withFileTypes: true })).filter((d) => d.isFile()).map((d) => d.name);
  } catch (e) {
    if (e instanceof SvcFailure) throw e;
    throw new SvcFailure([
      svcError('source_read_failed', `cannot read catalog source directory \`${dir}\``, {
        cause: errnoCode(e),
        hint: 'check the path',
      }),
    ]);
  }
  const yaml = names.filter((n) => /\.ya?ml$/.test(n)).sort();
  return Promise.all(yaml.map(async (n) => ({ file: join(dir, n), text: await readFile(join(dir, n), 'utf8') })));
}
