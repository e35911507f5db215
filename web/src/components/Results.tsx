/**
 * Rows of each returned expression as a table sortable by any column; `more` sends `page(pgN)`,
 * whose rows are appended to the block (a sort in force applies to all the rows loaded).
 */
import { useState } from 'preact/hooks';
import type { Row } from '../api/types.js';
import { handleOf, type LoadedBlock } from './pages.js';

type More = (index: number, handle: string) => void;

export function Results({ blocks, more, busy }: { blocks: LoadedBlock[]; more: More; busy: boolean }) {
  return (
    <div class="results" data-testid="results">
      {blocks.map((b, i) => (
        <BlockView key={`${i}-${b.entity}`} block={b} index={i} more={more} busy={busy} />
      ))}
    </div>
  );
}

/** Columns in first-seen key order (as the plain-text format does). */
export function columnsOf(rows: Row[]): string[] {
  const seen = new Set<string>();
  for (const r of rows) for (const k of Object.keys(r)) seen.add(k);
  return [...seen];
}

/** Compares two cells: numbers as numbers, empty last, the rest as text. */
export function compareCells(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === undefined || a === null) return 1;
  if (b === undefined || b === null) return -1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return cellText(a).localeCompare(cellText(b), undefined, { numeric: true });
}

export function cellText(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return JSON.stringify(v);
}

function BlockView(props: { block: LoadedBlock; index: number; more: More; busy: boolean }) {
  const { block, index } = props;
  const [sort, setSort] = useState<{ col: string; dir: 1 | -1 } | null>(null);
  const cols = columnsOf(block.rows);
  const rows = sort ? [...block.rows].sort((a, b) => sort.dir * compareCells(a[sort.col], b[sort.col])) : block.rows;
  const handle = handleOf(block.more);
  const toggle = (col: string) =>
    setSort((s) => (s?.col === col ? (s.dir === 1 ? { col, dir: -1 } : null) : { col, dir: 1 }));
  const captionId = `block-${index}`;
  return (
    <section class="block" data-testid="result-block">
      <h3 id={captionId}>
        <code>{block.entity}</code>: {block.count}
        {block.total !== undefined ? ` of ${block.total}` : ''} rows
        {block.pages > 1 ? ` loaded · ${block.pages} pages` : ''}
      </h3>
      {block.done && <p data-testid="block-done">{block.done}</p>}
      {cols.length > 0 && (
        <div class="table-scroll">
          <table class="rows" data-testid="results-table" aria-labelledby={captionId}>
            <thead>
              <tr>
                {cols.map((c) => (
                  <th
                    key={c}
                    scope="col"
                    aria-sort={sort?.col === c ? (sort.dir === 1 ? 'ascending' : 'descending') : 'none'}
                  >
                    <button type="button" class="sort" data-testid={`sort-${c}`} onClick={() => toggle(c)}>
                      {c}
                      <span aria-hidden="true">{sort?.col === c ? (sort.dir === 1 ? ' ▲' : ' ▼') : ''}</span>
                    </button>
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.map((r, i) => (
                <tr key={i}>
                  {cols.map((c) => (
                    <td key={c}>{cellText(r[c])}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {block.rows.length === 0 && !block.done && <p class="muted">(no rows)</p>}
      {handle && (
        <button type="button" data-testid="more-button" disabled={props.busy} onClick={() => props.more(index, handle)}>
          More: <code>page({handle})</code>
        </button>
      )}
    </section>
  );
}
