/**
 * The operator log: one line per event, by level. Library code logs through a `Logger` it is
 * given, never through `console`; the entry point decides where lines go. Lines never carry a
 * secret or a request body.
 */

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** Fields of a log line besides its message (no secrets, no request bodies). */
export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
}

export const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** A logger that writes `<ISO time> <level> <message> key=value ...` lines at `level` and above. */
export function lineLogger(
  write: (line: string) => void,
  level: LogLevel = 'info',
  now: () => number = Date.now,
): Logger {
  const at = (l: LogLevel) => (msg: string, fields?: LogFields) => {
    if (RANK[l] < RANK[level]) return;
    const extra = fields
      ? Object.entries(fields)
          .map(([k, v]) => ` ${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
          .join('')
      : '';
    write(`${new Date(now()).toISOString()} ${l} ${msg}${extra}`);
  };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** The levels, least severe first. */
export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

/** A logger that drops everything (tests, embedding). */
export const SILENT: Logger = { debug() {}, info() {}, warn() {}, error() {} };
