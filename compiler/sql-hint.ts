/**
 * Agents fluent in SQL sometimes write `SELECT name FROM e1 WHERE city = 'Berlin'`. The hint
 * translates the simple form (fields, one table, `AND`-ed equalities, `LIMIT`) into the program
 * that does it: `e1(city="Berlin")[name]`.
 */
import { showable } from './fix-text.js';

const SELECT = /^\s*select\s+(.+?)\s+from\s+([A-Za-z_][\w:-]*)(?:\s+where\s+(.+?))?(?:\s+limit\s+(\d+))?\s*;?\s*$/i;
const EQUALS = /^(?:\w+\.)?(\w+)\s*=\s*('[^']*'|"[^"]*"|-?\d+(?:\.\d+)?|true|false)$/i;

/** True when `line` starts like a SQL query. */
export function looksLikeSql(line: string): boolean {
  return /^\s*select\s/i.test(line);
}

/** A literal of SQL as a literal of svc: `'IPA'` is `"IPA"`. */
function literal(v: string): string {
  if (v.startsWith("'")) return JSON.stringify(v.slice(1, -1));
  return /^(true|false)$/i.test(v) ? v.toLowerCase() : v;
}

/** The svc program for a simple SQL query, or undefined. */
export function sqlToProgram(line: string): string | undefined {
  // A long line is not a simple query; the bound keeps the regular expression cheap.
  if (line.length > 400) return undefined;
  const m = SELECT.exec(line);
  if (!m) return undefined;
  const [, what, from, where, limit] = m;
  const fields = what!.trim() === '*' ? [] : what!.split(',').map((f) => f.trim().replace(/^\w+\./, ''));
  if (fields.some((f) => !/^\w+$/.test(f))) return undefined;
  const args: string[] = [];
  for (const cond of where ? where.split(/\s+and\s+/i) : []) {
    const c = EQUALS.exec(cond.trim());
    if (!c) return undefined;
    args.push(`${c[1]}=${literal(c[2]!)}`);
  }
  if (limit) args.push(`limit=${limit}`);
  return `${from}${args.length ? `(${args.join(', ')})` : ''}${fields.length ? `[${fields.join(',')}]` : ''}`;
}

/** The hint for a line of SQL. */
export function sqlHint(line: string): string {
  const fix = sqlToProgram(line);
  return fix && showable(fix)
    ? `svc is not SQL: write ${fix}`
    : 'svc is not SQL: write entity(filter=value, ...)[field, ...], e.g. e1(city="Berlin")[name]';
}
