/**
 * The operator log: one line per event, by level. Library code logs through a `Logger` it is
 * given, never through `console`; the entry point decides where lines go. Lines never carry a
 * secret or a request body.
 */

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  debug(msg: string): void;
  info(msg: string): void;
  warn(msg: string): void;
  error(msg: string): void;
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** A logger that writes `<ISO time> <level> <message>` lines at `level` and above. */
export function lineLogger(write: (line: string) => void, level: LogLevel = 'info', now: () => number = Date.now): Logger {
  const at = (l: LogLevel) => (msg: string) => {
    if (RANK[l] >= RANK[level]) write(`${new Date(now()).toISOString()} ${l} ${msg}`);
  };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** A logger that drops everything (tests, embedding). */
export const SILENT: Logger = { debug() {}, info() {}, warn() {}, error() {} };
