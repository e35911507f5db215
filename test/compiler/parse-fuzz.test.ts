/**
 * Deterministic fuzzing of `parseProgram`: random token soups and mutations of a corpus of valid
 * programs. Whatever the input, the parser must not throw, must report only known codes with a
 * message and a span inside the text, and a successful parse must give spans inside the text.
 */
import t from 'tap';
import { performance } from 'node:perf_hooks';
import { CODES, type SvcError } from '../../common/errors.js';
import { parseProgram } from '../../compiler/parse.js';
import { growth, medianMs } from '../_helpers/growth.js';
import { prng } from '../_helpers/prng.js';

const CORPUS = [
  'e1',
  'e1(city="Berlin", limit=10)[name,phone]',
  'e1("b-17")',
  'e1(id="b-17")[name,website]',
  'brewery:Brewery(kind="micro", city="Berlin")[name,city]',
  'help-desk:Ticket(status="open", priority="urgent")[id,subject]',
  'e1("b-1").r1[name,abv]',
  'e1("b-1").beers[name,abv]',
  'e2(7).r3(rating=5)[author,text]',
  'e2(7).m6()',
  'e1("b-17").m2(city="Bamberg", kind="brewpub")',
  '# Berlin breweries and their beers\nb = e1(city="Berlin")[id,name]\ne2(breweryId=b.id, available=true)[name,abv]',
  'top = e1(country="BE", limit=40)\ntop.r1[name]',
  'm1(name="Pen & Quill Brewing", city="Berlin", country="DE")',
  'm7(beerId=7, rating=4, author="ana", text=<<EOT\nCrisp and clean.\nWould drink "again".\nEOT)',
  'm7(text=<<EOT\nglued before a comma\nEOT, rating=4)',
  'm1(address={street: <<ADDR\nHauptstr. 1\nADDR}, zip="10115")',
  'm7(text=<<EOT\n  indented\n    EOT\n)',
  'm4(breweryId="b-1", name="Dark", style="Stout", abv=5.2, ibu=-1, ratio=1.5e-3)',
  'e1(flags=[true, false, null], tags=["a", "b",], empty=[], obj={a: 1, "b c": [1, {d: null}], e:true},)',
  'e1(\n  city="Berlin",   # where\n  limit=10,\n)[\n  name,\n  phone,\n]',
  'e1 ; e2(x=1) ; e3[a]',
  'page(pg3)[name, city]',
  'page(l_k3f9_pg12)',
  'wait(o2)',
  'cancel(o17)',
  'e1(q="esc \\" \\\\ \\/ \\n \\t \\r \\b \\f \\u00e9")',
  'b = e1\r\nc = e2(x=b.id)\r\ne3(y=c.id, z=b)\r\n',
  'e1(city="Berlin")\n\n# trailing comment\n',
  'x = m3(breweryId="b-4")[name]\ny = x.r2\ny[name]',
];

const SOUP = [
  'e1',
  'e2',
  'm3',
  'r1',
  'b',
  'city',
  'name',
  'limit',
  'page',
  'wait',
  'cancel',
  'pg3',
  'o2',
  'l_x_pg1',
  's0',
  'p3',
  'brewery:Beer',
  'help-desk:Ticket',
  'a:b',
  'true',
  'false',
  'null',
  'trueish',
  '"Berlin"',
  '""',
  '"a\\nb"',
  '"bad\\q"',
  '"\\u12"',
  '"open',
  "'x'",
  '"""',
  '<<<',
  '42',
  '-7',
  '2.5',
  '1.5e-3',
  '1e5',
  '5.',
  '99999999999999999999',
  '12abc',
  '1.0e999',
  '-',
  '=',
  ',',
  '.',
  ':',
  '(',
  ')',
  '[',
  ']',
  '{',
  '}',
  ';',
  '\n',
  '\r\n',
  ' ',
  '  ',
  '\t',
  '# note\n',
  '#',
  '<<EOT\nbody\nEOT',
  '<<EOT\nx\nEOT)',
  '<<\n',
  '<< EOT\n',
  '<<EOT x\n',
  'EOT',
  '<<A\n',
  'A,',
  '@',
  '$',
  '&&',
  '|',
  '!',
  '>',
  '<',
  '\\',
  '\u00e9',
  '\u201c',
  '\u0000',
  '\r',
];

const ALPHABET = 'abe1m2op_gl:-=,.;()[]{}"\'\\<>#@ \t\n\r0123456789ETOx\u00e9';

