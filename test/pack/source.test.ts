/**
 * The YAML dialect of catalog sources: one parser (`yaml`, YAML 1.2 core schema) for every read,
 * duplicate keys refused, aliases allowed in moderation, alias bombs refused in bounded time, huge
 * flat files fine. Every refusal is a diagnostic with a stable code, a position and a hint.
 */
import t, { type Test } from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SvcError } from '../../common/errors.js';
import { compileSource, type Cgs, type SourceText } from '../../pack/index.js';
import { parseSource } from '../../pack/source.js';
import { growth } from '../_helpers/growth.js';

const ROOT = join(import.meta.dirname, '..', '..');

/** A small clean catalog; `version` and the parameter default are written as given (raw YAML). */
function shop(opts: { version?: string; defaultValue?: string; extra?: string } = {}): SourceText[] {
  return [
    {
      file: 'catalog.yaml',
      text: `catalog:
  entry_id: shop
  version: ${opts.version ?? '1'}
  label: Shop
  description: A shop.
  backend: {url: "https://api.example.com"}
`,
    },
    {
      file: 'domain.yaml',
      text: `entities:
  Product:
    description: A product.
    fields:
      id: {type: string, description: The id}
      name: {type: string, description: The name}
capabilities:
  listProducts:
    kind: query
    entity: Product
    description: Products.
    params:
      name: {type: string, description: Name filter, default: ${opts.defaultValue ?? 'pen'}}
mappings:
  listProducts: GET /products
${opts.extra ?? ''}`,
    },
  ];
}

function clean(texts: SourceText[]): Cgs {
  const r = compileSource(texts);
  if (!r.cgs) throw new Error('expected a clean compile, got ' + JSON.stringify(r.diagnostics, null, 2));
  return r.cgs;
}

const where = (d: SvcError) => `${d.span?.file}:${d.span?.line}:${d.span?.col}`;

/** Every diagnostic teaches: a stable code, a position, a message and a hint. */
function teaches(t: Test, ds: SvcError[]): void {
  for (const d of ds) {
    t.ok(d.span && d.span.line >= 1 && d.span.col >= 1, `${d.code} has a position`);
    t.ok(d.message.trim().length > 0, `${d.code} has a message`);
    t.ok((d.hint ?? '').trim().length > 0, `${d.code} has a hint`);
  }
}

t.test('integers follow YAML 1.2 core: 0o7 and 0x1f are ints, 0b1 is a string', async (t) => {
  t.equal(clean(shop({ version: '0o7' })).version, 7, '0o7 is octal 7');
  t.equal(clean(shop({ version: '0x1f' })).version, 31, '0x1f is hex 31');
  const r = compileSource(shop({ version: '0b1' }));
  t.equal(r.cgs, undefined, '0b1 is not a number in YAML 1.2');
  t.match(r.diagnostics, [{ code: 'bad_version', message: /"0b1"/, span: { file: 'catalog.yaml', line: 3 } }]);
  t.equal(r.diagnostics.length, 1);
  const data = parseSource({ file: 'x.yaml', text: 'a: 0b1\nb: 0o7\nc: 0x1f\nd: 0777\ne: 1_000\nf: +12\ng: 1e3\n' })
    .source?.data;
  t.same(data, { a: '0b1', b: 7, c: 31, d: 777, e: '1_000', f: 12, g: 1000 });
});

t.test('yes/no/on/off are strings; true/false/null in their core spellings', async (t) => {
  const data = parseSource({
    file: 'x.yaml',
    text: 'a: yes\nb: no\nc: on\nd: off\ne: y\nf: n\ng: true\nh: False\ni: TRUE\nj: ~\nk: null\nl: Null\nm: 2001-12-14\n',
  }).source?.data;
  t.same(data, {
    a: 'yes',
    b: 'no',
    c: 'on',
    d: 'off',
    e: 'y',
    f: 'n',
    g: true,
    h: false,
    i: true,
    j: null,
    k: null,
    l: null,
    m: '2001-12-14',
  });
  const cgs = clean(shop({ defaultValue: 'no' }));
  t.equal(cgs.capabilities[0]!.params[0]!.default, 'no', 'a string parameter may default to "no"');
});

t.test('a %YAML directive other than 1.2 is refused', async (t) => {
  const r = compileSource([{ ...shop()[0]!, text: '%YAML 1.1\n---\n' + shop()[0]!.text }, shop()[1]!]);
  t.equal(r.cgs, undefined, 'YAML 1.1 would read yes as true and 0b1 as 1: not this dialect');
  t.match(r.diagnostics, [
    { code: 'yaml_syntax', message: /YAML 1\.1/, hint: /YAML 1\.2/, span: { file: 'catalog.yaml', line: 1, col: 1 } },
  ]);
  teaches(t, r.diagnostics);
  t.ok(clean([{ ...shop()[0]!, text: '%YAML 1.2\n---\n' + shop()[0]!.text }, shop()[1]!]), '%YAML 1.2 is fine');
});

