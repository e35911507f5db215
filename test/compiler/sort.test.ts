/**
 * `sort=` and `order=` against a catalog of every kind of sorting: a list sorting by some fields
 * with a `-field` prefix for descending, a list that does not sort, a list whose own parameter is
 * named `sort`, and a search that sorts. The plan, the review line, the teaching rows, the
 * request the runtime builds, and the errors with their hints.
 */
import t from 'tap';
import { compileProgram, SymbolTable, validatePlanShape, type Compiled } from '../../compiler/index.js';
import { teachabilityCheck } from '../../compiler/teachable.js';
import { waveRows } from '../../compiler/teaching.js';
import { Registry } from '../../pack/index.js';
import { buildRequest, sortQuery } from '../../runtime/request.js';
import { registryEntry } from '../_helpers/fault-vendor.js';

const CATALOG = `
catalog: {entry_id: tasks, version: 1, label: Tasks, description: Tasks., backend: {url: "http://127.0.0.1:9"}}
entities:
  Task:
    description: A task.
    fields:
      id: {type: integer, description: Task id}
      title: {type: string, description: Title}
      due: {type: date, description: Due date}
      priority: {type: integer, description: Priority}
      labels: {type: array, items: string, description: Labels}
  Note:
    description: A note.
    fields:
      id: {type: integer, description: Note id}
      text: {type: string, description: Text}
capabilities:
  listTasks: {kind: query, entity: Task, description: Tasks., params: [title]}
  getTask: {kind: get, entity: Task, description: One task., params: [id]}
  searchTasks: {kind: search, entity: Task, description: Search., params: {q: {type: string, required: true}}}
  listNotes: {kind: query, entity: Note, description: Notes.}
  rankNotes:
    kind: query
    entity: Note
    description: Notes by rank.
    params: {sort: {type: enum, values: [rank, age], description: The vendor's own order}}
mappings:
  listTasks:
    method: GET
    path: /tasks
    sort: {param: sort, desc_prefix: "-", fields: [due, priority]}
  getTask: GET /tasks/{id}
  searchTasks:
    method: GET
    path: /tasks/search
    sort: {param: order_by, order_param: dir, asc: ASC, desc: DESC}
  listNotes: GET /notes
  rankNotes: GET /notes/ranked
`;

const registry = new Registry([registryEntry(CATALOG)]);
const symbols = new SymbolTable();
const wave = symbols.expose(registry, [
  { api: 'tasks', entity: 'Task' },
  { api: 'tasks', entity: 'Note' },
]);
const compile = (p: string): Compiled => compileProgram(p, { registry, symbols });
const stepOf = (p: string) => {
  const c = compile(p);
  if (c.kind !== 'plan') throw new Error(`${p}: ${JSON.stringify(c.diagnostics)}`);
  return { step: c.plan.steps[0]!, c };
};
const firstError = (p: string) => {
  const c = compile(p);
  if (c.kind !== 'error') throw new Error(`${p} compiled`);
  return c.diagnostics[0]!;
};

t.test('the plan records the order; the review line and the commit id say it', async (t) => {
  const { step, c } = stepOf('e1(sort="due", order="desc", limit=5)');
  t.same(step.sort, { field: 'due', order: 'desc' });
  t.same(validatePlanShape(c.kind === 'plan' ? c.plan : {}), [], 'the plan fits its schema');
  t.match(c.kind === 'plan' ? c.review.text : '', /listTasks\(\) limit 5 sort due desc/);
  t.same(stepOf('e1(sort="due")').step.sort, { field: 'due', order: 'asc' }, 'order defaults to asc');
  const ids = ['e1(sort="due")', 'e1(sort="due", order="asc")', 'e1(order="asc", sort="due")'].map((p) => {
    const x = compile(p);
    return x.kind === 'plan' ? x.commit_id : p;
  });
  t.equal(new Set(ids).size, 1, 'the default order and the argument order do not change the commit id');
  const desc = compile('e1(sort="due", order="desc")');
  t.not(desc.kind === 'plan' && desc.commit_id, ids[0], 'another order is another plan');
  t.match(stepOf('e1(q="x", sort="title")').step, {
    capability: 'searchTasks',
    sort: { field: 'title', order: 'asc' },
  });
});

