/**
 * `planJson` (compiler/plan-json.ts) writes exactly `canonicalJson` of a plan's hashed part, so the
 * commit id is the one the terminal and the server always computed: for the golden plans, and for
 * plans bent off the usual shape (unknown and undefined keys, keys JavaScript orders by number,
 * `__proto__`, inherited keys, values of other types, strings that need escapes, odd numbers).
 */
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { canonicalJson } from '../../common/canonical.js';
import { compileProgram, type Plan } from '../../compiler/index.js';
import { planJson } from '../../compiler/plan-json.js';
import { fixtureRegistry, sessionSymbols } from '../_helpers/registry.js';

const registry = await fixtureRegistry();
const symbols = sessionSymbols(registry);
const DIR = join(import.meta.dirname, '..', '..', 'fixtures', 'programs', 'plans');
const plans: Plan[] = [];
for (const f of readdirSync(DIR).filter((x) => x.endsWith('.svc'))) {
  const r = compileProgram(readFileSync(join(DIR, f), 'utf8'), { registry, symbols });
  if (r.kind === 'plan') plans.push(r.plan);
}

const canonical = (p: Plan): string =>
  canonicalJson({ version: p.version, steps: p.steps, bind: p.bind, return: p.return });

/** A deep copy (JSON data only). */
const copy = <T>(x: T): T => JSON.parse(JSON.stringify(x)) as T;

type Bend = (p: Plan) => void;
/** An own enumerable key, even `__proto__` (which assignment would take as the prototype). */
const own = (o: object, key: string, value: unknown): void =>
  void Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
const first = (p: Plan) => p.steps[0] as unknown as Record<string, unknown>;
const args = (p: Plan) => p.steps[0]!.args as Record<string, unknown>;
const BENDS: Record<string, Bend> = {
  'an unknown step key': (p) => void (first(p).zzz = 1),
  'an unknown step key first in order': (p) => void (first(p).aaa = { b: 1, a: 2 }),
  'an undefined step key': (p) => void (first(p).limit = undefined),
  'an undefined unknown key': (p) => void (first(p).extra = undefined),
  'a numeric argument key': (p) => void (args(p)['10'] = { lit: 1 }),
  'a second numeric argument key': (p) => Object.assign(args(p), { '2': { lit: 2 }, '10': { lit: 3 } }),
  'an own __proto__ argument': (p) => own(args(p), '__proto__', { lit: 1 }),
  'an own __proto__ step key': (p) => own(first(p), '__proto__', 5),
  'an inherited step key': (p) => void (p.steps[0] = Object.assign(Object.create({ limit: 3 }), p.steps[0])),
  'a step without a prototype': (p) => void (p.steps[0] = Object.assign(Object.create(null), p.steps[0])),
  'an inherited argument key': (p) => void (args(p).x = Object.create({ lit: 1 })),
  'an undefined argument': (p) => void (args(p).y = undefined),
  'an argument of another shape': (p) => void (args(p).z = { lit: 1, ref: { step: 'n1', field: 'id' } }),
  'a ref with an extra key': (p) => void (args(p).r = { ref: { step: 'n1', field: 'id', x: 1 } }),
  'a ref of numbers': (p) => void (args(p).r = { ref: { step: 1, field: 2 } }),
  'an object literal': (p) => void (args(p).o = { lit: { z: [1, { b: 2, a: 1 }], a: null } }),
  'a list literal': (p) => void (args(p).l = { lit: ['b', 'a', 1.5, -0, true] }),
  'an odd number': (p) => void (args(p).n = { lit: Number.NaN }),
  'an undefined literal': (p) => void (args(p).u = { lit: undefined }),
  'strings to escape': (p) => void (args(p)['a"b\\c'] = { lit: 'line\nbreak "q" \u0001 \ud800 \u2028 é 😀' }),
  'an escaped step name': (p) => void (first(p).entity = 'Bre"wery\n'),
  'a number as a name': (p) => void (first(p).capability = 7),
  'an object as a name': (p) => void (first(p).api = { b: 1, a: 2 }),
  'a limit as a string': (p) => void (first(p).limit = '10'),
  'a fanout with an extra key': (p) => void (first(p).fanout = { from: 'n1', max: 5, x: 1 }),
  'a fanout of another type': (p) => void (first(p).fanout = { from: 1, max: '5' }),
  'a projection with a number': (p) => void (first(p).projection = ['a', 1]),
  'a projection with a hole': (p) => void (first(p).projection = ['a', , 'b']), // eslint-disable-line no-sparse-arrays
  'a sort and a via out of order': (p) =>
    Object.assign(first(p), { sort: { order: 'desc', field: 'x' }, via: { relation: 'r', from: 'n1' } }),
  'a function as a nest': (p) => void (first(p).nest = () => 1),
  'a function as a literal': (p) => void (args(p).f = { lit: () => 1 }),
  'a nest': (p) => void (first(p).nest = [{ relation: 'r', args: { b: { field: 'x' }, a: { lit: 1 } }, max: 3 }]),
  'args as a list': (p) => void (first(p).args = [{ lit: 1 }]),
  'no args': (p) => void delete first(p).args,
  'bindings out of order': (p) => void (p.bind = { z: 'n1', a: 'n1', '3': 'n1' }),
  'a binding of a number': (p) => void (p.bind = { a: 1 as unknown as string }),
  'a return of numbers': (p) => void (p.return = [1 as unknown as string]),
  'a step that is null': (p) => void p.steps.push(null as unknown as Plan['steps'][number]),
  'a version as text': (p) => void (p.version = '1' as unknown as 1),
  'an undefined version': (p) => void (p.version = undefined as unknown as 1),
  'a name and a summary (not hashed)': (p) => Object.assign(p, { name: 'x', summary: { text: 'y' } }),
};

t.test('a key on Object.prototype is not written', async (t) => {
  const p = copy(plans.find((x) => x.steps.length > 1)!);
  Object.defineProperty(Object.prototype, 'limit', { value: 5, enumerable: true, configurable: true });
  try {
    t.equal(planJson(p), canonical(p));
  } finally {
    delete (Object.prototype as { limit?: number }).limit;
  }
});

t.test('planJson is canonicalJson of the hashed part', async (t) => {
  t.ok(plans.length >= 15, `${plans.length} golden plans`);
  for (const p of plans) t.equal(planJson(p), canonical(p), 'a golden plan');
  for (const [what, bend] of Object.entries(BENDS)) {
    const p = copy(plans.find((x) => x.steps.length > 1)!);
    bend(p);
    t.equal(planJson(p), canonical(p), what);
  }
});
