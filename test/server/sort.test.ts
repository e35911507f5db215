/**
 * Sorting over the HTTP surface, against the real demo vendor: `sort=`/`order=` in a program, the
 * page handle continuing in the same order, the teaching row and rules that teach it, and the
 * compile errors of a wrong sort as 400s with their codes and hints.
 */
import t from 'tap';
import { codeOf, openSession, runProgram, startStack } from '../_helpers/server.js';

const stack = await startStack(t);
const BASE = stack.url;

type Row = Record<string, unknown>;

/** The vendor's tickets, newest first, as json-server sorts them (ties keep the stored order). */
async function newestTickets(): Promise<Row[]> {
  const res = await fetch(`${stack.vendorUrl}/tickets?_sort=createdAt&_order=desc`);
  return (await res.json()) as Row[];
}

function handleOf(more: unknown): string {
  const m = /^page\((pg\d+)\)\[\.\.\]$/.exec(String(more));
  if (!m) throw new Error(`not a more hint: ${String(more)}`);
  return m[1]!;
}

t.test('e1(sort="createdAt", order="desc", limit=10): the 10 newest tickets, then page 2 in order', async (t) => {
  const { path, answer } = await openSession(BASE, { entry_id: 'helpdesk', seeds: ['Ticket'] });
  t.match(answer.body.wave, /helpdesk:Ticket: .* \| list 20\/page \| sort: any field \|/, 'the row says it sorts');
  t.match(answer.body.rules ?? answer.text, /sort="f", order="desc"/, 'the rules teach the arguments');
  const newest = await newestTickets();
  const a = await runProgram(BASE, path, 'e1(sort="createdAt", order="desc", limit=10)[id,createdAt]');
  t.equal(a.status, 200, a.text);
  t.same(
    a.body.rows,
    newest.slice(0, 10).map((r) => ({ id: r.id, createdAt: r.createdAt })),
    'the 10 newest tickets, newest first',
  );
  const p2 = await runProgram(BASE, path, `page(${handleOf(a.body.more)})[id,createdAt]`);
  t.equal(p2.status, 200, p2.text);
  t.same(
    p2.body.rows,
    newest.slice(10, 20).map((r) => ({ id: r.id, createdAt: r.createdAt })),
    'page 2 continues in sorted order',
  );
  const p3 = await runProgram(BASE, path, `page(${handleOf(p2.body.more)})[id]`);
  t.same(
    p3.body.rows,
    newest.slice(20, 30).map((r) => ({ id: r.id })),
    'and page 3',
  );
});

t.test('a wrong sort is a 400 with its code and a hint that names the fix', async (t) => {
  const { path } = await openSession(BASE, { entry_id: 'helpdesk', seeds: ['Ticket'] });
  const cases: Array<[string, string, RegExp]> = [
    ['e1(order="desc")', 'missing_argument', /e1\(sort="createdAt", order="desc"\)/],
    ['e1(sort="-createdAt")', 'unsortable_field', /e1\(sort="createdAt", order="desc"\)/],
    ['e1(sort="created")', 'unsortable_field', /did you mean `createdAt`\?/],
    ['e1(sort="createdAt", order="newest")', 'enum_value_not_allowed', /order="desc"/],
    ['e1("t-1").customer(sort="name")', 'not_sortable', /returns one row/],
  ];
  for (const [program, code, hint] of cases) {
    const a = await runProgram(BASE, path, program);
    t.equal(a.status, 400, `${program}: 400`);
    t.equal(codeOf(a), code, `${program}: ${code}`);
    t.match(`${a.body.errors?.[0]?.message} ${a.body.errors?.[0]?.hint}`, hint, `${program}: the fix`);
  }
});
