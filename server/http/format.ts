/**
 * Response formats of the execute routes, chosen by `Accept`: `text/toon` (the default when
 * Accept is omitted), `text/plain` (a readable table), `application/json` (rows plus `_meta.svc`)
 * and `application/x-ndjson` (one row per line, meta last). Every format carries the same
 * information: rows, totals and page handles, `_meta.svc`, errors with hints, notices. Errors are
 * bounded in every format (`boundErrors`: 20 in full, then a `too_many_errors` count, each text
 * cut to a few hundred characters), so no input makes an error answer grow without bound.
 */
import { boundErrors } from '../../common/bound-errors.js';
import type { SvcError } from '../../common/errors.js';
import { renderDiagnostic } from '../../compiler/render-diagnostic.js';
import type { Outcome, TeachingOpened } from '../execute/outcome.js';
import { blockJson, errorsJson, type BlockWording } from '../execute/outcome-json.js';
import type { Format } from './negotiate.js';
import { toonEncode as toon } from './toon-fast.js';

export type { Format } from './negotiate.js';

export const CONTENT_TYPES: Record<Format, string> = {
  toon: 'text/toon; charset=utf-8',
  plain: 'text/plain; charset=utf-8',
  json: 'application/json; charset=utf-8',
  ndjson: 'application/x-ndjson; charset=utf-8',
};

/** How HTTP asks for the next page of a block: the program form `page(pgN)[..]`. */
const HTTP_BLOCK: BlockWording = { more: (next) => `page(${next})[..]` };

/**
 * The JSON object form (also what TOON encodes). `compact`: a clean read leaves `_meta` out (its
 * run and commit ids travel in the `svc-run-id` and `svc-commit-id` headers).
 */
export function outcomeObject(o: Outcome, opts: { compact?: boolean } = {}): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (o.extra) Object.assign(body, o.extra);
  const last = o.results[o.results.length - 1];
  if (o.results.length > 1) body.results = o.results.map((b) => blockJson(b, HTTP_BLOCK));
  else if (last) Object.assign(body, blockJson(last, HTTP_BLOCK));
  if (o.text && !o.extra) body.text = o.text;
  if (o.errors.length) body.errors = errorsJson(o.errors);
  if (o.warnings?.length) body.warnings = errorsJson(o.warnings);
  if (!(opts.compact && o.clean)) body._meta = { svc: o.meta };
  return body;
}

export function render(o: Outcome, format: Format, source?: string): string {
  switch (format) {
    case 'json':
      return JSON.stringify(outcomeObject(o)) + '\n';
    case 'toon':
      return teachingToon(o) ?? toon(outcomeObject(o, { compact: true })) + '\n';
    case 'ndjson':
      return ndjson(o);
    case 'plain':
      return plain(o, source);
  }
}

function ndjson(o: Outcome): string {
  const lines: string[] = [];
  for (const b of o.results) for (const r of b.rows) lines.push(JSON.stringify(r));
  const tail: Record<string, unknown> = {};
  if (o.extra) Object.assign(tail, o.extra);
  if (o.results.length)
    tail.results = o.results.map((b) => {
      const { rows: _rows, ...summary } = blockJson(b, HTTP_BLOCK);
      return summary;
    });
  if (o.text && !o.extra) tail.text = o.text;
  if (o.errors.length) tail.errors = errorsJson(o.errors);
  if (o.warnings?.length) tail.warnings = errorsJson(o.warnings);
  tail._meta = { svc: o.meta };
  lines.push(JSON.stringify(tail));
  return lines.join('\n') + '\n';
}

function cellText(v: unknown): string {
  if (v === null || v === undefined) return '';
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s.replace(/[\t\r\n]+/g, ' ');
}

/**
 * A row with its nested relations as columns: `{customer: {name}}` gives `customer.name`, a list
 * of related rows `{comments: [{id: 1}, {id: 4}]}` gives `comments.id` = `[1,4]`.
 */
export function flatRow(
  row: Record<string, unknown>,
  prefix = '',
  out: Record<string, unknown> = {},
): Record<string, unknown> {
  for (const [k, v] of Object.entries(row)) {
    const key = prefix + k;
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) flatRow(v as Record<string, unknown>, `${key}.`, out);
    else if (Array.isArray(v) && v.length && v.every((x) => x !== null && typeof x === 'object' && !Array.isArray(x))) {
      const cols = new Map<string, unknown[]>();
      for (const x of v)
        for (const [ck, cv] of Object.entries(flatRow(x as Record<string, unknown>))) {
          const list = cols.get(ck) ?? [];
          list.push(cv);
          cols.set(ck, list);
        }
      for (const [ck, list] of cols) out[`${key}.${ck}`] = list;
    } else out[key] = v;
  }
  return out;
}

