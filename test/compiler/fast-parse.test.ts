/**
 * The fast path of parsing (compiler/fast-scan.ts + fast-parse.ts) against the Chevrotain path it
 * stands in for (`parseChevrotain`: lexer, statement splitter, parser, CST visitor). On programs
 * from the grammar (valid, and with characters dropped, doubled or swapped), token soups, random
 * characters and the fixture programs: a program the fast path takes is one the Chevrotain path
 * parses without a diagnostic, into the same AST (same keys in the same order, same spans); and
 * every program the Chevrotain path parses cleanly, continuations aside, is one the fast path takes.
 */
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fastProgram } from '../../compiler/fast-parse.js';
import { parseChevrotain } from '../../compiler/parse.js';
import { LineIndex } from '../../compiler/spans.js';

let seed = 0x2f6a91c3;
const rand = (n: number): number => {
  seed ^= seed << 13;
  seed >>>= 0;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  seed >>>= 0;
  return seed % n;
};
const pick = <T>(xs: readonly T[]): T => xs[rand(xs.length)]!;

/** Words of clean programs (nothing wrong in the words themselves); noisy programs add the rest. */
const CLEAN = {
  names: ['e1', 'm3', 'r1', 'b', 'city', 'trueish', 'nul', 'pg3', 'o2', '_x9', 'Z'],
  scalars: ['"Berlin"', '""', '"a\\nb \\u00e9 \\/ \\""', '42', '-7', '2.5', '1.5e-3', '0', 'true', 'false', 'null'],
  bodies: ['<<EOT\nsome text\nEOT', '<<A\n  x\n  A', '<<EOT\n\nEOT', '<<EOT\r\nline\r\nEOT'],
};
const NOISY = {
  names: [...CLEAN.names, 'page', 'wait', 'cancel'],
  scalars: [...CLEAN.scalars, '"bad\\q"', '"\\u12"', '12abc', '99999999999999999999', '1.0e999', '5.'],
  bodies: [...CLEAN.bodies, '<<EOT\nno end', '<<\n', '"open', '<<<A\nx\nA', '"""', "'x'"],
};
let words = CLEAN;
const heads = (): string[] => [...words.names, 'brewery:Beer', 'help-desk:Ticket', 'a:b', 'true:x'];

function value(depth: number): string {
  const r = rand(depth > 2 ? 4 : 8);
  if (r === 0) return pick(words.bodies);
  if (r === 1) return pick(words.names);
  if (r === 2) return `${pick(words.names)}.${pick(words.names)}`;
  if (r === 3 || r === 7) return pick(words.scalars);
  if (r === 4) return `[${seq(() => value(depth + 1), rand(4))}]`;
  return `{${seq(() => entry(depth + 1), rand(4))}}`;
}

function entry(depth: number): string {
  const r = rand(6);
  if (r === 0) return `${pick(words.names)}:${pick(['x', 'true', 'null', 'b.id', 'false', 'B'])}`;
  if (r === 1) return `${pick(['a-b', 'a_b'])}:${pick(words.names)}`;
  if (r === 2) return `"k ${rand(9)}": ${value(depth)}`;
  return `${pick(words.names)}: ${value(depth)}`;
}

/** `n` items joined by commas (sometimes across lines), sometimes with a trailing comma. */
function seq(item: () => string, n: number): string {
  const xs = Array.from({ length: n }, item);
  return xs.join(pick([',', ', ', ' ,\n ', ',\r\n', ', # note\n'])) + (n && rand(4) === 0 ? ',' : '');
}

function args(): string {
  return `(${seq(() => (rand(4) ? `${pick(words.names)}=${value(0)}` : value(0)), rand(4))})`;
}

function projection(depth: number): string {
  const item = () => {
    let s = pick(words.names);
    if (depth < 2 && rand(4) === 0) s += args();
    if (depth < 2 && rand(4) === 0) s += projection(depth + 1);
    return s;
  };
  return `[${seq(item, rand(8) ? 1 + rand(3) : 0)}]`;
}

