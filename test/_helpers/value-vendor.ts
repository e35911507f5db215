/**
 * Test helper: a vendor whose reads answer values, not rows, as fixtures/openapi/value-answers.yaml
 * describes: a readme as text/plain under a path parameter, a status as XML, a loan report as CSV
 * (its `year` query in the first line), a JSON map of counts, a JSON list of strings, a health
 * check with no body (204), a cover image and a thumbnail declared `*\/*` (both PNG bytes), and
 * books as ordinary JSON rows. A real node:http server on 127.0.0.1 (the fault vendor's),
 * recording every request.
 *
 * @example
 * const v = await startValueVendor();
 * t.teardown(() => v.close());
 */
import { startFaultVendor, type FaultVendor } from './fault-vendor.js';

export const VALUE_DATA = {
  books: [
    { bookId: 'b-1', title: 'Dune', genre: 'fiction' },
    { bookId: 'b-2', title: 'Odes', genre: 'poetry' },
  ],
  readme: (id: string) => `# ${id}\n\nA book on the shelf.\nLine three: ünïcode, tabs\tand "quotes".\n`,
  status: '<?xml version="1.0"?>\n<status><up>true</up><books>2</books></status>\n',
  report: (year: string) => `month,loans\n${year}-01,12\n${year}-02,7\n`,
  counts: { fiction: 1, poetry: 1 },
  tags: ['classic', 'space', 'verse'],
  /** A PNG signature and 12,337 bytes more: 12,345 in all. */
  cover: Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(12_337, 7)]),
};

/** Start the vendor on 127.0.0.1 and a free port. */
export function startValueVendor(): Promise<FaultVendor> {
  const d = VALUE_DATA;
  return startFaultVendor({
    'GET /books': { json: d.books },
    'GET /books/:id': (req) => {
      const book = d.books.find((b) => req.path.endsWith(`/${b.bookId}`));
      return book ? { json: book } : { status: 404, json: { message: 'no such book' } };
    },
    'GET /books/:id/readme': (req) => ({
      text: d.readme(req.path.split('/')[2]!),
      contentType: 'text/plain; charset=utf-8',
    }),
    'GET /status': { text: d.status, contentType: 'application/xml' },
    'GET /reports/loans': (req) => ({ text: d.report(req.query.get('year') ?? '2025'), contentType: 'text/csv' }),
    'GET /stats/genres': { json: d.counts },
    'GET /tags': { json: d.tags },
    'GET /health': { status: 204, text: '' },
    'GET /books/:id/cover': { text: d.cover, contentType: 'image/png' },
    // Declared `*/*` (a value read), answered with a file.
    'GET /books/:id/thumbnail': { text: d.cover, contentType: 'image/png' },
  });
}
