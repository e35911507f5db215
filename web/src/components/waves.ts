/**
 * The waves of a session as saved for a reload (saved.ts): seeds, revision and row counts, and
 * the rows read back from the server's teaching table cut into them again. Pure.
 */
import type { TeachingRow } from '../lang/teaching.js';

/** One wave of a session's teaching: the rows it added (a delta after the first). */
export interface Wave {
  revision: number;
  seeds: string[];
  rows: TeachingRow[];
  notice?: string;
}

/** One wave as saved: its rows are the next `rows` rows of the session's teaching table. */
export interface SavedWave {
  revision: number;
  seeds: string[];
  rows: number;
  notice?: string;
}

/** The waves as saved: seeds, revision and row counts (the rows come back from the server). */
export const savedWaves = (waves: Wave[]): SavedWave[] =>
  waves.map((w) => ({
    revision: w.revision,
    seeds: w.seeds,
    rows: w.rows.length,
    ...(w.notice ? { notice: w.notice } : {}),
  }));

/**
 * The rows of the teaching table (every wave in order) cut into the saved waves; one wave of all
 * the rows when the counts do not add up (the session learnt more elsewhere).
 */
export function splitWaves(saved: SavedWave[], rows: TeachingRow[], revision: number): Wave[] {
  const total = saved.reduce((n, w) => n + w.rows, 0);
  if (saved.length === 0 || total !== rows.length) return [{ revision, seeds: ['(reopened)'], rows }];
  let at = 0;
  return saved.map((w) => {
    const part = rows.slice(at, (at += w.rows));
    return { revision: w.revision, seeds: w.seeds, rows: part, ...(w.notice ? { notice: w.notice } : {}) };
  });
}
