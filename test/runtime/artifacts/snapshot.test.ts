import t from 'tap';
import { createHash } from 'node:crypto';
import { svcError } from '../../../common/errors.js';
import { planCommitId, type Plan } from '../../../compiler/plan.js';
import type { RunResult } from '../../../runtime/execute.js';
import type { PageState } from '../../../runtime/fetch-rows.js';
import {
  ARTIFACT_ID_PATTERN,
  artifactId,
  isArtifactId,
  snapshotJson,
  snapshotOf,
  type RunSnapshot,
} from '../../../runtime/artifacts/snapshot.js';

const HASH = 'c'.repeat(64);
const STARTED = new Date(Date.UTC(2025, 4, 6, 7, 8, 9, 10));

const plan: Plan = {
  version: 1,
  steps: [
    {
      id: 'n1',
      op: 'query',
      api: 'brewery',
      cgs_hash: HASH,
      entity: 'Brewery',
      capability: 'listBreweries',
      args: { city: { lit: 'Berlin' } },
      depends_on: [],
      effect: 'read',
      limit: 2,
    },
    {
      id: 'n2',
      op: 'query',
      api: 'brewery',
      cgs_hash: HASH,
      entity: 'Beer',
      capability: 'listBreweryBeers',
      args: { breweryId: { ref: { step: 'n1', field: 'id' } } },
      projection: ['name'],
      depends_on: ['n1'],
      effect: 'read',
      via: { relation: 'beers', from: 'n1' },
      fanout: { from: 'n1', max: 50 },
    },
    {
      id: 'n3',
      op: 'get',
      api: 'helpdesk',
      cgs_hash: HASH,
      entity: 'Ticket',
      capability: 'getTicket',
      args: { id: { lit: 't-1' } },
      depends_on: [],
      effect: 'read',
    },
  ],
  bind: { b: 'n1' },
  return: ['n2', 'n3'],
  name: 'plan-7',
};

/** Page states as the runtime builds them: the vendor cursor and the call values inside. */
const cursorPage: PageState = {
  api: 'brewery',
  cgs_hash: HASH,
  capability: 'listBreweries',
  values: { city: 'Berlin', api_key: 'SEKRET-VALUE' },
  cursor: { cursor: 'VENDOR-CURSOR-abc123' },
  size: 2,
  fetched: 2,
  total: 9,
};
const linkPage: PageState = {
  ...cursorPage,
  capability: 'listBreweryBeers',
  projection: ['name'],
  cursor: { url: 'https://vendor.example/beers?_page=2&access_token=SEKRET-VALUE' },
};

function run(): RunResult {
  return {
    status: 'failed',
    steps: {
      n1: {
        id: 'n1',
        status: 'done',
        rows: [
          { id: 'b-1', name: 'Alpha', city: 'Berlin' },
          { id: 'b-2', name: 'Beta', city: 'Berlin' },
        ],
        total: 9,
        page: cursorPage,
        calls: 1,
        pages: 1,
        ms: 20,
      },
      n2: {
        id: 'n2',
        status: 'done',
        rows: [
          { id: 'x-1', name: 'IPA', abv: 6.5 },
          { id: 'x-2', name: 'Stout', abv: 8 },
        ],
        page: linkPage,
        calls: 2,
        pages: 2,
        ms: 31,
      },
      n3: {
        id: 'n3',
        status: 'failed',
        rows: [],
        error: svcError('vendor_error', 'helpdesk answered 404 to getTicket (GET /tickets/{id})', {
          hint: 'no such row: check the `id` value',
          cause: '404',
          path: '/steps/n3',
        }),
        calls: 1,
        pages: 0,
        ms: 5,
      },
    },
    returns: [
      { step: 'n2', entity: 'brewery:Beer', rows: [{ name: 'IPA' }, { name: 'Stout' }], page: linkPage },
      { step: 'n3', entity: 'helpdesk:Ticket', rows: [] },
    ],
    errors: [
      {
        ...svcError('vendor_error', 'helpdesk answered 404 to getTicket (GET /tickets/{id})', {
          hint: 'no such row: check the `id` value',
          cause: '404',
        }),
        path: '/steps/n3',
      },
    ],
    elapsed_ms: 57,
  };
}

function snap(): RunSnapshot {
  return snapshotOf(plan, planCommitId(plan), run(), {
    program: 'b = e1(city="Berlin", limit=2)\nb.beers[name]\ne3("t-1")',
    startedAt: STARTED,
    session: { prompt_hash: 'ph', session: 'sess' },
  });
}

/** Every object key anywhere in `v`. */
function keysOf(v: unknown, out: string[] = []): string[] {
  if (Array.isArray(v)) for (const x of v) keysOf(x, out);
  else if (v !== null && typeof v === 'object')
    for (const [k, x] of Object.entries(v)) {
      out.push(k);
      keysOf(x, out);
    }
  return out;
}

