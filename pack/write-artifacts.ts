/** I/O edge of packing: write the CGS and manifest files, never overwriting a different artifact. */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { svcError, SvcFailure } from '../common/errors.js';
import type { Cgs } from './cgs.js';
import { manifestFor, manifestFileName, serialize } from './artifact.js';

export interface Written {
  cgsFile: string;
  manifestFile: string;
  /** `written` for new files, `unchanged` when identical files were already there. */
  status: 'written' | 'unchanged';
}

/**
 * Write `<stem>.cgs.json` then `<stem>.manifest.json` into `outDir` (the manifest last, so a loader
 * never sees a manifest whose artifact is missing). Each file goes to a temp name first, then is renamed.
 */
export async function writeArtifacts(cgs: Cgs, cgsHash: string, outDir: string): Promise<Written> {
  await mkdir(outDir, { recursive: true });
  const manifest = manifestFor(cgs, cgsHash);
  const files: Array<[string, string]> = [
    [join(outDir, manifest.artifact), serialize(cgs)],
    [join(outDir, manifestFileName(cgs.entry_id, cgs.version, cgsHash)), serialize(manifest)],
  ];
  let wrote = false;
  for (const [path, content] of files) {
    const existing = await readFile(path, 'utf8').catch(() => undefined);
    if (existing === content) continue;
    if (existing !== undefined) {
      throw new SvcFailure([
        svcError('artifact_conflict', `\`${path}\` already exists with different content`, {
          hint: 'never overwrite a published artifact: remove the stale file by hand if it is corrupt, or raise the catalog version',
        }),
      ]);
    }
    const tmp = `${path}.tmp-${process.pid}-${Date.now()}`;
    await writeFile(tmp, content, { flag: 'wx' });
    await rename(tmp, path);
    wrote = true;
  }
  return { cgsFile: files[0]![0], manifestFile: files[1]![0], status: wrote ? 'written' : 'unchanged' };
}
