import { readFileSync } from 'node:fs';
import t from 'tap';
import { CODES, type SvcError } from '../../common/errors.js';
import type { Chain, Program, Statement, Value } from '../../compiler/ast.js';
import { parseProgram } from '../../compiler/parse.js';
import { renderDiagnostic } from '../../compiler/render-diagnostic.js';

/** The assertions the helpers use (any tap test satisfies it). */
interface Asserts {
  same(found: unknown, wanted: unknown, ...message: [] | [string]): boolean;
  equal(found: unknown, wanted: unknown, ...message: [] | [string]): boolean;
  match(found: unknown, pattern: unknown, ...message: [] | [string]): boolean;
  ok(value: unknown, ...message: [] | [string]): boolean;
}

/** Deep copy without `span` keys, to compare shapes. */
function shape(x: unknown): unknown {
  if (Array.isArray(x)) return x.map(shape);
  if (x && typeof x === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(x)) if (k !== 'span') out[k] = shape(v);
    return out;
  }
  return x;
}

function ok(t: Asserts, src: string): Program {
  const r = parseProgram(src);
  t.same(r.diagnostics, [], `parses: ${JSON.stringify(src)}`);
  if (!r.program) throw new Error(`no program for ${src}`);
  return r.program;
}

function only(t: Asserts, src: string): Statement {
  const p = ok(t, src);
  t.equal(p.statements.length, 1);
  return p.statements[0]!;
}

function chainOf(t: Asserts, src: string): Chain {
  const s = only(t, src);
  if (s.kind !== 'expr') throw new Error(`not an expression: ${src}`);
  return s.expr;
}

function argValue(t: Asserts, valueText: string): Value {
  const c = chainOf(t, `e1(x=${valueText})`);
  return c.head.args![0]!.value;
}

function errs(src: string): SvcError[] {
  const r = parseProgram(src);
  if (r.diagnostics.length > 0 && r.program) throw new Error('program set despite diagnostics');
  return r.diagnostics;
}

function first(t: Asserts, src: string, code: string, line: number, col: number): SvcError {
  const ds = errs(src);
  const d = ds[0];
  t.ok(d, `an error for ${JSON.stringify(src)}`);
  t.match(d, { code, span: { line, col } }, `${code} at ${line}:${col} for ${JSON.stringify(src)}`);
  return d!;
}

const name = (text: string) => ({ text });

