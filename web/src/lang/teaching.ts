/**
 * Reading the teaching text of a session (docs/teaching.md): the rules above, the TSV table
 * (`form\tmeaning`) below, and from each row the names a program may write after its symbol:
 * parameters and filters (`city=$`, `optional: ...`, `filters: ...`), fields (`fields: ...`) and the
 * values of enum fields (`kind=micro|brewpub`). Pure.
 */

export interface TeachingRow {
  form: string;
  meaning: string;
}

export interface Teaching {
  /** The rules lines (taught once per session, above the table). */
  rules: string[];
  rows: TeachingRow[];
}

/** The header row of every teaching table. */
export const HEADER = 'form\tmeaning';

/** Splits a teaching text (the `rules` + `wave` of an answer, or `/symbols`' `teaching`) into rules and rows. */
export function parseTeaching(text: string): Teaching {
  const rules: string[] = [];
  const rows: TeachingRow[] = [];
  let inTable = false;
  for (const line of text.split('\n')) {
    if (line === HEADER) {
      inTable = true;
      continue;
    }
    const tab = line.indexOf('\t');
    if (inTable && tab >= 0) rows.push({ form: line.slice(0, tab), meaning: line.slice(tab + 1) });
    else if (!inTable && line.trim() !== '') rules.push(line);
  }
  return { rules, rows };
}

/** What a row teaches about one symbol. */
export interface SymbolNames {
  sym: string;
  /** The row's meaning, for the completion's info. */
  about: string;
  /** Parameters and filters: written `name=value` in the call's parentheses. */
  params: string[];
  /** Fields: written in a projection `[a, b]`. */
  fields: string[];
  /** Allowed values of enum fields and parameters. */
  enums: Record<string, string[]>;
}

const SYMBOL_AT_START = /^([emr]\d+)\b/;
const SYMBOLS = /\b([em]\d+)\b(?!")/g;

/** The symbol a row is about: a relation row starts its meaning with `rN ->`; others end their form with it. */
export function rowSymbol(row: TeachingRow): string | undefined {
  const m = SYMBOL_AT_START.exec(row.meaning);
  if (m) return m[1];
  const all = [...row.form.matchAll(SYMBOLS)];
  return all[all.length - 1]?.[1];
}

/** The names each symbol's rows teach, merged per symbol (a symbol may be taught by several rows). */
export function namesBySymbol(rows: TeachingRow[]): Map<string, SymbolNames> {
  const out = new Map<string, SymbolNames>();
  for (const row of rows) {
    const sym = rowSymbol(row);
    if (!sym) continue;
    const names = out.get(sym) ?? { sym, about: row.meaning, params: [], fields: [], enums: {} };
    out.set(sym, names);
    for (const m of row.form.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=\$/g)) add(names.params, m[1]!);
    for (const part of row.meaning.split(' | ')) readPart(part, names);
  }
  return out;
}

function readPart(part: string, names: SymbolNames): void {
  const m = /^(fields|filters|optional): (.*)$/.exec(part.trim());
  if (!m) return;
  for (const item of m[2]!.split(', ')) {
    const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(item)?.[0];
    if (!name) continue;
    add(m[1] === 'fields' ? names.fields : names.params, name);
    const en = /^[A-Za-z_][A-Za-z0-9_]*=([^\s]+)$/.exec(item);
    if (en && en[1]!.includes('|')) names.enums[name] = en[1]!.split('|');
  }
}

function add(list: string[], name: string): void {
  if (!list.includes(name)) list.push(name);
}
