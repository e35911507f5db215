/**
 * Errors of the terminal commands (`init`, `doctor`, `login`, `search`, `context`, `run`): a code,
 * one line, a hint, and the exit code the command ends with (0 ok, 1 program or vendor error,
 * 2 usage, 3 server unreachable or auth).
 */
import type { ErrorCode } from '../../common/errors.js';

export const TERMINAL_EXIT = { ok: 0, program: 1, usage: 2, server: 3 } as const;
export type TerminalExit = (typeof TERMINAL_EXIT)[keyof typeof TERMINAL_EXIT];

export class TerminalError extends Error {
  /** `code` is one of CODES (common/errors.ts), or a code relayed from a server answer. */
  constructor(
    readonly code: ErrorCode | (string & {}),
    message: string,
    readonly hint: string | undefined,
    readonly exit: TerminalExit,
  ) {
    super(message);
    this.name = 'TerminalError';
  }

  /** `code: message` and an indented `hint:` line, as the other svc commands print errors. */
  format(): string {
    return `${this.code}: ${this.message}${this.hint ? `\n  hint: ${this.hint}` : ''}`;
  }
}

export const usageError = (code: ErrorCode, message: string, hint?: string) =>
  new TerminalError(code, message, hint, TERMINAL_EXIT.usage);