t.test('tags outside the core schema are refused, core tags work', async (t) => {
  const data = parseSource({ file: 'x.yaml', text: 'a: !!str 5\nb: !!int "7"\nc: !!bool "true"\n' }).source?.data;
  t.same(data, { a: '5', b: 7, c: true });
  for (const [text, tag] of [
    ['a: !!binary aGVsbG8=\n', '!!binary'],
    ['a: !!set {x, y}\n', '!!set'],
    ['a: !thing x\n', '!thing'],
    ['a: !!timestamp 2001-12-14\n', '!!timestamp'],
  ] as const) {
    const r = parseSource({ file: 'x.yaml', text });
    t.equal(r.source, undefined, `${tag} is refused`);
    t.match(r.errors, [
      { code: 'yaml_syntax', message: new RegExp(`tag \`${tag}\``), span: { file: 'x.yaml', line: 1, col: 4 } },
    ]);
    teaches(t, r.errors);
  }
});

t.test('a key written twice in one map is refused, naming the key and both lines', async (t) => {
  const r = compileSource(shop({ extra: '  listProducts: GET /items\n' }));
  t.equal(r.cgs, undefined);
  t.match(r.diagnostics, [
    {
      code: 'duplicate_name',
      message: 'key `listProducts` is declared twice in one map (first on line 15)',
      span: { file: 'domain.yaml', line: 16, col: 3 },
      hint: /keep one/,
    },
  ]);
  t.equal(r.diagnostics.length, 1);
  // Keys that YAML tells apart but a JSON object cannot: 1 and "1", null and ~.
  for (const [text, key, line] of [
    ['a:\n  1: x\n  "1": y\n', '1', 3],
    ['a: {~: x, null: y}\n', 'null', 1],
    ['a: {b: 1}\na: {b: 2}\n', 'a', 2],
  ] as const) {
    const p = parseSource({ file: 'x.yaml', text });
    t.equal(p.source, undefined, `${JSON.stringify(text)} is refused`);
    t.match(p.errors, [
      { code: 'duplicate_name', message: new RegExp(`key \`${key}\` is declared twice`), span: { line } },
    ]);
    teaches(t, p.errors);
  }
  t.same(
    parseSource({ file: 'x.yaml', text: 'a: {b: 1}\nc: {b: 2}\n' }).errors,
    [],
    'the same key in two maps is fine',
  );
});

t.test('a syntax error and a duplicate key in one file are both reported', async (t) => {
  const p = parseSource({ file: 'x.yaml', text: 'a: 1\na: 2\nb: [1\n' });
  t.same(p.errors.map((e) => e.code).sort(), ['duplicate_name', 'yaml_syntax']);
  teaches(t, p.errors);
});

t.test('collection keys are refused (a JSON object has string keys)', async (t) => {
  const p = parseSource({ file: 'x.yaml', text: 'a: 1\n? [x, y]\n: 2\n' });
  t.equal(p.source, undefined);
  t.match(p.errors, [{ code: 'yaml_syntax', message: /key/, span: { line: 2, col: 3 } }]);
  teaches(t, p.errors);
});

t.test('anchors and aliases in moderation give the CGS of the written-out source', async (t) => {
  const fields = Array.from(
    { length: 40 },
    (_, i) => `  F${i}:\n    description: Thing ${i}.\n    fields: *common\n`,
  ).join('');
  const aliased: SourceText[] = [
    shop()[0]!,
    {
      file: 'domain.yaml',
      text: `entities:\n  Base:\n    description: The base.\n    fields: &common\n      id: {type: string, description: The id}\n      tags: &tags {type: array, items: string, description: Tags}\n      more: *tags\n${fields}`,
    },
  ];
  const written: SourceText[] = [
    shop()[0]!,
    {
      file: 'domain.yaml',
      text: `entities:\n  Base:\n    description: The base.\n    fields:\n      id: {type: string, description: The id}\n      tags: {type: array, items: string, description: Tags}\n      more: {type: array, items: string, description: Tags}\n${fields.replaceAll('*common', '{id: {type: string, description: The id}, tags: {type: array, items: string, description: Tags}, more: {type: array, items: string, description: Tags}}')}`,
    },
  ];
  const a = compileSource(aliased);
  const w = compileSource(written);
  t.same(a.diagnostics, [], 'aliases are fine');
  t.equal(a.cgs_hash, w.cgs_hash, 'same CGS as the written-out source');
  t.equal(a.cgs?.entities.length, 41);
});

