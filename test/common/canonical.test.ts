import t from 'tap';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { canonicalHash, canonicalJson, sha256Hex, sortKeysDeep } from '../../common/canonical.js';

t.test('canonicalJson sorts keys at every depth and keeps array order', async (t) => {
  t.equal(canonicalJson({ 2: 'b', 10: 'a', x: 1 }), '{"10":"a","2":"b","x":1}', 'integer-like keys by code unit too');
  t.equal(canonicalJson([undefined, () => 1]), '[null,null]', 'what JSON cannot write is null in a list');
  t.equal(canonicalJson({ d: new Date(0) }), '{"d":"1970-01-01T00:00:00.000Z"}', 'toJSON is honoured');
  t.equal(canonicalJson({ n: NaN, i: -Infinity }), '{"i":null,"n":null}');
  const loop: Record<string, unknown> = {};
  loop.self = loop;
  t.throws(() => canonicalJson(loop), TypeError, 'a cycle throws, as JSON.stringify does');
  t.equal(canonicalJson({ b: 1, a: { d: [3, 1, 2], c: null } }), '{"a":{"c":null,"d":[3,1,2]},"b":1}');
  t.equal(canonicalJson({ b: 1, a: 2 }), canonicalJson({ a: 2, b: 1 }), 'insertion order does not matter');
  t.equal(canonicalJson([{ y: 1, x: 2 }]), '[{"x":2,"y":1}]');
  t.equal(canonicalJson({ a: undefined, b: 'x' }), '{"b":"x"}', 'undefined members are dropped');
  t.equal(canonicalJson('é'), '"é"', 'no escaping of non-ASCII');
  t.equal(canonicalJson({ Z: 1, a: 2, _: 3 }), '{"Z":1,"_":3,"a":2}', 'code-unit order, not locale order');
});

t.test('sha256Hex matches known vectors', async (t) => {
  t.equal(sha256Hex(''), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  t.equal(sha256Hex('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  t.equal(sha256Hex(new TextEncoder().encode('abc')), sha256Hex('abc'), 'bytes and strings agree');
  t.equal(
    sha256Hex('é'),
    createHash('sha256').update(Buffer.from('é', 'utf8')).digest('hex'),
    'strings are hashed as UTF-8',
  );
});

t.test('canonicalHash is sha256 of the canonical JSON', async (t) => {
  const v = { b: [1, { d: true, c: 'x' }], a: 1.5 };
  t.equal(canonicalHash(v), sha256Hex('{"a":1.5,"b":[1,{"c":"x","d":true}]}'));
  t.equal(canonicalHash({ a: 1, b: 2 }), canonicalHash({ b: 2, a: 1 }));
  t.not(canonicalHash({ a: 1 }), canonicalHash({ a: '1' }));
});

t.test('sortKeysDeep returns a sorted deep copy and leaves the input alone', async (t) => {
  const input = { b: { z: 1, y: [{ q: 1, p: 2 }] }, a: undefined, c: null };
  const out = sortKeysDeep(input);
  t.same(Object.keys(out), ['b', 'c'], 'undefined members are dropped');
  t.same(Object.keys(out.b), ['y', 'z']);
  t.same(Object.keys(out.b.y[0]!), ['p', 'q']);
  t.equal(JSON.stringify(out), '{"b":{"y":[{"p":2,"q":1}],"z":1},"c":null}');
  t.same(Object.keys(input), ['b', 'a', 'c'], 'input not reordered');
  t.not(out.b, input.b, 'a copy, not the same object');
  t.equal(sortKeysDeep(7), 7);
  t.equal(sortKeysDeep('s'), 's');
  t.equal(sortKeysDeep(null), null);
});

t.test('canonicalJson is byte-identical to fast-json-stable-stringify (property test)', async (t) => {
  const { default: stable } = await import('fast-json-stable-stringify');
  let seed = 7;
  const rnd = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const str = () => ['', 'a', 'B', 'é', '\u2028', '"q"', 'x\\y', '\n', '🍺', 'Z_1'][rnd(10)]! + String(rnd(100));
  // Integer-like keys, which JavaScript objects order numerically before the others.
  const key = () =>
    rnd(2) === 0 ? str() : ['0', '2', '10', '01', '-1', '4294967294', '4294967295', '1.5', String(rnd(1000))][rnd(9)]!;
  const value = (depth: number): unknown => {
    switch (depth > 3 ? rnd(5) : rnd(7)) {
      case 0:
        return null;
      case 1:
        return rnd(2) === 0;
      case 2:
        return [0, -1, 1.5, 1e21, -0.000001, 123456789012, 2 ** 53 - 1][rnd(7)];
      case 3:
      case 4:
        return str();
      case 5:
        return Array.from({ length: rnd(4) }, () => value(depth + 1));
      default:
        return Object.fromEntries(Array.from({ length: rnd(6) }, () => [key(), value(depth + 1)]));
    }
  };
  let same = 0;
  for (let i = 0; i < 3000; i++) {
    const v = value(0);
    if (canonicalJson(v) === stable(v)) same++;
    else t.fail(`differs for ${JSON.stringify(v)}`);
  }
  t.equal(same, 3000);
  const { readFileSync, readdirSync } = await import('node:fs');
  for (const f of readdirSync('fixtures/packed').filter((x) => x.endsWith('.cgs.json'))) {
    const cgs = JSON.parse(readFileSync(`fixtures/packed/${f}`, 'utf8')) as unknown;
    t.equal(canonicalJson(cgs), stable(cgs), `${f} hashes the same both ways`);
  }
});

t.test(
  'fast-json-stable-stringify is a development dependency only: the reference, never the implementation',
  async (t) => {
    const root = join(import.meta.dirname, '..', '..');
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Record<
      string,
      Record<string, string> | undefined
    >;
    t.notOk(pkg.dependencies?.['fast-json-stable-stringify'], 'not a runtime dependency');
    t.ok(pkg.devDependencies?.['fast-json-stable-stringify'], 'a devDependency (this test uses it)');
    for (const dir of ['common', 'pack', 'compiler', 'runtime', 'server', 'cli']) {
      for (const f of readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' }).filter((x) =>
        x.endsWith('.ts'),
      )) {
        t.notMatch(
          readFileSync(join(root, dir, f), 'utf8'),
          /from ['"]fast-json-stable-stringify['"]|import\(['"]fast-json-stable-stringify['"]\)/,
          `${dir}/${f} does not import it`,
        );
      }
    }
  },
);
