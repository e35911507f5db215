/**
 * The tasks of the `peers` benchmark: for each, the exact call sequence an agent makes on svc and
 * on the OpenAPI proxy (the same sequence in both proxy modes, through `ProxyWay.request`), the
 * answer it reduces the results to, and the check of that answer against the vendor's data.
 */
import { type T2Answer, type T3Row, TASK, differ, pick, sortedNames, type truth } from './peers-truth.js';
import { type ProxyWay, SvcWay } from './peers-ways.js';

type Row = Record<string, unknown>;

export type WayName = 'svc' | 'proxy default' | 'proxy dynamic';

export interface CheckContext {
  vendorUrl: string;
  want: ReturnType<typeof truth>;
}

export interface Task {
  id: string;
  title: string;
  /** Set on an informational task: not in the totals, and svc does not run it (the text says why). */
  extra?: string;
  svc?: (s: SvcWay) => Promise<unknown>;
  proxy: (p: ProxyWay) => Promise<unknown>;
  /** `undefined` when the answer is right, else what is wrong. */
  check: (got: unknown, way: WayName, ctx: CheckContext) => Promise<string | undefined>;
}

const rowsOf = (r: Parameters<typeof SvcWay.blocks>[0], i = 0): Row[] => SvcWay.blocks(r)[i]!.rows;
const newBeerName = (way: WayName) => `${TASK.newBeer.name} (${way})`;

/** T3 from the tickets (newest first) with their customer and comments embedded by the vendor. */
const t3FromEmbedded = (tickets: Row[]): T3Row[] =>
  tickets.map((t) => ({
    id: String(t.id),
    customer: String((t.customer as Row).name),
    comments: (t.comments as Row[]).length,
  }));

export const TASKS: Task[] = [
  {
    id: 'T1',
    title: `filtered list: the first 25 available beers (${TASK.t1Fields.join(', ')})`,
    svc: async (s) => rowsOf(await s.program(`${s.sym('brewery:Beer')}(available=true)[${TASK.t1Fields.join(',')}]`)),
    proxy: async (p) => (await p.list('/beers', { available: true, _limit: 25 })).map((r) => pick(r, TASK.t1Fields)),
    check: async (got, _w, c) => differ(got, c.want.t1),
  },
  {
    id: 'T2',
    title: `one row and its related rows: brewery ${TASK.brewery} (name, city) and its beers' names`,
    // One statement: the brewery's fields and its beers nested in the row.
    svc: async (s) => {
      const b = s.sym('brewery:Brewery');
      const row = rowsOf(await s.program(`${b}("${TASK.brewery}")[name,city,beers[name]]`))[0]!;
      return { name: row.name, city: row.city, beers: sortedNames(row.beers as Row[]) } satisfies Row;
    },
    proxy: async (p) => {
      const b = await p.one('breweries', TASK.brewery, { _embed: 'beers' });
      return { name: String(b.name), city: String(b.city), beers: sortedNames(b.beers as Row[]) } satisfies T2Answer;
    },
    check: async (got, _w, c) => differ(got, c.want.t2),
  },
  {
    id: 'T3',
    title: `the ${TASK.newest} newest tickets, each with its customer's name and its number of comments`,
    // One statement: the list sorted by the vendor, each ticket with its customer and comments nested.
    svc: async (s) =>
      t3FromEmbedded(
        rowsOf(
          await s.program(
            `${s.sym('helpdesk:Ticket')}(sort="createdAt", order="desc", limit=${TASK.newest})[id,customer[name],comments[id]]`,
          ),
        ),
      ),
    proxy: async (p) =>
      t3FromEmbedded(
        await p.list('/tickets', {
          _sort: 'createdAt',
          _order: 'desc',
          _limit: TASK.newest,
          _expand: 'customer',
          _embed: 'comments',
        }),
      ),
    check: async (got, _w, c) => differ(got, c.want.t3),
  },
  {
    id: 'T3x',
    title: 'T3 without _expand/_embed: 1 list + one call per distinct customer + one per ticket',
    extra: 'what the proxy costs on a vendor without embedding; not in the totals (svc: see T3)',
    proxy: async (p) => {
      const tickets = await p.list('/tickets', { _sort: 'createdAt', _order: 'desc', _limit: TASK.newest });
      const names = new Map<string, string>();
      const out: T3Row[] = [];
      for (const t of tickets) {
        const cid = String(t.customerId);
        if (!names.has(cid)) names.set(cid, String((await p.one('customers', cid)).name));
        const comments =
          p.mode === 'all'
            ? await p.list('/tickets/{id}/comments', { id: t.id })
            : await p.list('/comments', { ticketId: t.id });
        out.push({ id: String(t.id), customer: names.get(cid)!, comments: comments.length });
      }
      return out;
    },
    check: async (got, _w, c) => differ(got, c.want.t3),
  },
  {
    id: 'T4',
    title: `paging: reviews, 2 pages of ${TASK.pageSize} (${TASK.t4Fields.join(', ')})`,
    svc: async (s) => {
      const first = SvcWay.blocks(await s.program(`${s.sym('brewery:Review')}[${TASK.t4Fields.join(',')}]`))[0]!;
      if (!first.more) throw new Error('the first page of reviews has no `more` handle');
      return [...first.rows, ...rowsOf(await s.run(SvcWay.handle(first.more)))];
    },
    proxy: async (p) => {
      const rows: Row[] = [];
      for (const page of [1, 2]) rows.push(...(await p.list('/reviews', { _page: page, _limit: TASK.pageSize })));
      return rows.map((r) => pick(r, TASK.t4Fields));
    },
    check: async (got, _w, c) => differ(got, c.want.t4),
  },
  {
    id: 'T5',
    title: `reviewed write: create a beer at ${TASK.newBeer.breweryId} (svc: dry-run, then svc_run with its pcN)`,
    svc: async (s) => {
      const { breweryId, style, abv } = TASK.newBeer;
      const dry = await s.program(
        `${s.sym('create brewery:Beer')}(breweryId="${breweryId}", name="${newBeerName('svc')}", style="${style}", abv=${abv})`,
      );
      const pc = (dry.structuredContent as { run_ref?: string }).run_ref;
      if (!pc) throw new Error('the dry-run gave no run_ref');
      return rowsOf(await s.run(pc))[0];
    },
    proxy: async (p) =>
      p.request('POST', '/beers', {
        ...TASK.newBeer,
        name: newBeerName(p.mode === 'all' ? 'proxy default' : 'proxy dynamic'),
        available: true,
      }),
    check: async (got, way, c) => {
      const want = { ...TASK.newBeer, name: newBeerName(way), available: true };
      const d = differ(got, want);
      if (d) return `the answer: ${d}`;
      const res = await fetch(`${c.vendorUrl}/beers/${String((got as Row).id)}`);
      return res.ok ? differ(await res.json(), want) : `the vendor has no beer ${String((got as Row).id)}`;
    },
  },
  {
    id: 'T6',
    title: `search: tickets matching q="${TASK.search}" (${TASK.t6Fields.join(', ')})`,
    svc: async (s) =>
      rowsOf(await s.program(`${s.sym('helpdesk:Ticket')}(q="${TASK.search}")[${TASK.t6Fields.join(',')}]`)),
    proxy: async (p) => (await p.list('/tickets', { q: TASK.search })).map((r) => pick(r, TASK.t6Fields)),
    check: async (got, _w, c) => differ(got, c.want.t6),
  },
];