t.test('an alias bomb ("billion laughs") is refused in bounded time, at the alias', async (t) => {
  const levels = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]'];
  for (let i = 1; i < 10; i++) {
    const prev = String.fromCharCode(96 + i);
    levels.push(
      `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(10)
        .fill('*' + prev)
        .join(', ')}]`,
    );
  }
  const text = `mappings:\n  listProducts:\n    method: POST\n    path: /x\n    body:\n${levels.map((l) => '      ' + l).join('\n')}\n`;
  // Ten levels of ten aliases stand for 10^10 nodes: expanded, this would never finish (tap's timeout).
  const before = process.memoryUsage().heapUsed;
  const r = compileSource([shop()[0]!, { file: 'bomb.yaml', text }]);
  t.ok(process.memoryUsage().heapUsed - before < 200 * 2 ** 20, 'without expanding it in memory');
  t.equal(r.cgs, undefined);
  const bomb = r.diagnostics.filter((d) => d.span?.file === 'bomb.yaml');
  t.match(bomb, [{ code: 'yaml_syntax', message: /aliases/, hint: /alias/ }]);
  t.equal(bomb.length, 1, 'one diagnostic for the bomb');
  t.ok(bomb[0]!.span!.line > 6, `at an alias of a nested level (${where(bomb[0]!)})`);
  teaches(t, bomb);
});

t.test('flat aliases count too: every alias adds the size of its anchor', async (t) => {
  // 2,000 aliases of a 100-item list: about 200,000 nodes, over the limit of 100,000.
  const list = `a: &a [${Array(100).fill('x').join(', ')}]\n`;
  const p = parseSource({ file: 'x.yaml', text: list + `b: [${Array(2000).fill('*a').join(', ')}]\n` });
  t.equal(p.source, undefined);
  t.match(p.errors, [
    { code: 'yaml_syntax', message: /aliases expand this file by more than 100000 nodes/, span: { line: 2 } },
  ]);
  t.same(
    parseSource({ file: 'x.yaml', text: list + `b: [${Array(200).fill('*a').join(', ')}]\n` }).errors,
    [],
    '200 aliases of it (about 20,000 nodes) are fine',
  );
});

t.test('an alias inside the value its anchor marks is refused (the data would contain itself)', async (t) => {
  for (const text of ['a: &a [1, *a]\n', 'x: &a 1\ny: &a {b: *a}\n']) {
    const p = parseSource({ file: 'x.yaml', text });
    t.equal(p.source, undefined, JSON.stringify(text));
    t.match(p.errors, [{ code: 'yaml_syntax', message: /alias `\*a` is inside the value its anchor marks/ }]);
    teaches(t, p.errors);
  }
  t.same(
    parseSource({ file: 'x.yaml', text: 'x: &a 1\ny: &a {b: 2}\nz: *a\n' }).source?.data,
    { x: 1, y: { b: 2 }, z: { b: 2 } },
    'a redefined anchor: the latest wins',
  );
});

t.test('an undefined alias is a syntax error at the alias', async (t) => {
  const p = parseSource({ file: 'x.yaml', text: 'a: 1\nb: *nope\n' });
  t.match(p.errors, [{ code: 'yaml_syntax', span: { line: 2 } }]);
  teaches(t, p.errors);
});

t.test('a huge flat file is fine, and a duplicate at its end costs no more than the file', async (t) => {
  const n = 30_000;
  const fields = Array.from({ length: n }, (_, i) => `      f${i}: {type: integer, description: Field ${i}}`).join(
    '\n',
  );
  const text = `entities:\n  Wide:\n    description: Very wide.\n    fields:\n      id: string\n${fields}\n`;
  const ok = compileSource([shop()[0]!, { file: 'wide.yaml', text }]);
  t.same(ok.diagnostics, [], `${n} fields in one map`);
  t.equal(ok.cgs?.entities[0]!.fields.length, n + 1);
  const bad = compileSource([shop()[0]!, { file: 'wide.yaml', text: text + `      f${n - 1}: string\n` }]);
  t.match(bad.diagnostics, [
    {
      code: 'duplicate_name',
      message: `key \`f${n - 1}\` is declared twice in one map (first on line ${n + 5})`,
      span: { file: 'wide.yaml', line: n + 6 },
    },
  ]);
  // A check that scans the map for every key is quadratic: 4x the keys would cost about 16x.
  const wideWithDup = (k: number) =>
    `entities:\n  Wide:\n    description: Very wide.\n    fields:\n      id: string\n${Array.from({ length: k }, (_, i) => `      f${i}: integer`).join('\n')}\n      f0: string\n`;
  const g = await growth(
    () => parseSource({ file: 'w.yaml', text: wideWithDup(2_000) }),
    () => parseSource({ file: 'w.yaml', text: wideWithDup(8_000) }),
  );
  t.ok(g.ratio < 9, `4x the keys costs ${g.ratio.toFixed(1)}x (linear is about 4, quadratic 16)`);
});

