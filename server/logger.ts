/**
 * The operator log of a running server, on pino: one JSON line per event on stderr (pretty text
 * when stderr is a terminal), level from `SVC_LOG_LEVEL`. Paths that could hold a credential are
 * redacted, should a caller ever log one.
 */
import { pino, type Logger as Pino } from 'pino';
import pretty from 'pino-pretty';
import type { LogFields, Logger, LogLevel } from '../common/log.js';

/** Fields that never reach a log line as they are. */
export const REDACTED_PATHS = [
  'authorization',
  'headers.authorization',
  'headers["x-api-key"]',
  'headers["x-svc-control-plane-secret"]',
  'api_key',
  'bearer_token',
  'password',
  'secret',
  '*.authorization',
  '*.password',
  '*.secret',
];

export interface LoggerOptions {
  level: LogLevel;
  /** Where lines go (default: stderr). */
  destination?: NodeJS.WritableStream;
  /** Human-readable lines instead of JSON (default: when stderr is a terminal). */
  pretty?: boolean;
}

export function createLogger(opts: LoggerOptions): Logger {
  const destination = opts.destination ?? process.stderr;
  const human = opts.pretty ?? (destination === process.stderr && process.stderr.isTTY === true);
  const base = {
    level: opts.level,
    base: { service: 'svc' },
    formatters: { level: (label: string) => ({ level: label }) },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  };
  const p: Pino = human
    ? pino(
        base,
        pretty({ destination: destination as NodeJS.WritableStream & { fd?: number }, colorize: true, sync: true }),
      )
    : pino(base, destination);
  const at = (level: LogLevel) => (msg: string, fields?: LogFields) => (fields ? p[level](fields, msg) : p[level](msg));
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
