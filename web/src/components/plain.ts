/**
 * An answer of the program route as `Accept: text/plain` and `Accept: text/toon` give it, written
 * in the page from the JSON answer it holds (the page runs a program once, in JSON; the other
 * views must not run it again). Kept in step with server/http/format.ts: the end-to-end tests
 * compare both with the server's own answers. Where the JSON lacks what the text needs, the text
 * differs: a program diagnostic is one line with its line:col, without the source line and caret
 * the server draws from the span. Pure.
 */
import { encode } from '@toon-format/toon';
import type { Block, ExecAnswer, ExecError } from '../api/types.js';
import { blocksOf } from '../api/types.js';

/**
 * Whether the server called the answer clean (a read that succeeded without errors or warnings,
 * or a page): then its TOON leaves `_meta` out and its plain text the `# key: value` lines.
 * `wrote`: the page ran it with a pcN whose review counted writes.
 */
export function cleanAnswer(body: ExecAnswer, wrote: boolean): boolean {
  const meta = body._meta?.svc ?? {};
  if (wrote || meta.mode !== 'live' || body.errors?.length || body.warnings?.length || meta.op) return false;
  return meta.status === 'succeeded' || (meta.status === undefined && meta.run_id === undefined && !body.text);
}

/** The TOON text of the answer. */
export function toonText(body: ExecAnswer, clean: boolean): string {
  const { _meta, ...rest } = body;
  try {
    return encode(clean ? rest : { ...rest, ...(_meta ? { _meta } : {}) }) + '\n';
  } catch {
    return '(this answer cannot be shown as TOON)';
  }
}

/** The plain text of the answer. */
export function plainText(body: ExecAnswer, clean: boolean): string {
  const out: string[] = [];
  if (body.text) out.push(body.text);
  for (const b of blocksOf(body)) {
    if (b.done && b.rows.length === 0) {
      out.push(b.done);
      continue;
    }
    out.push(`${b.entity}: ${b.rows.length}${b.total !== undefined ? ` of ${b.total}` : ''} row${rowsWord(b)}`);
    out.push(table(b.rows));
    if (b.more) out.push(`more: ${b.more}`);
  }
  for (const e of body.errors ?? []) out.push(errorText('error', e));
  for (const w of body.warnings ?? []) out.push(errorText('warning', w));
  const meta = clean ? [] : Object.entries(body._meta?.svc ?? {}).filter(([, v]) => v !== undefined);
  if (meta.length)
    out.push(
      meta
        .map(
          ([k, v]) => `# ${k}: ${k === 'dry_review' ? reviewLine(v) : typeof v === 'string' ? v : JSON.stringify(v)}`,
        )
        .join('\n'),
    );
  return out.join('\n') + '\n';
}

const rowsWord = (b: Block) => ((b.total ?? b.rows.length) === 1 ? '' : 's');

function errorText(kind: string, e: ExecError): string {
  const hint = e.hint ? `\n  hint: ${e.hint}` : '';
  if (kind === 'error' && e.line !== undefined) return `${e.code} at ${e.line}:${e.col}: ${e.message}${hint}`;
  return `${kind} ${e.code}: ${e.message}${hint}`;
}

function reviewLine(v: unknown): string {
  const r = (v ?? {}) as { verdict?: string; flow?: string | string[]; mutations?: number; max_calls?: number | null };
  const flow = Array.isArray(r.flow) ? r.flow.join(',') : (r.flow ?? 'clean');
  const parts = [`verdict=${r.verdict ?? ''}`, `flow=${flow}`, `mutations=${r.mutations ?? 0}`];
  if (r.max_calls !== undefined) parts.push(`max_calls=${r.max_calls === null ? 'unbounded' : r.max_calls}`);
  return parts.join(' ');
}

function cellText(v: unknown): string {
  if (v === null || v === undefined) return '';
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s.replace(/[\t\r\n]+/g, ' ');
}

type Row = Record<string, unknown>;

/** A row with nested relations as dotted columns; a list of related rows gives lists per column. */
function flatRow(row: Row, prefix = '', out: Row = {}): Row {
  for (const [k, v] of Object.entries(row)) {
    const key = prefix + k;
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) flatRow(v as Row, `${key}.`, out);
    else if (Array.isArray(v) && v.length && v.every((x) => x !== null && typeof x === 'object' && !Array.isArray(x))) {
      const cols = new Map<string, unknown[]>();
      for (const x of v)
        for (const [ck, cv] of Object.entries(flatRow(x as Row))) {
          const list = cols.get(ck) ?? [];
          list.push(cv);
          cols.set(ck, list);
        }
      for (const [ck, list] of cols) out[`${key}.${ck}`] = list;
    } else out[key] = v;
  }
  return out;
}

/** Rows as an aligned text table, columns in first-seen key order, cells cut at 60 characters. */
function table(nested: Row[]): string {
  if (nested.length === 0) return '(no rows)';
  const rows = nested.map((r) => flatRow(r));
  let seen = new Set<string>();
  for (const r of rows) for (const k of Object.keys(r)) seen.add(k);
  const emptied = [...seen].filter((k) => [...seen].some((c) => c.startsWith(`${k}.`)));
  if (emptied.length) {
    for (const r of rows)
      for (const k of emptied) {
        if (!Array.isArray(r[k])) continue;
        for (const c of seen) if (c.startsWith(`${k}.`)) r[c] = [];
        delete r[k];
      }
    const drop = new Set(emptied);
    seen = new Set([...seen].filter((k) => !drop.has(k)));
  }
  const cols = [...seen];
  const cells = rows.map((r) => cols.map((c) => cellText(r[c])));
  const width = cols.map((c, i) => {
    let w = c.length;
    for (const row of cells) if (row[i]!.length > w) w = row[i]!.length;
    return Math.min(60, w);
  });
  const line = (xs: string[]) =>
    xs
      .map((x, i) => (x.length > 60 ? x.slice(0, 57) + '...' : x).padEnd(width[i]!))
      .join('  ')
      .trimEnd();
  return [line(cols), ...cells.map(line)].join('\n');
}
