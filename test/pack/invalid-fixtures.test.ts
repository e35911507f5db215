/**
 * Every fixtures/invalid case: compileSource reports exactly its expected.json (code, file, line,
 * col, in order), every diagnostic teaches (message + hint), and the CLI prints the same list.
 * Together the cases cover every authoring-time code.
 */
import t from 'tap';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CODES, SvcFailure, type ErrorCode, type SvcError } from '../../common/errors.js';
import { compileSource, readSourceDir, type SourceText } from '../../pack/index.js';
import { svcArgv } from '../_helpers/cli.js';

const ROOT = join(import.meta.dirname, '..', '..');
const INVALID = join(ROOT, 'fixtures', 'invalid');

interface Expected {
  code: ErrorCode;
  file: string;
  line: number;
  col: number;
}

/** The codes `compileSource` / `readSourceDir` can emit at authoring time. */
const AUTHORING_CODES: ErrorCode[] = [
  'yaml_syntax',
  'schema_violation',
  'missing_catalog_metadata',
  'duplicate_name',
  'unsafe_entry_id',
  'bad_version',
  'unknown_entity',
  'unknown_field',
  'unknown_capability',
  'unknown_parameter',
  'missing_id_field',
  'missing_mapping',
  'orphan_mapping',
  'path_parameter_undeclared',
  'path_parameter_optional',
  'bad_type',
  'bad_enum',
  'bad_default',
  'bad_relation',
  'bad_capability',
  'bad_mapping',
  'unmapped_parameter',
  'bad_auth',
  'bad_backend',
  'source_read_failed',
];

const cases = readdirSync(INVALID, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort();

/** The YAML files of a case, named by base name (as expected.json names them). */
function caseTexts(name: string): SourceText[] {
  const dir = join(INVALID, name);
  return readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .map((f) => ({ file: f, text: readFileSync(join(dir, f), 'utf8') }));
}

function expectedOf(name: string): Expected[] {
  return JSON.parse(readFileSync(join(INVALID, name, 'expected.json'), 'utf8')) as Expected[];
}

/** The errors of the SvcFailure a promise rejects with (fails the test when it resolves). */
async function failureOf(p: Promise<unknown>): Promise<SvcError[]> {
  try {
    await p;
  } catch (e) {
    if (e instanceof SvcFailure) return e.errors;
    throw e;
  }
  throw new Error('expected a SvcFailure');
}

/** The child's environment: ours without tap's process-info hook (it slows every spawn down). */
function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', ...extra };
  delete env.NODE_OPTIONS;
  return env;
}

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, svcArgv(args), { cwd: ROOT, env: childEnv() }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

t.test('there are at least 8 cases, each with YAML files and expected.json', async (t) => {
  t.ok(cases.length >= 8, `${cases.length} cases`);
  for (const c of cases) {
    t.ok(caseTexts(c).length > 0, `${c} has YAML files`);
    t.ok(expectedOf(c).length > 0, `${c} expects at least one diagnostic`);
  }
});

for (const c of cases) {
  t.test(`fixtures/invalid/${c}`, async (t) => {
    const expected = expectedOf(c);
    const texts = caseTexts(c);
    const r = compileSource(texts);
    t.equal(r.cgs, undefined, 'no CGS when there are diagnostics');
    t.equal(r.cgs_hash, undefined);
    const got = r.diagnostics.map((d) => ({ code: d.code, file: d.span?.file, line: d.span?.line, col: d.span?.col }));
    t.same(got, expected, 'exactly the expected diagnostics, in the reported order');
    for (const d of r.diagnostics) {
      t.ok(d.message.trim().length > 0, `${d.code} has a message`);
      t.type(d.hint, 'string', `${d.code} at ${d.span?.line}:${d.span?.col} has a hint`);
      t.ok((d.hint ?? '').trim().length > 0 && d.hint !== 'undefined', `${d.code} hint is not empty`);
      t.notMatch(d.message, /undefined|\[object Object\]/, 'no placeholder leaks into the message');
      const lines = texts.find((x) => x.file === d.span?.file)!.text.split('\n');
      t.ok(
        d.span!.line <= lines.length && d.span!.col <= lines[d.span!.line - 1]!.length + 1,
        `${d.code} points inside the file`,
      );
    }
    const reversed = compileSource([...texts].reverse());
    t.same(reversed.diagnostics, r.diagnostics, 'the same diagnostics whatever the file order');
  });
}

