/**
 * The architecture, checked by dependency-cruiser (`npm run lint`, and test/architecture.test.ts):
 * stages import one way (common <- pack <- compiler <- runtime <- server, cli), no import cycles,
 * no product code imports test helpers, the playground (web/) and the stages never import each
 * other, and the pure stages do no file or network I/O outside their named edge modules.
 */
const STAGES = ['common', 'pack', 'compiler', 'runtime', 'server', 'cli'];

/** A stage may import itself and the stages before it. */
const layerRules = STAGES.map((stage, i) => ({
  name: `layer-${stage}`,
  comment: `${stage}/ may import only ${STAGES.slice(0, i + 1).join(', ')}`,
  severity: 'error',
  from: { path: `^${stage}/` },
  to: { path: `^(${STAGES.filter((_, j) => j > i).join('|') || 'none'})/` },
}));

module.exports = {
  forbidden: [
    ...layerRules,
    { name: 'no-circular', severity: 'error', comment: 'no import cycles', from: {}, to: { circular: true } },
    { name: 'no-test-helpers', severity: 'error', comment: 'product code never imports tests', from: { path: `^(${STAGES.join('|')})/` }, to: { path: '^test/' } },
    {
      name: 'web-alone',
      severity: 'error',
      comment: 'the playground (web/) runs in a browser and reaches svc over HTTP only: it imports no stage, and no stage imports it',
      from: { path: '^web/' },
      to: { path: `^(${STAGES.join('|')}|test)/` },
    },
    {
      name: 'no-web-in-stages',
      severity: 'error',
      comment: 'product code never imports the playground',
      from: { path: `^(${STAGES.join('|')})/` },
      to: { path: '^web/' },
    },
    {
      name: 'pure-core',
      severity: 'error',
      comment: 'common, pack and compiler do no file or network I/O outside their named edge modules',
      from: { path: '^(common|pack|compiler)/', pathNot: '^pack/(read-source|read-regular|write-artifacts|load|import/read-openapi|import/write-import)\\.ts$' },
      to: { path: '^(fs|fs/promises|http|https|net|node:fs|node:fs/promises|node:http|node:https|node:net)$', dependencyTypes: ['core'] },
    },
  ],
  options: {
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules|\\.scratch)/' },
  },
};
