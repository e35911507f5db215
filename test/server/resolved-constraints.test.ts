/**
 * A client-compiled plan is held to the catalog's constraints, `many` and `at_least_one` like a
 * program is (server/execute/resolved-plan.ts): a list for a `many` parameter passes, a tampered
 * literal off the scale, a list for a one-value parameter or an update stripped of its fields is
 * refused with `bad_arguments` naming the rule.
 */
import t from 'tap';
import { SvcFailure } from '../../common/errors.js';
import { compileProgram, type Plan } from '../../compiler/index.js';
import { checkResolvedPlan } from '../../server/execute/resolved-plan.js';
import { fixtureRegistry, sessionSymbols } from '../_helpers/registry.js';

const registry = await fixtureRegistry();
const symbols = sessionSymbols(registry); // e1 Brewery, e2 Beer, e3 Review, e4 helpdesk:Ticket

function plan(program: string): Plan {
  const c = compileProgram(program, { registry, symbols });
  if (c.kind !== 'plan') throw new Error(JSON.stringify(c.diagnostics));
  return c.plan;
}

function problems(p: Plan): string[] {
  try {
    checkResolvedPlan(p, registry);
    return [];
  } catch (e) {
    if (e instanceof SvcFailure) return e.errors.map((x) => `${x.code}: ${x.message}`);
    throw e;
  }
}

t.test('lists for many parameters and values inside the constraints pass', async (t) => {
  t.same(problems(plan('e2(style=["IPA", "Stout"])')), []);
  t.same(problems(plan('e4(status=["open", "pending"])')), []);
  t.same(problems(plan('brewery:createReview(beerId=1, rating=5, author="ann")')), []);
});

t.test('tampered literals and a stripped update are refused, naming the rule', async (t) => {
  const review = plan('brewery:createReview(beerId=1, rating=5, author="ann")');
  review.steps[0]!.args.rating = { lit: 9 };
  t.same(problems(review), ['bad_arguments: step n1: `rating` must be at most 5']);

  const list = plan('e1(city="Berlin")');
  list.steps[0]!.args.city = { lit: ['Berlin', 'Bonn'] };
  t.same(problems(list), ['bad_arguments: step n1: `city` does not fit its type string']);

  const empty = plan('e2(style="IPA")');
  empty.steps[0]!.args.style = { lit: [] };
  t.same(problems(empty), ['bad_arguments: step n1: `style` does not fit its type string']);

  const m = symbols.capabilitySymbol('helpdesk', 'updateTicket')!.sym;
  const update = plan(`e4("t-1").${m}(status="closed")`);
  delete update.steps[0]!.args.status;
  t.same(problems(update), [
    'bad_arguments: step n1: `updateTicket` needs at least one of subject, body, status, priority',
  ]);
});