/** Rows as an aligned text table (columns = keys in first-seen order; nested relations as dotted columns). */
export function table(nested: Array<Record<string, unknown>>): string {
  if (nested.length === 0) return '(no rows)';
  const rows = nested.map((r) => flatRow(r));
  let seen = new Set<string>();
  for (const r of rows) for (const k of Object.keys(r)) seen.add(k);
  // A row whose related list is empty (`reviews: []`) gets empty lists in the columns other rows have.
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
  // A loop, not Math.max(...cells): hundreds of thousands of rows would overflow the call stack.
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

/** Keys of `Outcome.extra` that the plain text already shows as its text. */
const PLAIN_TEXT = ['rules', 'wave', 'notice'] as const;
const PLAIN_TEXT_KEYS: ReadonlySet<string> = new Set(PLAIN_TEXT);

/**
 * A teaching answer (a new session or a context wave) in TOON: the session fields as TOON, a blank
 * line, then the rules and the table as the text they are (TSV lines), never one quoted string with
 * every tab and newline escaped. A TOON decoder reads the part before the first blank line.
 */
function teachingToon(o: Outcome): string | undefined {
  const extra: Partial<TeachingOpened> | undefined = o.extra;
  if (!o.text || !extra || !PLAIN_TEXT.some((k) => extra[k] !== undefined)) return undefined;
  const head = outcomeObject(o, { compact: true });
  for (const k of PLAIN_TEXT_KEYS) delete head[k];
  // `_meta` repeats what the head already says (domain_revision): leave it out then.
  if (Object.entries(o.meta).every(([k, v]) => v === undefined || head[k] === v)) delete head._meta;
  return `${toon(head)}\n\n${o.text}\n`;
}

function plain(o: Outcome, source?: string): string {
  const out: string[] = [];
  if (o.text) out.push(o.text);
  for (const b of o.results) {
    if (b.done && b.rows.length === 0) {
      out.push(b.done);
      continue;
    }
    out.push(
      `${b.entity}: ${b.rows.length}${b.total !== undefined ? ` of ${b.total}` : ''} row${(b.total ?? b.rows.length) === 1 ? '' : 's'}`,
    );
    out.push(table(b.rows));
    if (b.next) out.push(`more: page(${b.next})[..]`);
  }
  for (const e of boundErrors(o.errors)) {
    out.push(
      source && e.span
        ? renderDiagnostic(source, e)
        : `error ${e.code}: ${e.message}${e.hint ? `\n  hint: ${e.hint}` : ''}`,
    );
  }
  for (const w of boundErrors(o.warnings ?? []))
    out.push(`warning ${w.code}: ${w.message}${w.hint ? `\n  hint: ${w.hint}` : ''}`);
  // Session fields (prompt_hash, session, entries, ...); the wave, rules and notice are the text.
  const extra = Object.entries(o.extra ?? {}).filter(
    ([k, v]) => v !== undefined && !PLAIN_TEXT_KEYS.has(k) && !(k in o.meta),
  );
  const meta = o.clean ? [] : [...extra, ...Object.entries(o.meta).filter(([, v]) => v !== undefined)];
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

/**
 * `dry_review` on one line (its summary is the answer's text already):
 * `verdict=review flow=over_call_budget mutations=0 max_calls=3000`.
 */
function reviewLine(v: unknown): string {
  const r = (v ?? {}) as { verdict?: string; flow?: string | string[]; mutations?: number; max_calls?: number | null };
  const flow = Array.isArray(r.flow) ? r.flow.join(',') : (r.flow ?? 'clean');
  const parts = [`verdict=${r.verdict ?? ''}`, `flow=${flow}`, `mutations=${r.mutations ?? 0}`];
  if (r.max_calls !== undefined) parts.push(`max_calls=${r.max_calls === null ? 'unbounded' : r.max_calls}`);
  return parts.join(' ');
}

/** An error alone, in a format (the body of a non-2xx answer that has no rows). */
export function renderErrors(errors: SvcError[], format: Format, source?: string): string {
  return render({ kind: 'result', results: [], errors, meta: { code: errors[0]?.code } }, format, source);
}
