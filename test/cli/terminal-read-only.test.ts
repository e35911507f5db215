/**
 * The terminal against a read-only caller (docs/auth.md "Read-only callers"): `svc context` is told
 * by the server that the session only reads, teaches its local symbol table the same waves (no
 * write rows, no "taught differently" warning), reads run, and a write is refused with `read_only`
 * before any vendor call.
 */
import t from 'tap';
import { startStack } from '../_helpers/server.js';
import { term, workspace } from '../_helpers/terminal.js';

/** A teaching row of a write form: `m1(...)<TAB>create e1: ...`. */
const WRITE_ROW = /\t(create|update|delete|action) /;

t.test('a read-only server: the same waves locally, reads run, writes refused', async (t) => {
  const stack = await startStack(t, { readOnly: () => true });
  const open = await startStack(t);
  const ws = await workspace(t);
  t.equal((await term(ws, ['init', '--server', stack.url])).code, 0);
  const ctx = await term(ws, ['context', '--new', 'brewery:Brewery']);
  t.equal(ctx.code, 0, ctx.stderr);
  t.notMatch(ctx.stderr, /taught this wave differently/, "the local wave is the server's");
  t.notMatch(ctx.stdout, WRITE_ROW, 'no write row is taught');
  t.match(ctx.stdout, /search: e1\(q=\$\)/, 'reads are taught');

  // The same seeds on a writable server teach the writes (the difference above is the read-only one).
  const ws2 = await workspace(t);
  t.equal((await term(ws2, ['init', '--server', open.url])).code, 0);
  const ctx2 = await term(ws2, ['context', '--new', 'brewery:Brewery']);
  t.match(ctx2.stdout, WRITE_ROW);

  const extend = await term(ws, ['context', 'brewery:Beer']);
  t.equal(extend.code, 0, extend.stderr);
  t.notMatch(extend.stderr, /taught this wave differently/, 'a delta wave too');
  t.notMatch(extend.stdout, WRITE_ROW);
  t.match(extend.stdout, /brewery:Beer/, 'the Beer wave was taught');

  const read = await term(ws, ['run', '-e', 'e1(limit=3)[name]']);
  t.equal(read.code, 0, read.stderr);
  const before = await (await fetch(`${stack.vendorUrl}/breweries`)).json();
  const write = await term(ws, ['run', '--force', '-e', 'brewery:createBrewery(name="RO", city="Oslo", country="NO")']);
  t.not(write.code, 0);
  t.match(write.stdout + write.stderr, /read_only/);
  t.same(await (await fetch(`${stack.vendorUrl}/breweries`)).json(), before, 'nothing reached the vendor');
});