t.test('the many-problems case reports every problem of several files at once', async (t) => {
  const expected = expectedOf('many-problems');
  t.ok(expected.length >= 10, `${expected.length} diagnostics`);
  t.ok(new Set(expected.map((e) => e.file)).size >= 5, 'from at least five files');
  t.ok(new Set(expected.map((e) => e.code)).size >= 10, 'of at least ten different codes');
});

t.test('duplicate_name covers YAML keys, entities, mappings, relations, catalogs and capabilities', async (t) => {
  const messages = ['duplicate-key', 'duplicates', 'many-problems']
    .flatMap((c) => compileSource(caseTexts(c)).diagnostics)
    .filter((d) => d.code === 'duplicate_name')
    .map((d) => d.message);
  t.match(messages, [
    /^key `total` is declared twice in one map \(first on line 12\)$/,
    /relation `orders` of Customer has the name of a field/,
    /entity `Order` is declared twice/,
    /mapping `listOrders` is declared again \(first in more-orders\.yaml\)/,
    /`catalog` is declared again \(first in catalog\.yaml\)/,
    /capability `getOrder` is declared twice/,
  ]);
});

t.test('source_read_failed: an empty directory, a directory without YAML, a missing directory', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-invalid-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const empty = compileSource(await readSourceDir(dir));
  t.match(empty.diagnostics, [{ code: 'source_read_failed', message: /no YAML file/, hint: /catalog\.yaml/ }]);
  t.equal(empty.diagnostics.length, 1);
  await writeFile(join(dir, 'README.txt'), 'not a catalog\n');
  t.same(await readSourceDir(dir), [], 'non-YAML files are not read');
  t.match(compileSource([]).diagnostics, [{ code: 'source_read_failed' }]);
  t.match(await failureOf(readSourceDir(join(dir, 'nope'))), [
    { code: 'source_read_failed', cause: 'ENOENT', hint: String },
  ]);
  t.match(await failureOf(readSourceDir(join(dir, 'README.txt'))), [
    { code: 'source_read_failed', message: /is not a directory/, hint: String },
  ]);
  const cli = await run(['pack', '--check', dir]);
  t.equal(cli.code, 1);
  t.match(cli.stderr, /^source_read_failed: the catalog source holds no YAML file$/m);
});

t.test('the cases together cover every authoring-time code', async (t) => {
  for (const code of AUTHORING_CODES) t.ok(code in CODES, `${code} is a known code`);
  const seen = new Set<string>(cases.flatMap((c) => expectedOf(c).map((e) => e.code)));
  seen.add('source_read_failed'); // tested above with a temp dir: git holds no empty directory
  t.same(
    [...AUTHORING_CODES].filter((c) => !seen.has(c)),
    [],
    'no authoring code without a fixture',
  );
  t.same(
    [...seen].filter((c) => !AUTHORING_CODES.includes(c as ErrorCode)),
    [],
    'no fixture code outside the authoring set',
  );
});

t.test('svc pack --check prints every diagnostic as file:line:col: code: message and exits 1', async (t) => {
  const dirs = cases.map((c) => join('fixtures', 'invalid', c));
  const r = await run(['pack', '--check', ...dirs]);
  t.equal(r.code, 1, 'exit 1');
  t.equal(r.stdout, '', 'nothing on stdout');
  const lines = r.stderr.split('\n');
  let at = 0;
  for (const c of cases) {
    const dir = join('fixtures', 'invalid', c);
    const diags = compileSource(await readSourceDir(dir)).diagnostics;
    t.equal(diags.length, expectedOf(c).length, `${c}: same count through readSourceDir`);
    for (const d of diags) {
      const want = `${d.span!.file}:${d.span!.line}:${d.span!.col}: ${d.code}: ${d.message}`;
      t.ok(want.startsWith(`${dir}/`), 'the file is named as given on the command line');
      const i = lines.indexOf(want, at);
      t.ok(i >= at, `${c}: ${want}`);
      t.equal(lines[i + 1], `  hint: ${d.hint}`, 'followed by its hint');
      if (i >= at) at = i + 1;
    }
    const summary = lines.indexOf(`${dir}: ${diags.length} problem${diags.length === 1 ? '' : 's'}`, at);
    t.ok(summary >= at, `${c}: summary line`);
    if (summary >= at) at = summary + 1;
  }
});