t.test('the request: a prefix for descending, or an order parameter with its own values', async (t) => {
  const list = registry.capability('tasks', 'listTasks')!;
  const search = registry.capability('tasks', 'searchTasks')!;
  const req = buildRequest(
    'http://v',
    list,
    { title: 'x' },
    { query: sortQuery(list, { field: 'due', order: 'desc' }) },
  );
  t.equal(req.url, 'http://v/tasks?title=x&sort=-due');
  t.same(sortQuery(list, { field: 'due', order: 'desc' }), { sort: '-due' });
  t.same(sortQuery(list, { field: 'due', order: 'asc' }), { sort: 'due' });
  t.same(sortQuery(search, { field: 'title', order: 'desc' }), { order_by: 'title', dir: 'DESC' });
  t.same(sortQuery(search, undefined), {}, 'no order asked, no default: nothing sent');
  t.same(sortQuery(registry.capability('tasks', 'listNotes')!, { field: 'id', order: 'asc' }), {}, 'no sort mapping');
});

t.test('the teaching rows say which lists sort, by which fields', async (t) => {
  const rows = waveRows(wave, registry, symbols);
  t.match(rows.find((r) => r.sym === 'e1')!.meaning, /\| sort: due, priority \|/, 'only some fields');
  t.notMatch(rows.find((r) => r.sym === 'e2')!.meaning, /sort/, 'a list that does not sort says nothing');
  t.same(teachabilityCheck(registry.get('tasks')!.cgs), [], 'every capability, and every sorted example, compiles');
});

t.test('a capability parameter named sort takes the value, as for limit', async (t) => {
  const { step } = stepOf('m1(sort="rank")');
  t.same(step.args, { sort: { lit: 'rank' } });
  t.equal(step.sort, undefined);
  const d = firstError('m1(sort="rank", order="desc")');
  t.equal(d.code, 'not_sortable', 'order= is still reserved, and rankNotes does not sort');
});

t.test('errors name the fix', async (t) => {
  const cases: Array<[string, string, RegExp, RegExp]> = [
    [
      'e1(sort="title")',
      'unsortable_field',
      /`listTasks` does not sort by `title`/,
      /listTasks sorts by due, priority/,
    ],
    ['e1(sort="labels")', 'unsortable_field', /does not sort by `labels`/, /sorts by due, priority/],
    ['e1(sort="prio")', 'unsortable_field', /no field `prio`/, /did you mean `priority`\?/],
    ['e1(order="desc")', 'missing_argument', /needs `sort=`/, /e1\(sort="due", order="desc"\)/],
    ['e1(sort="due,priority")', 'unsortable_field', /takes one field/, /one field at a time: e1\(sort="due"\)/],
    ['e1(sort="-due")', 'unsortable_field', /direction goes in `order`/, /e1\(sort="due", order="desc"\)/],
    ['e1(sort="due", order="DESC")', 'enum_value_not_allowed', /"DESC" is not allowed/, /order="desc"/],
    ['e1(sort="due", order=1)', 'wrong_type', /"asc" or "desc"/, /order="asc" or order="desc"/],
    ['e1(sort=["due", "priority"])', 'wrong_type', /one field name/, /one field: sort="<field>"/],
    ['e1(sort="due", sort="priority")', 'duplicate_argument', /given twice/, /keep one/],
    ['e2(sort="id")', 'not_sortable', /`listNotes` \(tasks:Note\) does not sort/, /no list of tasks:Note sorts/],
    ['e1(id=7, sort="due")', 'not_sortable', /applies to lists; `getTask` returns one row/, /e1\(sort="due"\)/],
    ['e1(sort_by="due")', 'unknown_argument', /takes no argument `sort_by`/, /write e1\(sort="due"\) instead/],
  ];
  for (const [program, code, message, hint] of cases) {
    const d = firstError(program);
    t.equal(d.code, code, `${program}: ${code}`);
    t.match(d.message, message, `${program}: message`);
    t.match(d.hint ?? '', hint, `${program}: hint`);
    t.ok(d.span, `${program}: has a position`);
  }
});

t.test('a list that sorts but whose parameter is named sort cannot be taught', async (t) => {
  const text = CATALOG.replace(
    '  rankNotes: GET /notes/ranked',
    '  rankNotes: {method: GET, path: /notes/ranked, sort: {param: _sort, order_param: _order}}',
  );
  const entry = registryEntry(text);
  const problems = teachabilityCheck(entry.cgs);
  t.match(problems, [{ at: '/capabilities/4/http/sort', error: { code: 'not_teachable', hint: /rename it/ } }]);
});