function soup(rnd: () => number): string {
  const n = 1 + Math.floor(rnd() * 25);
  let s = '';
  for (let i = 0; i < n; i++) {
    s += SOUP[Math.floor(rnd() * SOUP.length)]!;
    if (rnd() < 0.3) s += ' ';
  }
  return s;
}

function mutate(rnd: () => number, src: string): string {
  let s = src;
  const rounds = 1 + Math.floor(rnd() * 3);
  for (let r = 0; r < rounds; r++) {
    const i = Math.floor(rnd() * (s.length + 1));
    const j = Math.min(s.length, i + 1 + Math.floor(rnd() * 8));
    const ch = ALPHABET[Math.floor(rnd() * ALPHABET.length)]!;
    switch (Math.floor(rnd() * 6)) {
      case 0:
        s = s.slice(0, i) + ch + s.slice(i);
        break; // insert
      case 1:
        s = s.slice(0, i) + s.slice(j);
        break; // delete
      case 2:
        s = s.slice(0, i) + ch + s.slice(i + 1);
        break; // replace
      case 3:
        s = s.slice(0, i);
        break; // truncate
      case 4:
        s = s.slice(0, j) + s.slice(i, j) + s.slice(j);
        break; // duplicate a slice
      default:
        s = s.slice(0, i) + SOUP[Math.floor(rnd() * SOUP.length)]! + s.slice(i);
        break; // insert a token
    }
  }
  return s;
}

/** Text lines as the parser counts them (split at `\n`; a `\r` counts as a character). */
function lineLengths(text: string): number[] {
  return text.split('\n').map((l) => l.length);
}

function checkDiagnostic(text: string, lens: number[], d: SvcError): string | undefined {
  if (!(d.code in CODES)) return `unknown code ${d.code}`;
  if (d.code === 'internal_error') return 'internal_error';
  if (typeof d.message !== 'string' || d.message.length === 0) return 'no message';
  if (!d.hint) return 'no hint';
  const s = d.span;
  if (!s) return 'no span';
  const inside = (line: number, col: number): boolean =>
    line >= 1 && line <= lens.length && col >= 1 && col <= lens[line - 1]! + 1;
  if (!inside(s.line, s.col)) return `span start ${s.line}:${s.col} outside the text`;
  if (s.endLine === undefined || s.endCol === undefined) return 'span without end';
  if (!inside(s.endLine, s.endCol)) return `span end ${s.endLine}:${s.endCol} outside the text`;
  if (s.endLine < s.line || (s.endLine === s.line && s.endCol < s.col)) return 'span ends before it starts';
  return undefined;
}

/** Every `span` in the AST lies inside the text and inside its parent's span, and its line/col match its start offset. */
function checkSpans(text: string, root: unknown): string | undefined {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') starts.push(i + 1);
  const pos = (o: number): [number, number] => {
    let l = starts.length - 1;
    while (starts[l]! > o) l--;
    return [l + 1, o - starts[l]! + 1];
  };
  let problem: string | undefined;
  const walk = (x: unknown, lo: number, hi: number): void => {
    if (problem || !x || typeof x !== 'object') return;
    if (Array.isArray(x)) return x.forEach((y) => walk(y, lo, hi));
    const o = x as Record<string, unknown>;
    const s = o.span as { line: number; col: number; start: number; end: number } | undefined;
    let [a, b] = [lo, hi];
    if (s) {
      if (!(s.start >= lo && s.start <= s.end && s.end <= hi))
        problem = `span ${s.start}..${s.end} outside ${lo}..${hi}`;
      const [line, col] = pos(s.start);
      if (line !== s.line || col !== s.col) problem = `span ${s.line}:${s.col} does not match offset ${s.start}`;
      [a, b] = [s.start, s.end];
    }
    for (const [k, v] of Object.entries(o)) if (k !== 'span') walk(v, a, b);
  };
  walk(root, 0, text.length);
  return problem;
}

