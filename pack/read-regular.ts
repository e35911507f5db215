/**
 * Reading a file found in a directory svc lists (catalog manifests and their CGS, run snapshots,
 * graph blobs) when it must be a regular file. A FIFO named like one (`x.v1.abcdef012345.manifest.json`)
 * would block a plain `readFile` until some process writes to it, and with it start-up or a reload;
 * a device would read forever. So the file is opened without blocking (`O_NONBLOCK`: an open of a
 * FIFO returns at once) and checked on the open handle (`fstat`, no race with a rename), and
 * anything but a regular file is refused with `NotRegularFileError`. A symlink to a regular file
 * is read as that file.
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import type { Stats } from 'node:fs';

/** Thrown for a path that is not a regular file; `code` is `ENOTREG`, `kind` says what it is. */
export class NotRegularFileError extends Error {
  readonly code = 'ENOTREG';
  constructor(
    readonly path: string,
    readonly kind: string,
  ) {
    super(`${path} is not a regular file (${kind})`);
    this.name = 'NotRegularFileError';
  }
}

/** What a non-regular file is, in a word or two. */
export function fileKind(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  return 'a special file';
}

/** Open flags that never wait on a FIFO or device (0 where the platform has no O_NONBLOCK). */
export const READ_NONBLOCK = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/** The bytes of `path` when it is a regular file; `NotRegularFileError` otherwise, fs errors as they come. */
export async function readRegularFile(path: string): Promise<Buffer>;
export async function readRegularFile(path: string, encoding: 'utf8'): Promise<string>;
export async function readRegularFile(path: string, encoding?: 'utf8'): Promise<Buffer | string> {
  const fh = await open(path, READ_NONBLOCK);
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw new NotRegularFileError(path, fileKind(st));
    return encoding ? await fh.readFile(encoding) : await fh.readFile();
  } finally {
    await fh.close();
  }
}
