/**
 * Rows loaded page by page: More sends `page(pgN)` for one block of an answer, and the rows of the
 * next page are appended to that block (its count is then the rows loaded, its `more` the next
 * handle). Pure.
 */
import { blocksOf, type Block, type ExecAnswer } from '../api/types.js';

/** A block of an answer with the pages loaded into it so far. */
export interface LoadedBlock extends Block {
  pages: number;
}

export const loadedBlocks = (a: ExecAnswer): LoadedBlock[] => blocksOf(a).map((b) => ({ ...b, pages: 1 }));

/** The handle of a block's `more` hint (`page(pg3)[..]` -> `pg3`). */
export const handleOf = (more: string | undefined): string | undefined =>
  more ? /page\(([^)]+)\)/.exec(more)?.[1] : undefined;

/**
 * The blocks with the answer to `page(handle)` appended to block `index`; undefined when the
 * answer has no rows block, or the block no longer waits for that handle (an answer that came
 * twice, or for a block shown no more).
 */
export function appendPage(
  blocks: LoadedBlock[],
  index: number,
  handle: string,
  page: ExecAnswer,
): LoadedBlock[] | undefined {
  const block = blocks[index];
  const next = blocksOf(page)[0];
  if (!block || !next || handleOf(block.more) !== handle) return undefined;
  const { more: _more, ...rest } = block;
  const merged: LoadedBlock = {
    ...rest,
    rows: [...block.rows, ...next.rows],
    count: block.count + next.count,
    pages: block.pages + 1,
    ...(next.total !== undefined ? { total: next.total } : {}),
    ...(next.more !== undefined ? { more: next.more } : {}),
  };
  return blocks.map((b, i) => (i === index ? merged : b));
}
