/** I/O edge of importing: write the imported files into the output directory (created if needed). */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { svcError, SvcFailure } from '../../common/errors.js';
import { errnoCode } from '../errno.js';

export async function writeImport(dir: string, files: Record<string, string>): Promise<string[]> {
  try {
    await mkdir(dir, { recursive: true });
    const names = Object.keys(files).sort();
    for (const n of names) await writeFile(join(dir, n), files[n]!, 'utf8');
    return names.map((n) => join(dir, n));
  } catch (e) {
    throw new SvcFailure([
      svcError('import_write_failed', `cannot write the imported catalog into \`${dir}\``, {
        cause: errnoCode(e),
        hint: 'check --out',
      }),
    ]);
  }
}
