/**
 * What each task of the `peers` benchmark must answer, computed from the bundled vendor data
 * (`fixtures/vendor/db.json`, read fresh, not through json-server), and the comparison of a way's
 * answer with it. Every way's answer is reduced to the same shape first, so a way that returns
 * more fields is not penalised and one that returns fewer rows or wrong values fails.
 */
import { demoVendorData } from '../cli/demo-vendor.js';

type Row = Record<string, unknown>;

/** The parameters of the tasks (chosen on the demo data; see docs/benchmarks.md `peers`). */
export const TASK = {
  /** T1: available beers, the first 25 (110 match). */
  t1Fields: ['id', 'name', 'style', 'abv'],
  /** T2: the brewery with the most beers (7). */
  brewery: 'b-3',
  /** T3: newest tickets. */
  newest: 10,
  /** T4: reviews, 2 pages of 25. */
  pageSize: 25,
  t4Fields: ['id', 'beerId', 'rating', 'author'],
  /** T5: the beer each way creates (the name gets the way's name appended; not at T2's brewery). */
  newBeer: { breweryId: 'b-41', name: 'Bench Pale', style: 'Pale Ale', abv: 5.2 },
  /** T6: full-text search over tickets. */
  search: 'webhook',
  t6Fields: ['id', 'subject', 'status'],
} as const;

export interface T2Answer {
  name: string;
  city: string;
  beers: string[];
}
export interface T3Row {
  id: string;
  customer: string;
  comments: number;
}

export const pick = (r: Row, fields: readonly string[]): Row => Object.fromEntries(fields.map((f) => [f, r[f]]));

export function truth(): { t1: Row[]; t2: T2Answer; t3: T3Row[]; t4: Row[]; t6: Row[] } {
  const db = demoVendorData() as Record<string, Row[]>;
  const byId = (coll: string, id: unknown) => db[coll]!.find((r) => r.id === id)!;
  const brewery = byId('breweries', TASK.brewery);
  const newest = [...db.tickets!]
    .sort((a, b) => String(b.createdAt).localeCompare(String(a.createdAt)))
    .slice(0, TASK.newest);
  const q = TASK.search.toLowerCase();
  return {
    t1: db
      .beers!.filter((b) => b.available === true)
      .slice(0, 25)
      .map((r) => pick(r, TASK.t1Fields)),
    t2: {
      name: String(brewery.name),
      city: String(brewery.city),
      beers: sortedNames(db.beers!.filter((b) => b.breweryId === TASK.brewery)),
    },
    t3: newest.map((t) => ({
      id: String(t.id),
      customer: String(byId('customers', t.customerId).name),
      comments: db.comments!.filter((c) => c.ticketId === t.id).length,
    })),
    t4: db.reviews!.slice(0, 2 * TASK.pageSize).map((r) => pick(r, TASK.t4Fields)),
    // json-server's `q`: any string field containing the words, case-insensitive.
    t6: db
      .tickets!.filter((t) => Object.values(t).some((v) => typeof v === 'string' && v.toLowerCase().includes(q)))
      .map((r) => pick(r, TASK.t6Fields)),
  };
}

export const sortedNames = (rows: Row[]): string[] => rows.map((r) => String(r.name)).sort();

/**
 * Compare an answer with the expected one: `undefined` when equal, else a short description of
 * the first difference.
 */
export function differ(got: unknown, want: unknown, path = ''): string | undefined {
  if (Array.isArray(want)) {
    if (!Array.isArray(got)) return `${path || 'answer'}: not a list`;
    if (got.length !== want.length) return `${path || 'answer'}: ${got.length} rows, want ${want.length}`;
    for (let i = 0; i < want.length; i++) {
      const d = differ(got[i], want[i], `${path}[${i}]`);
      if (d) return d;
    }
    return undefined;
  }
  if (want !== null && typeof want === 'object') {
    if (got === null || typeof got !== 'object') return `${path || 'answer'}: not an object`;
    for (const [k, v] of Object.entries(want)) {
      const d = differ((got as Row)[k], v, path ? `${path}.${k}` : k);
      if (d) return d;
    }
    return undefined;
  }
  return got === want ? undefined : `${path || 'answer'}: ${JSON.stringify(got)}, want ${JSON.stringify(want)}`;
}