t.test('the forms parse to the expected AST', async (t) => {
  t.test('entity with filters and projection', async (t) => {
    t.same(shape(chainOf(t, 'e1(city="Berlin", limit=10)[name,phone]')), {
      kind: 'chain',
      head: {
        name: name('e1'),
        args: [
          { name: name('city'), value: { kind: 'string', value: 'Berlin', heredoc: false } },
          { name: name('limit'), value: { kind: 'integer', value: 10 } },
        ],
      },
      members: [],
      projection: { fields: [name('name'), name('phone')] },
    });
  });

  t.test('a bare name has no args; empty parentheses give an empty list', async (t) => {
    t.same(shape(chainOf(t, 'e1')), { kind: 'chain', head: { name: name('e1') }, members: [] });
    t.same(shape(chainOf(t, 'e2(7).m6()').members), [{ name: name('m6'), args: [] }]);
  });

  t.test('positional argument and members', async (t) => {
    t.same(shape(chainOf(t, 'e1("b-1").r1(rating=5).beers[name,abv]')), {
      kind: 'chain',
      head: { name: name('e1'), args: [{ value: { kind: 'string', value: 'b-1', heredoc: false } }] },
      members: [
        { name: name('r1'), args: [{ name: name('rating'), value: { kind: 'integer', value: 5 } }] },
        { name: name('beers') },
      ],
      projection: { fields: [name('name'), name('abv')] },
    });
  });

  t.test('qualified names', async (t) => {
    const c = chainOf(t, 'help-desk:Ticket(status="open").brewery:Beer');
    t.same(c.head.name, {
      text: 'help-desk:Ticket',
      qualified: { api: 'help-desk', entity: 'Ticket' },
      span: { line: 1, col: 1, start: 0, end: 16 },
    });
    t.same(c.members[0]!.name.qualified, { api: 'brewery', entity: 'Beer' });
    t.equal(chainOf(t, 'e1').head.name.qualified, undefined);
  });

  t.test('binding and references', async (t) => {
    const p = ok(t, 'b = e1(city="Berlin")[id,name]\ne2(breweryId=b.id, parent=b)');
    t.same(shape(p.statements[0]), {
      kind: 'binding',
      name: name('b'),
      expr: {
        kind: 'chain',
        head: {
          name: name('e1'),
          args: [{ name: name('city'), value: { kind: 'string', value: 'Berlin', heredoc: false } }],
        },
        members: [],
        projection: { fields: [name('id'), name('name')] },
      },
    });
    t.same(shape((p.statements[1] as { expr: Chain }).expr.head.args), [
      { name: name('breweryId'), value: { kind: 'ref', binding: name('b'), field: name('id') } },
      { name: name('parent'), value: { kind: 'ref', binding: name('b') } },
    ]);
    t.same(shape(chainOf(t, 'top.r1[name]')), {
      kind: 'chain',
      head: { name: name('top') },
      members: [{ name: name('r1') }],
      projection: { fields: [name('name')] },
    });
  });

  t.test('literals', async (t) => {
    t.same(shape(argValue(t, '-42')), { kind: 'integer', value: -42 });
    t.same(shape(argValue(t, '0')), { kind: 'integer', value: 0 });
    t.same(shape(argValue(t, '9007199254740991')), { kind: 'integer', value: 9007199254740991 });
    t.same(shape(argValue(t, '2.5')), { kind: 'decimal', value: 2.5 });
    t.same(shape(argValue(t, '-1.5e-3')), { kind: 'decimal', value: -0.0015 });
    t.same(shape(argValue(t, '1.0E+2')), { kind: 'decimal', value: 100 });
    t.same(shape(argValue(t, 'true')), { kind: 'boolean', value: true });
    t.same(shape(argValue(t, 'false')), { kind: 'boolean', value: false });
    t.same(shape(argValue(t, 'null')), { kind: 'null' });
    t.same(shape(argValue(t, 'trueish')), { kind: 'ref', binding: name('trueish') }, 'keywords need a word boundary');
    t.same(shape(argValue(t, '""')), { kind: 'string', value: '', heredoc: false });
    t.same(shape(argValue(t, '"a\\"b\\\\c\\/d\\n\\t\\r\\b\\f\\u00e9#"')), {
      kind: 'string',
      value: 'a"b\\c/d\n\t\r\b\fé#',
      heredoc: false,
    });
  });

  t.test('lists and objects, trailing commas, keys', async (t) => {
    t.same(shape(argValue(t, '[1, "two", [], {}, b.id,]')), {
      kind: 'list',
      items: [
        { kind: 'integer', value: 1 },
        { kind: 'string', value: 'two', heredoc: false },
        { kind: 'list', items: [] },
        { kind: 'object', entries: [] },
        { kind: 'ref', binding: name('b'), field: name('id') },
      ],
    });
    t.same(shape(argValue(t, '{a: 1, "b c": [true], d: {e: null},}')), {
      kind: 'object',
      entries: [
        { key: name('a'), value: { kind: 'integer', value: 1 } },
        { key: name('b c'), value: { kind: 'list', items: [{ kind: 'boolean', value: true }] } },
        { key: name('d'), value: { kind: 'object', entries: [{ key: name('e'), value: { kind: 'null' } }] } },
      ],
    });
    // `{k:v}` without a space lexes as one qualified token; it still means key and value.
    t.same(shape(argValue(t, '{a:true, b:null, c:x, d:x.id, e:False}')), {
      kind: 'object',
      entries: [
        { key: name('a'), value: { kind: 'boolean', value: true } },
        { key: name('b'), value: { kind: 'null' } },
        { key: name('c'), value: { kind: 'ref', binding: name('x') } },
        { key: name('d'), value: { kind: 'ref', binding: name('x'), field: name('id') } },
        { key: name('e'), value: { kind: 'ref', binding: name('False') } },
      ],
    });
    const o = argValue(t, '{ab:cd.ef}');
    t.same(o.kind === 'object' && o.entries[0], {
      key: { text: 'ab', span: { line: 1, col: 7, start: 6, end: 8 } },
      value: {
        kind: 'ref',
        binding: { text: 'cd', span: { line: 1, col: 10, start: 9, end: 11 } },
        field: { text: 'ef', span: { line: 1, col: 13, start: 12, end: 14 } },
        span: { line: 1, col: 10, start: 9, end: 14 },
      },
    });
    t.same(shape(chainOf(t, 'e1(a=1, b=2,)[x, y,]').projection), { fields: [name('x'), name('y')] });
  });

  t.test('continuations', async (t) => {
    t.same(shape(only(t, 'page(pg3)[name, city]')), {
      kind: 'page',
      handle: name('pg3'),
      projection: { fields: [name('name'), name('city')] },
    });
    t.same(shape(only(t, 'page(l_Ab12_pg7)')), { kind: 'page', handle: name('l_Ab12_pg7') });
    t.same(shape(only(t, 'wait(o2)')), { kind: 'wait', handle: name('o2') });
    t.same(shape(only(t, '# poll\n  cancel(o12) ;\n')), { kind: 'cancel', handle: name('o12') });
    t.same(only(t, 'wait(o2)').span, { line: 1, col: 1, start: 0, end: 8 });
  });

  t.test('spans', async (t) => {
    const src = 'b = e1(city="Berlin")\n  e2(breweryId=b.id)[name]';
    const p = ok(t, src);
    t.same(p.span, { line: 1, col: 1, start: 0, end: src.length });
    const [s1, s2] = p.statements as [Statement, Statement];
    t.same(s1.span, { line: 1, col: 1, start: 0, end: 21 });
    const c2 = (s2 as { expr: Chain }).expr;
    t.same(c2.span, { line: 2, col: 3, start: 24, end: src.length });
    t.same(c2.head.span, { line: 2, col: 3, start: 24, end: 42 });
    const arg = c2.head.args![0]!;
    t.same(arg.span, { line: 2, col: 6, start: 27, end: 41 });
    t.equal(src.slice(arg.value.span.start, arg.value.span.end), 'b.id');
    t.same(c2.projection!.span, { line: 2, col: 21, start: 42, end: src.length });
  });
});

