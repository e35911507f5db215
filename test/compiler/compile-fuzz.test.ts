/**
 * Property test of the whole compiler (parse + resolve + plan): 12,000 random and mutated
 * programs. Nothing may throw; every diagnostic has a known code and a span inside the text;
 * every plan satisfies the plan schema and refers only to earlier steps.
 */
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CODES } from '../../common/errors.js';
import { compileProgram, validatePlanShape } from '../../compiler/index.js';
import { fixtureRegistry, sessionSymbols } from '../_helpers/registry.js';

const registry = await fixtureRegistry();
const symbols = sessionSymbols(registry);
const DIR = join(import.meta.dirname, '..', '..', 'fixtures', 'programs');
const corpus = ['plans', 'errors'].flatMap((d) =>
  readdirSync(join(DIR, d))
    .filter((f) => f.endsWith('.svc'))
    .map((f) => readFileSync(join(DIR, d, f), 'utf8')),
);

let seed = 0x5eed1234;
const rand = (n: number) => {
  seed ^= seed << 13;
  seed >>>= 0;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  seed >>>= 0;
  return seed % n;
};
const pick = <T>(xs: readonly T[]): T => xs[rand(xs.length)]!;
const VOCAB = [
  'e1',
  'e2',
  'e3',
  'e4',
  'm1',
  'm2',
  'm5',
  'm7',
  'r1',
  'r2',
  'r3',
  'p3',
  's0',
  'b',
  'x',
  'brewery:Beer',
  'helpdesk:Ticket',
  'nope:X',
  '(',
  ')',
  '[',
  ']',
  '{',
  '}',
  '=',
  ',',
  '.',
  ';',
  '\n',
  ' ',
  '"Berlin"',
  '"b-1"',
  '7',
  '-3',
  '2.5',
  '1e99',
  'true',
  'null',
  '<<EOT\nx\nEOT',
  '<<',
  '"""',
  'city',
  'name',
  'id',
  'abv',
  'limit',
  'q',
  'style',
  'beers',
  'page',
  'wait',
  'cancel',
  'pg1',
  'o1',
  '#c',
  '\\',
  '"\\q"',
  '"\\u00e9"',
  '\t',
  '\r\n',
];
const CHARS = '()[]{}=,.;:"<>#\\\n abcdeimprs0123456789_-';

function mutate(p: string): string {
  const ops = 1 + rand(4);
  for (let i = 0; i < ops; i++) {
    const at = rand(p.length + 1);
    switch (rand(6)) {
      case 0:
        p = p.slice(0, at) + pick(CHARS.split('')) + p.slice(at);
        break;
      case 1:
        p = p.slice(0, at) + p.slice(at + 1 + rand(3));
        break;
      case 2:
        p = p.slice(0, at) + pick(VOCAB) + p.slice(at);
        break;
      case 3:
        p = p.slice(0, at);
        break;
      case 4: {
        const b = rand(p.length + 1);
        p = p + '\n' + p.slice(Math.min(at, b), Math.max(at, b));
        break;
      }
      default:
        p = p.slice(0, at) + pick(CHARS.split('')) + p.slice(at + 1);
    }
  }
  return p;
}

function soup(): string {
  let s = '';
  const n = 1 + rand(14);
  for (let i = 0; i < n; i++) s += pick(VOCAB);
  return s;
}

t.test('12,000 random and mutated programs', async (t) => {
  let plans = 0,
    errors = 0,
    continuations = 0,
    failures = 0;
  for (let i = 0; i < 12_000; i++) {
    const program = i % 3 === 0 ? soup() : mutate(pick(corpus));
    let r;
    try {
      r = compileProgram(program, { registry, symbols });
    } catch (e) {
      failures++;
      t.fail(`threw on ${JSON.stringify(program)}: ${(e as Error).message}`);
      continue;
    }
    const lines = program.split('\n');
    if (r.kind === 'error') {
      errors++;
      for (const d of r.diagnostics) {
        const ok =
          d.code in CODES &&
          d.code !== 'internal_error' &&
          typeof d.message === 'string' &&
          d.message.length > 0 &&
          !!d.span &&
          d.span.line >= 1 &&
          d.span.line <= lines.length &&
          d.span.col >= 1 &&
          d.span.col <= lines[d.span.line - 1]!.length + 1;
        if (!ok) {
          failures++;
          t.fail(`bad diagnostic ${JSON.stringify(d)} for ${JSON.stringify(program)}`);
        }
      }
    } else if (r.kind === 'plan') {
      plans++;
      const shape = validatePlanShape(r.plan);
      const ids = r.plan.steps.map((s) => s.id);
      const ordered = r.plan.steps.every((s, i) =>
        s.depends_on.every((d) => ids.indexOf(d) >= 0 && ids.indexOf(d) < i),
      );
      if (shape.length || !ordered || !/^[0-9a-f]{64}$/.test(r.commit_id)) {
        failures++;
        t.fail(`bad plan for ${JSON.stringify(program)}: ${JSON.stringify(shape)}`);
      }
    } else continuations++;
    if (failures > 20) break;
  }
  t.equal(failures, 0, 'no exception, every diagnostic well-formed, every plan valid');
  t.ok(plans > 100 && errors > 1000, `a useful mix: ${plans} plans, ${errors} errors, ${continuations} continuations`);
});
