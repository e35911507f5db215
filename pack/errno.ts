/** The `code` of a failed file-system call (`ENOENT`, `EACCES`, ...), or `error` for anything else. */
export function errnoCode(e: unknown): string {
  return e instanceof Error && 'code' in e && typeof e.code === 'string' ? e.code : 'error';
}