t.test('statements, newlines, comments and separators', async (t) => {
  const p = ok(t, '# header\n\ne1 ; e2;e3\n\n  # indented comment\ne4 # trailing\n;\n');
  t.same(
    p.statements.map((s) => (s.kind === 'expr' ? s.expr.head.name.text : s.kind)),
    ['e1', 'e2', 'e3', 'e4'],
  );

  const multi = ok(t, 'e1(\n  city="Berlin",   # where\n  limit=10,\n)[\n  name,\n  phone\n]\ne2');
  t.equal(multi.statements.length, 2);
  t.same(shape((multi.statements[0] as { expr: Chain }).expr.projection), { fields: [name('name'), name('phone')] });

  t.same(shape(argValue(t, '[\n1,\n{\na: 2\n}\n]')), {
    kind: 'list',
    items: [
      { kind: 'integer', value: 1 },
      { kind: 'object', entries: [{ key: name('a'), value: { kind: 'integer', value: 2 } }] },
    ],
  });

  const crlf = ok(t, 'b = e1(city="Berlin")\r\ne2(x=b.id,\r\n  y=1)\r\n');
  t.equal(crlf.statements.length, 2);
  t.same(crlf.statements[1]!.span, { line: 2, col: 1, start: 23, end: 41 });
  t.same(shape(ok(t, 'e1\r\n').statements), [
    { kind: 'expr', expr: { kind: 'chain', head: { name: name('e1') }, members: [] } },
  ]);
});

