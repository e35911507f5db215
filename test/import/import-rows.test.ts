/**
 * How the importer ties operations to rows, on a small GitHub-shaped document: the id field a
 * path parameter names once the entity's words are dropped (`issue_number` -> Issue.number), the
 * get by that field leading the entity, lists and writes below an issue acting on that issue's
 * row, link fields to what capabilities reach left out, a response that is one of several lists
 * read as the richest, deprecated operations, parameters and fields skipped, a GET of one issue
 * below an issue (`/issues/{n}/parent`) a singleton get. Programs chain from a row with the row's `number`.
 */
import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileProgram } from '../../compiler/index.js';
import { SymbolTable } from '../../compiler/symbols.js';
import { Registry, registryEntry } from '../../pack/index.js';
import { importAndPack } from '../_helpers/import.js';

const json = (schema: object) => ({ '200': { description: 'ok', content: { 'application/json': { schema } } } });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const list = (name: string) => json({ type: 'array', items: ref(name) });
const path = (name: string) => ({ name, in: 'path', required: true, schema: { type: 'string' } });
const num = (name: string) => ({ name, in: 'path', required: true, schema: { type: 'integer' } });
const REPO = [path('owner'), path('repo')];
const ISSUE = [...REPO, num('issue_number')];

const DOC = {
  openapi: '3.0.3',
  info: { title: 'Hub', version: '1' },
  servers: [{ url: 'https://hub.example' }],
  paths: {
    '/repos/{owner}/{repo}/issues': {
      get: { operationId: 'listIssues', parameters: REPO, responses: list('issue') },
      post: { operationId: 'createIssue', parameters: REPO, responses: json(ref('issue')) },
    },
    '/repos/{owner}/{repo}/issues/{issue_number}': {
      get: { operationId: 'getIssue', parameters: ISSUE, responses: json(ref('issue')) },
    },
    '/repos/{owner}/{repo}/issues/{issue_number}/sub_issues': {
      get: { operationId: 'listSubIssues', parameters: ISSUE, responses: list('issue') },
      post: {
        operationId: 'addSubIssue',
        parameters: ISSUE,
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['sub_issue_id'],
                properties: { sub_issue_id: { type: 'integer' }, legacy: { type: 'boolean', deprecated: true } },
              },
            },
          },
        },
        responses: json(ref('issue')),
      },
    },
    '/repos/{owner}/{repo}/issues/{issue_number}/comments': {
      get: { operationId: 'listComments', parameters: ISSUE, responses: list('comment') },
    },
    '/repos/{owner}/{repo}/issues/{issue_number}/parent': {
      get: { operationId: 'getParent', parameters: ISSUE, responses: json(ref('issue')) },
    },
    '/repos/{owner}/{repo}/stargazers': {
      get: {
        operationId: 'listStargazers',
        parameters: [...REPO, { name: 'old', in: 'query', deprecated: true, schema: { type: 'string' } }],
        responses: json({
          anyOf: [
            { type: 'array', items: ref('stargazer') },
            { type: 'array', items: ref('user') },
          ],
        }),
      },
    },
    '/repos/{owner}/{repo}/issues-legacy': {
      get: { operationId: 'listIssuesLegacy', deprecated: true, parameters: REPO, responses: list('issue') },
    },
  },
  components: {
    schemas: {
      issue: {
        type: 'object',
        properties: {
          id: { type: 'integer' },
          number: { type: 'integer' },
          title: { type: 'string' },
          html_url: { type: 'string' },
          comments_url: { type: 'string' },
          old_field: { type: 'string', deprecated: true },
        },
      },
      comment: { type: 'object', properties: { id: { type: 'integer' }, body: { type: 'string' } } },
      user: {
        type: 'object',
        properties: { id: { type: 'integer' }, login: { type: 'string' }, name: { type: 'string' } },
      },
      stargazer: { type: 'object', properties: { starred_at: { type: 'string' }, user: ref('user') } },
    },
  },
};

const dir = mkdtempSync(join(tmpdir(), 'svc-import-rows-'));
writeFileSync(join(dir, 'openapi.json'), JSON.stringify(DOC));
const { result, cgs, cgs_hash } = await importAndPack(dir, { entryId: 'hub' });
const cap = (name: string) => cgs.capabilities.find((c) => c.name === name);
const issue = cgs.entities.find((e) => e.name === 'Issue')!;
const report = result.files['import-report.md']!;

t.test('issue_number names Issue.number: the id field, the id parameter', async (t) => {
  t.equal(issue.id_field, 'number');
  t.match(cap('getIssue'), {
    kind: 'get',
    id_param: 'number',
    http: { path: '/repos/{owner}/{repo}/issues/{number}' },
  });
});

t.test('a list and a create below an issue act on that issue row', async (t) => {
  t.match(cap('listSubIssues'), { kind: 'query', id_param: 'number' });
  t.match(cap('addSubIssue'), { kind: 'create', id_param: 'number' });
  t.notOk(
    cap('addSubIssue')!.params.some((p) => p.name === 'legacy'),
    'a deprecated body property is left out',
  );
  t.match(cap('listComments'), { kind: 'query', entity: 'Comment' });
  t.equal(cap('listComments')!.id_param, undefined, 'comments are rows of another entity');
});

t.test('link fields to rows capabilities reach, and deprecated fields, are left out', async (t) => {
  const fields = issue.fields.map((f) => f.name);
  t.same(fields, ['id', 'number', 'title', 'html_url']);
  t.match(
    report,
    /entity Issue: link fields left out \(their rows are reached by capabilities below its get\): comments_url/,
  );
  t.match(report, /entity Issue: deprecated fields left out: old_field/);
});

t.test('one of several lists: the richest; deprecated operations skipped; a singleton GET kept', async (t) => {
  t.match(cap('listStargazers'), { kind: 'query', entity: 'User' });
  t.notOk(
    cap('listStargazers')!.params.some((p) => p.name === 'old'),
    'a deprecated parameter is left out',
  );
  t.match(report, /listStargazers\): the response is one of several lists; rows are read as the richest \(User\)/);
  t.equal(cap('listIssuesLegacy'), undefined);
  t.ok(result.log.skipped.some((s) => s.what.includes('listIssuesLegacy') && s.why === 'deprecated in the document'));
  t.match(cap('getParent'), { kind: 'get', singleton: true, entity: 'Issue', returns: 'row' });
  t.notOk(cap('getParent')!.id_param, 'a singleton has no id parameter');
  t.same(
    cap('getParent')!
      .params.filter((p) => p.required)
      .map((p) => p.name)
      .sort(),
    ['issue_number', 'owner', 'repo'],
  );
  t.notOk(result.log.skipped.some((s) => s.what.includes('getParent')));
});

t.test('a program chains from listed issues with their number', async (t) => {
  const registry = new Registry([registryEntry(cgs, cgs_hash, 'hub.cgs.json')]);
  const symbols = new SymbolTable();
  symbols.expose(registry, [{ api: 'hub', entity: 'Issue' }]);
  const sym = symbols.capabilitySymbol('hub', 'listSubIssues')!.sym;
  const c = compileProgram(`x = e1(owner="o", repo="r")\nx.${sym}`, { registry, symbols });
  if (c.kind !== 'plan') throw new Error(JSON.stringify(c.diagnostics));
  t.same(c.plan.steps[1]!.args.number, { ref: { step: c.plan.steps[0]!.id, field: 'number' } });
});