t.test('parseProgram survives random programs', async (t) => {
  const rnd = prng(20240531);
  const programs: string[] = [...CORPUS];
  for (let i = 0; i < 4000; i++) programs.push(soup(rnd));
  for (let i = 0; i < 8000; i++) programs.push(mutate(rnd, CORPUS[Math.floor(rnd() * CORPUS.length)]!));
  for (let i = 0; i < 500; i++)
    programs.push(mutate(rnd, soup(rnd) + '\n' + CORPUS[Math.floor(rnd() * CORPUS.length)]!));

  const failures: string[] = [];
  const codes = new Map<string, number>();
  let parsed = 0;
  const slow: Array<{ text: string; ms: number }> = [];
  for (const text of programs) {
    let r: ReturnType<typeof parseProgram>;
    try {
      const t0 = performance.now();
      r = parseProgram(text);
      keepSlowest(slow, { text, ms: performance.now() - t0 }, 10);
    } catch (e) {
      failures.push(`${JSON.stringify(text)}: threw ${String(e)}`);
      continue;
    }
    const lens = lineLengths(text);
    if ((r.program === undefined) === (r.diagnostics.length === 0))
      failures.push(`${JSON.stringify(text)}: program and diagnostics disagree`);
    for (const d of r.diagnostics) {
      codes.set(d.code, (codes.get(d.code) ?? 0) + 1);
      const p = checkDiagnostic(text, lens, d);
      if (p) failures.push(`${JSON.stringify(text)}: ${p} in ${JSON.stringify(d)}`);
    }
    if (r.program) {
      parsed++;
      const p = checkSpans(text, r.program);
      if (p) failures.push(`${JSON.stringify(text)}: ${p}`);
    }
    if (failures.length > 20) break;
  }
  t.same(failures, [], 'no failures');
  t.ok(programs.length >= 10000, `${programs.length} programs`);
  for (const p of CORPUS) t.same(parseProgram(p).diagnostics, [], `corpus program parses: ${JSON.stringify(p)}`);
  t.ok(parsed > 500, `some mutants still parse (${parsed})`);
  for (const code of [
    'syntax_error',
    'unexpected_character',
    'unterminated_string',
    'bad_escape',
    'bad_number',
    'unterminated_heredoc',
    'heredoc_missing_tag',
    'legacy_heredoc',
    'bad_handle',
    'continuation_not_alone',
  ]) {
    t.ok((codes.get(code) ?? 0) > 0, `fuzzing reaches ${code}`);
  }
  // The fuzz must not find an input the parser is slow on. A time is no measure of that (the
  // machine may be busy); growth is: the slowest inputs found (timed again, the median of 5), each
  // repeated 4 times as often, take less than 9 times as long (linear work: about 4).
  const timed: Array<{ text: string; ms: number }> = [];
  for (const { text } of slow) timed.push({ text, ms: await medianMs(() => parseProgram(text)) });
  for (const { text } of timed.sort((a, b) => b.ms - a.ms).slice(0, 3)) {
    const g = await growth(
      () => parseProgram(repeated(text, 1)),
      () => parseProgram(repeated(text, 4)),
    );
    t.ok(
      g.ratio < 9,
      `${JSON.stringify(text.slice(0, 40))} x1 -> x4: ${g.small.toFixed(3)} -> ${g.big.toFixed(3)} ms (x${g.ratio.toFixed(1)})`,
    );
  }
});

/** Keep the `n` entries of `list` with the largest `ms` (unsorted). */
function keepSlowest(list: Array<{ text: string; ms: number }>, e: { text: string; ms: number }, n: number): void {
  if (list.length < n) {
    list.push(e);
    return;
  }
  let min = 0;
  for (let i = 1; i < list.length; i++) if (list[i]!.ms < list[min]!.ms) min = i;
  if (e.ms > list[min]!.ms) list[min] = e;
}

/**
 * `text` on `times` x k lines, k chosen so that 4 x k copies stay within the 1,000-statement limit
 * (a program over it is refused before it is parsed, which would say nothing about parsing).
 */
function repeated(text: string, times: number): string {
  const statements = (text.match(/[\n;]/g)?.length ?? 0) + 1;
  const k = Math.max(1, Math.floor(250 / statements));
  return Array.from({ length: times * k }, () => text).join('\n');
}

t.test('pathological inputs', async (t) => {
  const cases = [
    '('.repeat(5000),
    '['.repeat(5000) + ']'.repeat(5000),
    'e1(a=' + '{a:'.repeat(3000),
    'e1(' + 'a=1,'.repeat(3000) + ')',
    '<<EOT\n'.repeat(2000),
    '"'.repeat(3000),
    '\n'.repeat(10000),
    ';'.repeat(10000),
    'e1 '.repeat(3000),
    'x\n'.repeat(3000) + 'wait(o1)',
    '\u0000\uffff\ud800',
  ];
  for (const text of cases) {
    const r = parseProgram(text);
    const lens = lineLengths(text);
    const problems = r.diagnostics.map((d) => checkDiagnostic(text, lens, d)).filter((p) => p !== undefined);
    t.same(problems, [], `${r.diagnostics.length} sound diagnostics for ${JSON.stringify(text.slice(0, 20))}...`);
    if (r.program) t.equal(checkSpans(text, r.program), undefined, 'spans inside the text');
  }
});