t.test('heredocs', async (t) => {
  const text = (src: string): unknown => {
    const c = chainOf(t, src);
    const v = c.head.args!.find((a) => a.name?.text === 'text')!.value;
    t.equal(v.kind === 'string' && v.heredoc, true);
    return v.kind === 'string' ? v.value : undefined;
  };
  t.equal(
    text('m7(beerId=7, text=<<EOT\nCrisp and clean.\nWould drink "again".\nEOT\n)'),
    'Crisp and clean.\nWould drink "again".',
  );
  t.equal(text('m7(text=<<EOT\nglued before a paren\nEOT)'), 'glued before a paren', 'close glued before )');
  const c = chainOf(t, 'm7(text=<<EOT\na\nEOT, rating=4)');
  t.same(
    shape(c.head.args),
    [
      { name: name('text'), value: { kind: 'string', value: 'a', heredoc: true } },
      { name: name('rating'), value: { kind: 'integer', value: 4 } },
    ],
    'close glued before ,',
  );
  t.same(
    shape(argValue(t, '{body: <<EOT\nx\nEOT}')),
    { kind: 'object', entries: [{ key: name('body'), value: { kind: 'string', value: 'x', heredoc: true } }] },
    'close glued before }',
  );
  t.equal(
    text('m7(text=<<EOT\n  indented body\n    EOT   \n)'),
    '  indented body',
    'indented closing line, trailing blanks',
  );
  t.equal(
    text('m7(text=<<EOT\nEOTX\nthe EOT is here\nxEOT\nEOT.\nEOT )\nEOT\n)'),
    'EOTX\nthe EOT is here\nxEOT\nEOT.\nEOT )',
    'the tag inside a longer line does not close',
  );
  t.equal(text('m7(text=<<EOT\nEOT)'), '', 'empty body');
  t.equal(text('m7(text=<<EOT\n\n\nEOT)'), '\n', 'blank body lines are kept');
  t.equal(text('m7(text=<<_t1\nx\n_t1)'), 'x', 'tags may use _ and digits');
  t.equal(text('m7(text=<<EOT\r\nline one\r\nline two\r\nEOT)\r\n'), 'line one\nline two', 'CRLF input');
  t.equal(text('m7(text=<<A\n# not a comment; "not a string\nA)'), '# not a comment; "not a string');

  const p = ok(t, 'm7(text=<<EOT\none\ntwo\nEOT)\ne2');
  const v = (p.statements[0] as { expr: Chain }).expr.head.args![0]!.value;
  t.same(v.span, { line: 1, col: 9, start: 8, end: 25 }, 'a heredoc spans from << through its closing tag');
  t.same(p.statements[1]!.span, { line: 5, col: 1, start: 27, end: 29 });
});

t.test('every syntax error code with its position', async (t) => {
  first(t, 'e1(city="Berlin" limit=10)', 'syntax_error', 1, 18);
  first(t, 'x\n@', 'unexpected_character', 2, 1);
  first(t, 'e1(city="Berlin)', 'unterminated_string', 1, 9);
  first(t, 'e1(q="a\\qb")', 'bad_escape', 1, 8);
  first(t, 'e1(n=99999999999999999999)', 'bad_number', 1, 6);
  first(t, 'm7(text=<<EOT\nnever closed\n', 'unterminated_heredoc', 1, 9);
  first(t, 'm7(text=<<\nbody\n)', 'heredoc_missing_tag', 1, 9);
  first(t, 'm7(text="""\nbody\n""")', 'legacy_heredoc', 1, 9);
  first(t, '\n# nothing\n', 'empty_program', 1, 1);
  first(t, 'wait(x1)', 'bad_handle', 1, 6);
  first(t, 'e1\nwait(o1)', 'continuation_not_alone', 2, 1);
});