function statement(): string {
  let s = pick(heads()) + (rand(3) ? args() : '');
  for (let i = rand(3); i > 0; i--) s += `.${pick(heads())}${rand(2) ? args() : ''}`;
  if (rand(2)) s += projection(0);
  return rand(3) === 0 ? `${pick(words === CLEAN ? words.names : [...words.names, 'true', 'null'])} = ${s}` : s;
}

/** Drop, double or swap a character or two, so the parser sees near misses. */
function mutate(s: string): string {
  const i = rand(s.length + 1);
  const r = rand(3);
  if (r === 0) return s.slice(0, i) + s.slice(i + 1);
  if (r === 1) return s.slice(0, i) + s.slice(i, i + 2) + s.slice(i);
  return s.slice(0, i) + s.slice(i + 1, i + 2) + s.slice(i, i + 1) + s.slice(i + 2);
}

const SOUP = [
  ...NOISY.names,
  ...NOISY.scalars,
  ...NOISY.bodies,
  'a:b',
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
];
const ALPHABET = 'abe1m2optrufnl_E:-=,.;()[]{}"\'\\<>#@ \t\n\r0123456789TOx\u00e9';

const DIR = join(import.meta.dirname, '..', '..', 'fixtures', 'programs');
const programs = ['plans', 'errors'].flatMap((d) =>
  readdirSync(join(DIR, d))
    .filter((f) => f.endsWith('.svc'))
    .map((f) => readFileSync(join(DIR, d, f), 'utf8')),
);
for (let i = 0; i < 6000; i++) {
  words = i % 3 === 0 ? NOISY : CLEAN;
  const text = Array.from({ length: 1 + rand(4) }, statement).join(pick(['\n', '\n\n', ';', ' ; ', '\r\n']));
  programs.push(i % 5 === 0 ? mutate(text) : text);
}
for (let i = 0; i < 1500; i++)
  programs.push(
    Array.from({ length: 1 + rand(10) }, () => pick(SOUP)).join(pick([' ', '', '\n', ' # note\n', '\r\n', '\t'])),
  );
for (let i = 0; i < 1000; i++) programs.push(Array.from({ length: 1 + rand(24) }, () => pick([...ALPHABET])).join(''));
const nested = (n: number) => `e1(x=${'['.repeat(n)}${']'.repeat(n)})`;
programs.push(
  ...['', '\n\n', '# only a comment', ';;', 'e1(city="x"; kind="y")', 'e1(city="x";)', '[e1;]', 'e1;;e2'],
  ...[nested(62), nested(63), nested(64), nested(65), `e1${'('.repeat(70)}`],
  ...[Array(1000).fill('e1').join('\n'), Array(1001).fill('e1').join('\n'), 'e1(x="""a""")', 'e1(x="""")'],
);

t.test('the fast path builds what the Chevrotain path builds, or leaves the program to it', async (t) => {
  let taken = 0;
  let left = 0;
  let mismatches = 0;
  for (const text of programs) {
    const fast = fastProgram(text, new LineIndex(text));
    const slow = parseChevrotain(text);
    const clean = slow.program !== undefined && slow.diagnostics.length === 0;
    if (fast) {
      taken++;
      if (!clean || JSON.stringify(fast) !== JSON.stringify(slow.program))
        if (mismatches++ < 5) t.fail('the fast path differs', { text, fast, slow });
    } else {
      left++;
      const continuation = slow.program?.statements.some((s) => s.kind !== 'binding' && s.kind !== 'expr');
      if (clean && !continuation && mismatches++ < 5) t.fail('a clean program was left to Chevrotain', { text });
    }
  }
  t.equal(mismatches, 0, 'no program differs');
  t.ok(taken > 1500 && left > 3000, `both paths are exercised (${taken} fast, ${left} left)`);
});
