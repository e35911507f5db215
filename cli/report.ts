/** How the CLI shows failures: one `code: message` line per error on stderr, and an exit code. */
import { CommanderError } from 'commander';
import { formatError, SvcFailure } from '../common/errors.js';
import { TerminalError } from './terminal/errors.js';
import { safeText } from './terminal/safe-text.js';

/**
 * Exit codes: 1 = the input has problems (diagnostics), 2 = usage error, 70 = internal error; the
 * terminal commands add 3 = server unreachable or auth (`TerminalError`).
 */
export const EXIT = { ok: 0, problems: 1, usage: 2, internal: 70 } as const;

/**
 * Print the failure on stderr and return the exit code. Messages quote text svc did not write (a
 * server's answer, a file's content), so control characters are shown escaped (safe-text.ts).
 */
export function reportFailure(e: unknown): number {
  if (e instanceof TerminalError) {
    process.stderr.write(safeText(e.format()) + '\n');
    return e.exit;
  }
  if (e instanceof SvcFailure) {
    for (const err of e.errors) process.stderr.write(safeText(formatError(err)) + '\n');
    return e.errors.some((x) => x.code === 'bad_arguments') ? EXIT.usage : EXIT.problems;
  }
  if (e instanceof CommanderError) return e.exitCode === 0 ? EXIT.ok : EXIT.usage;
  process.stderr.write(
    `internal_error: ${safeText((e as Error)?.message ?? String(e))}\n  hint: this is a bug in svc; please report it with the command you ran\n`,
  );
  if (process.env.SVC_DEBUG) process.stderr.write(String((e as Error)?.stack) + '\n');
  return EXIT.internal;
}