t.test('syntax error messages and hints teach the fix', async (t) => {
  let d = first(t, 'e1(city="Berlin"', 'syntax_error', 1, 17);
  t.equal(d.message, 'unexpected end of the program in the argument list');
  t.equal(d.hint, 'expected `,` or `)` to close the argument list opened at 1:3');
  d = first(t, 'e1(city="Berlin" limit=10)', 'syntax_error', 1, 18);
  t.same(d.span, { line: 1, col: 18, endLine: 1, endCol: 23 });
  t.equal(d.message, 'unexpected name `limit` in the argument list');
  t.equal(d.hint, 'expected `,` or `)` to close the argument list opened at 1:3');
  d = first(t, 'e1(city "x")', 'syntax_error', 1, 9);
  t.equal(d.hint, 'expected `=`, `.`, `,` or `)` to close the argument list opened at 1:3');
  d = first(t, 'e1(a=)', 'syntax_error', 1, 6);
  t.match(d.hint, /^expected a value \(/);
  d = first(t, 'e1(city: "Berlin")', 'syntax_error', 1, 8);
  t.match(d.hint, /name=value/);
  d = first(t, 'e1 e2', 'syntax_error', 1, 4);
  t.match(d.hint, /own line or separate statements with `;`/);
  d = first(t, 'e1[]', 'syntax_error', 1, 4);
  t.equal(d.hint, 'expected a field name');
  d = first(t, 'page = e1', 'syntax_error', 1, 1);
  t.match(d.message, /reserved/);
  for (const w of ['wait', 'cancel', 'true', 'false', 'null']) first(t, `${w} = e1`, 'syntax_error', 1, 1);
  d = first(t, 'm7(text="""\nx\n""")', 'legacy_heredoc', 1, 9);
  t.match(d.hint, /write <<EOT, a newline, the text, then a line holding EOT/);
  d = first(t, 'm7(text=<<<EOT\nx\nEOT)', 'legacy_heredoc', 1, 9);
  t.match(d.hint, /<<EOT/);
  d = first(t, 'page(o1)', 'bad_handle', 1, 6);
  t.match(d.hint, /pg<N>/);
  d = first(t, 'wait(pg1)', 'bad_handle', 1, 6);
  t.match(d.hint, /o<N>/);
  first(t, 'cancel("o1")', 'bad_handle', 1, 8);
  first(t, 'page(s0)[name]', 'bad_handle', 1, 6);
  first(t, 'wait(o1)[name]', 'syntax_error', 1, 9);
  first(t, 'wait(o1, o2)', 'syntax_error', 1, 1);
  first(t, 'x = page(pg1)', 'syntax_error', 1, 5);
  for (const d of errs('e1(city="Berlin" limit=10)\ne2(x "y")\n@')) t.ok(d.hint && d.message, 'message and hint');
});

t.test('all syntax errors are reported, one per bad statement', async (t) => {
  const ds = errs('e1(a=1 b=2)\ne2(ok=1)\ne3(c "d")\ne4(q=\'x\')\ne5(n=1x);e6(');
  t.same(
    ds.map((d) => [d.code, d.span!.line, d.span!.col]),
    [
      ['syntax_error', 1, 8],
      ['syntax_error', 3, 6],
      ['unexpected_character', 4, 6],
      ['bad_number', 5, 6],
      ['syntax_error', 5, 13],
    ],
  );
  // An unterminated string ends its statement at the end of the line, even inside brackets.
  t.same(
    errs('e1(a="x)\ne2(b=1 c=2)').map((d) => [d.code, d.span!.line]),
    [
      ['unterminated_string', 1],
      ['syntax_error', 2],
    ],
  );
  // Several continuations: each is reported.
  t.same(
    errs('wait(o1); cancel(o2)').map((d) => d.code),
    ['continuation_not_alone', 'continuation_not_alone'],
  );
});

t.test('the fixture of syntax errors', async (t) => {
  const cases = JSON.parse(readFileSync('fixtures/programs/syntax-errors.json', 'utf8')) as Array<{
    program: string;
    code: string;
    line: number;
    col: number;
  }>;
  const syntaxCodes = [
    'syntax_error',
    'unexpected_character',
    'unterminated_string',
    'bad_escape',
    'bad_number',
    'unterminated_heredoc',
    'heredoc_missing_tag',
    'legacy_heredoc',
    'empty_program',
    'bad_handle',
    'continuation_not_alone',
  ];
  t.same([...new Set(cases.map((c) => c.code))].sort(), [...syntaxCodes].sort(), 'covers every syntax code');
  for (const c of cases) first(t, c.program, c.code, c.line, c.col);
});

t.test('the syntax error table in grammar.md is what the parser says', async (t) => {
  const md = readFileSync('grammar.md', 'utf8');
  const start = md.indexOf('## Syntax errors');
  const end = md.indexOf('\n## ', start + 1);
  const section = md.slice(start, end < 0 ? undefined : end);
  const rows = [...section.matchAll(/^\| `([a-z_]+)` \| `(".*?")` \| (\d+):(\d+) \| (.*) \|$/gm)];
  t.ok(rows.length >= 11, 'the table has rows');
  const seen = new Set<string>();
  for (const [, code, program, line, col, message] of rows) {
    seen.add(code!);
    const d = first(t, JSON.parse(program!) as string, code!, Number(line), Number(col));
    t.equal(d.message, message!.replace(/\\\|/g, '|'), `message of ${program}`);
  }
  for (const code of [
    'syntax_error',
    'unexpected_character',
    'unterminated_string',
    'bad_escape',
    'bad_number',
    'unterminated_heredoc',
    'heredoc_missing_tag',
    'legacy_heredoc',
    'empty_program',
    'bad_handle',
    'continuation_not_alone',
  ]) {
    t.ok(seen.has(code), `grammar.md documents ${code}`);
  }
});

t.test('the plan fixtures parse', async (t) => {
  const dir = 'fixtures/programs/plans';
  const { readdirSync } = await import('node:fs');
  for (const f of readdirSync(dir).filter((f) => f.endsWith('.svc'))) {
    t.same(parseProgram(readFileSync(`${dir}/${f}`, 'utf8')).diagnostics, [], f);
  }
});

t.test('diagnostics use known codes; a program comes only without them', async (t) => {
  for (const src of ['e1(', '', 'wait(o1)\ne1', '@', 'e1']) {
    const r = parseProgram(src);
    for (const d of r.diagnostics) t.ok(d.code in CODES, d.code);
    t.equal(r.program === undefined, r.diagnostics.length > 0, JSON.stringify(src));
  }
});

t.test('renderDiagnostic', async (t) => {
  t.equal(
    renderDiagnostic('e9(city="Berlin")', {
      code: 'unknown_symbol',
      message: '`e9` is not a symbol of this session',
      hint: 'did you mean `e1` (brewery:Brewery)?',
      span: { line: 1, col: 1, endLine: 1, endCol: 3 },
    }),
    'unknown_symbol at 1:1: `e9` is not a symbol of this session\n  1 | e9(city="Berlin")\n    | ^^\n  hint: did you mean `e1` (brewery:Brewery)?',
  );
  const src = 'e1\ne2(city="Berlin"';
  const d = parseProgram(src).diagnostics[0]!;
  t.equal(
    renderDiagnostic(src, d),
    [
      'syntax_error at 2:17: unexpected end of the program in the argument list',
      '  2 | e2(city="Berlin"',
      '    |                 ^',
      '  hint: expected `,` or `)` to close the argument list opened at 2:3',
    ].join('\n'),
    'a span past the end of the line',
  );
  t.equal(
    renderDiagnostic('a\n', { code: 'syntax_error', message: 'm', span: { line: 2, col: 1, endLine: 2, endCol: 1 } }),
    'syntax_error at 2:1: m\n  2 | \n    | ^',
    'an empty last line',
  );
  t.equal(
    renderDiagnostic('x', { code: 'syntax_error', message: 'm', span: { line: 9, col: 40 } }),
    'syntax_error at 9:40: m\n  9 | \n    | ^',
    'a line past the end',
  );
  t.equal(
    renderDiagnostic('\tab(c)\r\nx', {
      code: 'syntax_error',
      message: 'm',
      span: { line: 1, col: 4, endLine: 2, endCol: 2 },
    }),
    'syntax_error at 1:4: m\n  1 | \tab(c)\n    | \t  ^^^',
    'tabs kept in the padding, multi-line span to the end of the line',
  );
  t.equal(renderDiagnostic('x', { code: 'internal_error', message: 'm' }), 'internal_error: m');
  const long = Array.from({ length: 12 }, () => 'e1').join('\n') + '\ne1(';
  t.match(renderDiagnostic(long, parseProgram(long).diagnostics[0]!), /\n {2}13 \| e1\(\n {5}\| {4}\^/);
});