t.test('snapshotOf records the run step by step', async (t) => {
  const s = snap();
  t.same(s, {
    format: 1,
    plan_commit_id: planCommitId(plan),
    program: 'b = e1(city="Berlin", limit=2)\nb.beers[name]\ne3("t-1")',
    status: 'failed',
    steps: [
      {
        id: 'n1',
        status: 'done',
        api: 'brewery',
        entity: 'Brewery',
        capability: 'listBreweries',
        rows: [
          { id: 'b-1', name: 'Alpha', city: 'Berlin' },
          { id: 'b-2', name: 'Beta', city: 'Berlin' },
        ],
        total: 9,
        calls: 1,
        pages: 1,
        ms: 20,
      },
      {
        id: 'n2',
        status: 'done',
        api: 'brewery',
        entity: 'Beer',
        capability: 'listBreweryBeers',
        rows: [{ name: 'IPA' }, { name: 'Stout' }],
        calls: 2,
        pages: 2,
        ms: 31,
      },
      {
        id: 'n3',
        status: 'failed',
        api: 'helpdesk',
        entity: 'Ticket',
        capability: 'getTicket',
        rows: [],
        error: {
          code: 'vendor_error',
          message: 'helpdesk answered 404 to getTicket (GET /tickets/{id})',
          hint: 'no such row: check the `id` value',
        },
        calls: 1,
        pages: 0,
        ms: 5,
      },
    ],
    returns: ['n2', 'n3'],
    started_at: '2025-05-06T07:08:09.010Z',
    elapsed_ms: 57,
    session: { prompt_hash: 'ph', session: 'sess' },
  });
  t.strictSame(JSON.parse(JSON.stringify(s)), s, 'plain JSON: no undefined members, no class instances');
  t.notOk('errors' in s, 'step errors are not repeated at run level');
});

t.test('snapshotOf stores no page state, cursor, call values or secret-like field', async (t) => {
  const s = snap();
  const text = JSON.stringify(s);
  t.notMatch(text, /VENDOR-CURSOR|SEKRET|vendor\.example|access_token/);
  const bad = keysOf(s).filter((k) =>
    /^page$|cursor|secret|token|passw|auth|api_?key|credential|values|cgs_hash/i.test(k),
  );
  t.same(bad, []);
  for (const step of s.steps)
    t.same(
      Object.keys(step).filter(
        (k) =>
          !['id', 'status', 'api', 'entity', 'capability', 'rows', 'total', 'error', 'calls', 'pages', 'ms'].includes(
            k,
          ),
      ),
      [],
      `step ${step.id} has only documented fields`,
    );
  t.same(Object.keys(s).sort(), [
    'elapsed_ms',
    'format',
    'plan_commit_id',
    'program',
    'returns',
    'session',
    'started_at',
    'status',
    'steps',
  ]);
});

t.test('snapshotOf leaves out optional parts that are absent', async (t) => {
  const s = snapshotOf(plan, planCommitId(plan), run(), { startedAt: STARTED });
  t.notOk('program' in s);
  t.notOk('session' in s);
  t.match(artifactId(s), ARTIFACT_ID_PATTERN);
});

t.test('a refused run keeps its reason at run level', async (t) => {
  const refused: RunResult = {
    status: 'failed',
    steps: {},
    returns: [],
    errors: [
      svcError('write_not_accepted', 'the plan changes vendor data (createBeer) and was not accepted', {
        hint: 'dry-run it first (mode=plan) and run it with its pcN, or pass force',
      }),
    ],
    elapsed_ms: 0,
  };
  const s = snapshotOf(plan, planCommitId(plan), refused, { startedAt: STARTED });
  t.same(s.steps, []);
  t.same(s.errors, [
    {
      code: 'write_not_accepted',
      message: 'the plan changes vendor data (createBeer) and was not accepted',
      hint: 'dry-run it first (mode=plan) and run it with its pcN, or pass force',
    },
  ]);
});

t.test('artifactId is pr + sha256 of the snapshot JSON, in the order snapshotOf writes it', async (t) => {
  const s = snap();
  const id = artifactId(s);
  t.match(id, ARTIFACT_ID_PATTERN);
  t.ok(isArtifactId(id));
  t.equal(id, 'pr' + createHash('sha256').update(snapshotJson(s)).digest('hex'));
  t.equal(snapshotJson(s), JSON.stringify(s), 'the stored form is the JSON of the snapshot as built');
  t.equal(artifactId(snap()), id, 'deterministic: the same run gives the same id');
  t.same(JSON.parse(snapshotJson(s)), s, 'and the same content');
  for (const bad of ['pr../../etc/passwd', id.toUpperCase(), id.slice(0, -1), `${id}0`, 42, undefined])
    t.notOk(isArtifactId(bad), String(bad));
});

t.test('the id changes when any row value changes', async (t) => {
  const base = snap();
  const id = artifactId(base);
  const seen = new Set([id]);
  let cases = 0;
  for (const [si, step] of base.steps.entries()) {
    for (const [ri, row] of step.rows.entries()) {
      for (const field of Object.keys(row)) {
        const changed = structuredClone(base);
        const r = changed.steps[si]!.rows[ri]!;
        const v = r[field];
        r[field] = typeof v === 'number' ? v + 0.5 : `${String(v)}!`;
        const other = artifactId(changed);
        t.not(other, id, `step ${step.id} row ${ri} field ${field}`);
        seen.add(other);
        cases++;
      }
      const dropped = structuredClone(base);
      dropped.steps[si]!.rows.splice(ri, 1);
      t.not(artifactId(dropped), id, `step ${step.id} without row ${ri}`);
    }
    const added = structuredClone(base);
    added.steps[si]!.rows.push({});
    t.not(artifactId(added), id, `step ${step.id} with an empty row more`);
  }
  t.equal(seen.size, cases + 1, 'every change gives its own id');
  const swapped = structuredClone(base);
  swapped.steps[0]!.rows.reverse();
  t.not(artifactId(swapped), id, 'row order counts');
  const typed = structuredClone(base);
  typed.steps[1]!.rows[0]!.name = 1;
  const typed2 = structuredClone(base);
  typed2.steps[1]!.rows[0]!.name = '1';
  t.not(artifactId(typed), artifactId(typed2), 'the type of a value counts');
});
