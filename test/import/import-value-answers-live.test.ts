/**
 * Value answers live: fixtures/openapi/value-answers.yaml imported and packed, served by a real
 * svc server against a vendor on 127.0.0.1 (test/_helpers/value-vendor.ts). Programs over HTTP
 * read the readme, the XML status, the CSV report, the map of counts, the list of tags and the
 * health check whole, each with the `Accept` its mapping sends; a value read the vendor answers
 * with a file fails with the stated problem; the same over MCP with the SDK client.
 */
import t, { type Test } from 'tap';
import { copyFileSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeArtifacts } from '../../pack/index.js';
import { importAndPack } from '../_helpers/import.js';
import { connectMcp, errorCode, openLogical, textOf } from '../_helpers/mcp.js';
import { codeOf, openSession, runProgram, startStack, PACKED, type Answer } from '../_helpers/server.js';
import { startValueVendor, VALUE_DATA } from '../_helpers/value-vendor.js';

type Row = Record<string, unknown>;

const { cgs, cgs_hash } = await importAndPack('value-answers.yaml');

t.test('live: value answers come back whole over HTTP and MCP; a file is refused', async (t) => {
  const vendor = await startValueVendor();
  t.teardown(() => vendor.close());
  const dir = mkdtempSync(join(tmpdir(), 'svc-import-values-'));
  for (const f of readdirSync(PACKED)) copyFileSync(join(PACKED, f), join(dir, f));
  await writeArtifacts(cgs, cgs_hash, dir);
  const stack = await startStack(t, {
    vendorUrl: vendor.url,
    catalogDir: dir,
    loadOptions: { backendOverrides: { shelf: vendor.url } },
  });
  const seeds = ['shelf:Book', 'shelf:Text', 'shelf:Value'];
  const { path, answer } = await openSession(stack.url, { entry_id: 'shelf', seeds });
  const run = (program: string) => runProgram(stack.url, path, program);
  const wave = String(answer.body.wave).split('\n');
  /** The m# the wave teaches for the singleton described so (`m3(bookId=$)\tget e2 (the one row, no id): ...`). */
  const sym = (description: string) => {
    const line = wave.find((l) => /^m\d+\(/.test(l) && l.includes(`(the one row, no id): ${description}`));
    t.ok(line, `the wave teaches ${description}`);
    return /^(m\d+)\(/.exec(line ?? '')?.[1] ?? 'm0';
  };
  const d = VALUE_DATA;

  const readme = sym('The readme of a book, as plain text');
  t.match(wave.join('\n'), new RegExp(`^${readme}\\(bookId=\\$\\)\\t`, 'm'), 'taught with its path parameter');
  t.same(ok(t, await run(`${readme}(bookId="b-2")`), 'readme'), [{ text: d.readme('b-2') }], 'the text whole');
  t.equal(vendor.hits('/books/b-2/readme', 'GET')[0]?.headers.accept, 'text/plain', 'Accept: the declared type');
  t.same(ok(t, await run(`${sym("The store's status document")}()`), 'status'), [{ text: d.status }]);
  t.equal(vendor.hits('/status', 'GET')[0]?.headers.accept, 'application/xml');
  t.same(ok(t, await run(`${sym('Loans per month as CSV')}(year=2024)`), 'report'), [{ text: d.report('2024') }]);
  t.equal(vendor.hits('/reports/loans', 'GET')[0]?.headers.accept, 'text/csv');
  t.equal(vendor.hits('/reports/loans', 'GET')[0]?.query.get('year'), '2024', 'the query is sent');
  t.same(ok(t, await run(`${sym('How many books per genre')}()`), 'counts'), [{ value: d.counts }], 'a map whole');
  t.equal(vendor.hits('/stats/genres', 'GET')[0]?.headers.accept, 'application/json', 'a value read asks for JSON');
  t.same(ok(t, await run(`${sym('Every tag in use')}()`), 'tags'), [{ value: d.tags }], 'a list of strings whole');
  t.same(ok(t, await run(`${sym('Whether the store is up')}()`), 'health'), [{ value: null }], 'no body: null');
  t.same(ok(t, await run('e1("b-1")'), 'an ordinary row'), [d.books[0]]);

  const thumb = await run(`${sym('A small picture of a book, in whatever form the store has')}(bookId="b-1")`);
  t.not(thumb.status, 200, thumb.text.slice(0, 300));
  t.equal(codeOf(thumb), 'vendor_bad_response');
  t.match(thumb.text, 'the vendor answered a file (`image/png`, 12,345 bytes); svc reads text and JSON only');

  const c = await connectMcp(t, stack.url);
  const mcpSeeds = seeds.map((q) => ({ api: 'shelf', entity: q.split(':')[1]! }));
  const { ref, result } = await openLogical(c, mcpSeeds, 'value answers');
  const mcpWave = textOf(result).split('\n');
  /** The m# the MCP context teaches for the singleton described so. */
  const mcpSym = (description: string) =>
    /^(m\d+)\(/.exec(mcpWave.find((l) => /^m\d+\(/.test(l) && l.includes(`: ${description}`)) ?? '')?.[1] ?? 'm0';
  const mcpReadme = mcpSym('The readme of a book, as plain text');
  t.match(mcpReadme, /^m\d+$/, 'MCP: the context teaches the readme');
  const r = await c.tool('svc', { logical_session_ref: ref, program: `${mcpReadme}(bookId="b-1")` });
  t.notOk(r.isError, textOf(r));
  const rows = (r.structuredContent as { rows?: Row[] } | undefined)?.rows;
  t.same(rows, [{ text: d.readme('b-1') }], 'MCP: the text whole in structuredContent');
  t.match(textOf(r), 'A book on the shelf.', 'MCP: the text in the content');
  const file = await c.tool('svc', {
    logical_session_ref: ref,
    program: `${mcpSym('A small picture of a book, in whatever form the store has')}(bookId="b-2")`,
  });
  t.equal(file.isError, true);
  t.equal(errorCode(file), 'vendor_bad_response');
  t.match(textOf(file), 'svc reads text and JSON only');
});

function ok(t: Test, a: Answer, what: string): Row[] {
  t.equal(a.status, 200, `${what}: 200 ${a.status === 200 ? '' : a.text.slice(0, 300)}`);
  return (a.body.rows ?? []) as Row[];
}
