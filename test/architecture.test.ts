/**
 * The architecture rules of .dependency-cruiser.cjs, run on the product code: stages import one
 * way (common <- pack <- compiler <- runtime <- server, cli), no import cycles, no product code
 * imports test helpers, the playground (web/) and the stages never import each other, and common,
 * pack and compiler do no file or network I/O outside their named edge modules. `npm run lint`
 * runs the same rules.
 */
import t from 'tap';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { cruise, type IForbiddenRuleType, type ICruiseResult } from 'dependency-cruiser';

const ROOT = join(import.meta.dirname, '..');
const config = createRequire(import.meta.url)(join(ROOT, '.dependency-cruiser.cjs')) as {
  forbidden: IForbiddenRuleType[];
  options: Record<string, unknown>;
};

t.test('the product code keeps the architecture rules', async (t) => {
  const cwd = process.cwd();
  process.chdir(ROOT);
  let result: ICruiseResult;
  try {
    const reported = await cruise(['common', 'pack', 'compiler', 'runtime', 'server', 'cli', 'web'], {
      ...config.options,
      validate: true,
      ruleSet: { forbidden: config.forbidden },
    });
    result = reported.output as ICruiseResult;
  } finally {
    process.chdir(cwd);
  }
  t.ok(result.summary.totalCruised > 100, `${result.summary.totalCruised} modules cruised`);
  t.ok(
    (result.summary.totalDependenciesCruised ?? 0) > 400,
    `${result.summary.totalDependenciesCruised} imports checked`,
  );
  const broken = result.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`);
  t.same(broken, [], 'no rule is broken');
  const names = config.forbidden.map((r) => r.name);
  for (const rule of [
    'no-circular',
    'no-test-helpers',
    'pure-core',
    'layer-common',
    'layer-compiler',
    'layer-runtime',
    'web-alone',
    'no-web-in-stages',
  ])
    t.ok(names.includes(rule), `the rule ${rule} is in force`);
});
