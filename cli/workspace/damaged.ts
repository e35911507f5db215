/**
 * Reading the session files of `.svc/` that the terminal wrote itself: a file that is unreadable,
 * not JSON or not of the shape it was written in (edited by hand, truncated by a full disk) is
 * `workspace_damaged` (exit 2) naming the file, with the hint to start a new session, never an
 * `internal_error`: the workspace is user data, and a new session is the way out.
 */
import { closeSync, fstatSync, openSync, readFileSync } from 'node:fs';
import type { SymbolTableJson } from '../../compiler/symbols.js';
import { fileKind, READ_NONBLOCK } from '../../pack/read-regular.js';
import { TerminalError, usageError } from '../terminal/errors.js';

export const NEW_SESSION_HINT = 'run `svc context --new` with api:Entity seeds (it starts a new session)';

export const damaged = (file: string, problem: string): TerminalError =>
  usageError('workspace_damaged', `${file} ${problem}`, NEW_SESSION_HINT);

/**
 * The text of a workspace file; a read error (no permission, ...) or a file that is not a regular
 * file is `workspace_damaged`. Opened without blocking, so a FIFO under the name is not waited on.
 */
export function readWorkspaceText(file: string): string {
  let fd: number | undefined;
  try {
    fd = openSync(file, READ_NONBLOCK);
    const st = fstatSync(fd);
    if (!st.isFile()) throw damaged(file, `is not a regular file (${fileKind(st)})`);
    return readFileSync(fd, 'utf8');
  } catch (e) {
    if (e instanceof TerminalError) throw e;
    throw damaged(file, `cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** A workspace file parsed as JSON; unreadable or not JSON is `workspace_damaged`. */
export function readWorkspaceJson(file: string): unknown {
  const text = readWorkspaceText(file);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw damaged(file, 'is not valid JSON');
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

const SYMBOL_FIELDS = {
  entities: ['sym', 'api', 'entity'],
  capabilities: ['sym', 'api', 'capability', 'entity'],
  relations: ['sym', 'api', 'entity', 'relation', 'target'],
} as const;

/**
 * `symbols.json` as `SymbolTable.toJSON()` writes it: the three symbol lists of objects with
 * string fields, and a numeric `domain_revision`. Throws `workspace_damaged` otherwise.
 */
export function symbolTableJson(file: string, value: unknown): SymbolTableJson {
  if (!isObject(value)) throw damaged(file, 'is not a JSON object');
  for (const [list, fields] of Object.entries(SYMBOL_FIELDS)) {
    const items = value[list];
    if (!Array.isArray(items)) throw damaged(file, `has no \`${list}\` list`);
    for (const item of items)
      if (!isObject(item) || fields.some((f) => typeof item[f] !== 'string'))
        throw damaged(file, `has an entry of \`${list}\` without ${fields.join(', ')}`);
  }
  if (typeof value.domain_revision !== 'number') throw damaged(file, 'has no numeric `domain_revision`');
  return value as unknown as SymbolTableJson;
}