t.test("the data is what yaml's own toJS gives, for every bundled and generated source file", async (t) => {
  const { parse } = await import('yaml');
  const { syntheticCatalog } = await import('../../bench/synthetic-catalog.js');
  const dirs = ['catalogs', 'invalid'].flatMap((d) =>
    readdirSync(join(ROOT, 'fixtures', d)).map((c) => join(ROOT, 'fixtures', d, c)),
  );
  const texts: SourceText[] = [...syntheticCatalog({ entities: 3 })];
  for (const dir of dirs)
    for (const f of readdirSync(dir).filter((x) => /\.ya?ml$/.test(x)))
      texts.push({ file: f, text: readFileSync(join(dir, f), 'utf8') });
  t.ok(texts.length > 40, `${texts.length} files`);
  for (const x of texts) {
    const p = parseSource(x);
    if (p.source) t.same(p.source.data, parse(x.text, { schema: 'core' }) ?? {}, x.file);
  }
  const aliased = 'a: &a {b: [1, 2]}\nc: *a\nd: !!str 5\ne:\nf: [~, "x"]\n';
  t.same(parseSource({ file: 'x.yaml', text: aliased }).source?.data, parse(aliased), 'aliases, tags, empty values');
});

t.test('a `__proto__` key is an own property, not a prototype', async (t) => {
  const data = parseSource({ file: 'x.yaml', text: '__proto__: {polluted: true}\nb: 2\n' }).source?.data;
  t.ok(data && Object.hasOwn(data, '__proto__'), 'own property');
  t.equal(Object.getPrototypeOf(data), Object.prototype, 'prototype untouched');
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'nothing polluted');
  t.same(Object.keys(data ?? {}), ['__proto__', 'b']);
});

t.test('one YAML parser: js-yaml is neither imported nor a dependency', async (t) => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<
    string,
    Record<string, string> | undefined
  >;
  for (const section of ['dependencies', 'devDependencies']) {
    t.notOk(pkg[section]?.['js-yaml'], `no js-yaml in ${section}`);
    t.notOk(pkg[section]?.['@types/js-yaml'], `no @types/js-yaml in ${section}`);
  }
  t.ok(pkg.dependencies?.yaml, 'yaml is the parser');
  for (const dir of ['common', 'pack', 'compiler', 'runtime', 'server', 'cli', 'bench']) {
    for (const f of readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' }).filter((x) =>
      x.endsWith('.ts'),
    )) {
      t.notMatch(
        readFileSync(join(ROOT, dir, f), 'utf8'),
        /from ['"]js-yaml['"]/,
        `${dir}/${f} does not import js-yaml`,
      );
    }
  }
});

t.test('the parse runs with a plain copy of the environment and gives the real one back', async (t) => {
  const { withPlainEnv } = await import('../../pack/parse-yaml.js');
  const env = process.env;
  const seen = withPlainEnv(() => ({ same: process.env === env, path: process.env.PATH }));
  t.equal(seen.same, false, 'a copy while it runs');
  t.equal(seen.path, env.PATH, 'with the same variables');
  t.equal(process.env, env, 'the real environment is back');
  t.throws(() =>
    withPlainEnv(() => {
      throw new Error('boom');
    }),
  );
  t.equal(process.env, env, 'also after a throw');
  parseSource({ file: 'x.yaml', text: 'a: 1\n' });
  t.equal(process.env, env, 'after a parse');
});

t.test('an unquoted comma inside {...} cuts a value: the hint says to quote it', async (t) => {
  const [cat, domain] = shop();
  const text = domain!.text.replace(
    '{type: string, description: The name}',
    '{type: string, description: The name, such as Pen}',
  );
  const r = compileSource([cat!, { ...domain!, text }]);
  t.equal(r.cgs, undefined);
  t.match(r.diagnostics, [
    {
      code: 'schema_violation',
      message: 'unknown key `such as Pen`',
      hint: /rest of a value cut at a comma.*quote the value \("\.\.\., such as Pen"\) or write the mapping in block style/,
      span: { file: 'domain.yaml', line: 6 },
    },
  ]);
  // A misspelt key keeps its did-you-mean hint.
  const typo = domain!.text.replace('{type: string, description: The name}', '{type: string, descripton: The name}');
  const r2 = compileSource([cat!, { ...domain!, text: typo }]);
  t.match(r2.diagnostics[0]?.hint, /did you mean `description`/);
});
