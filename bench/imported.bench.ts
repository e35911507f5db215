/**
 * `imported`: what the teaching table of a catalog imported from a real OpenAPI document costs in
 * o200k tokens, next to the usual OpenAPI→MCP proxy (`@ivotoby/openapi-mcp-server`) over the same
 * document, for every document of fixtures/openapi (and the GitHub REST description, fetched on
 * demand from npm `@octokit/openapi` into a temp directory, never a dependency).
 *
 * Per document: import (as `svc import openapi`, teachability check included), pack, load
 * (imported-catalog.ts); then the rules preamble, the first wave of the entity with the most
 * capabilities, the whole table (every entity in one wave) and the whole first answer (rules +
 * table), all from the loaded registry; then the proxy's tools/list as sent (default mode) and
 * its dynamic mode's list-api-endpoints answer (imported-proxy.ts). Targets: whole table ≤ 20 %
 * and first answer ≤ 30 % of the proxy's tools/list; for GitHub the issue's absolute targets and
 * `discover` over ten plain-English intents (imported-discover.ts).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { packageRoot } from '../cli/package-root.js';
import { fmtMs, type Benchmark, type BenchResult } from './harness.js';
import { sourcePath, teaching, timeImport, type Counted, type Teaching, type Timed } from './imported-catalog.js';
import { discoverFigures, intentLine } from './imported-discover.js';
import { proxyFigures, type ProxyFigures } from './imported-proxy.js';

export const benchmark: Benchmark = {
  name: 'imported',
  title: 'teaching tokens of catalogs imported from real OpenAPI documents vs an OpenAPI→MCP proxy',
  run,
};

const OPENAPI = join(packageRoot(), 'fixtures', 'openapi');
const SPECS = ['petstore.json', 'gitea.json', 'demo-vendor.yaml'];
/** Measured import + pack + load runs per document (after one warm-up). */
const RUNS = 5;

/** The GitHub REST description: a pinned release, so the counts stay comparable between runs. */
const OCTOKIT = '@octokit/openapi@23.0.2';
const GITHUB_FILE = 'package/generated/api.github.com.json';
const GITHUB = {
  runs: 3,
  entity: 'Issue',
  tableMax: 77_000,
  waveMax: 1_000,
  totalMs: 5_000,
  loadMs: 1_000,
  discoverMin: 8,
};

interface Spec {
  name: string;
  file: string;
  entryId?: string;
  runs: number;
  named?: string;
}

const pct = (part: number, whole: number) => Math.round((1000 * part) / whole) / 10;
const n = (x: number) => x.toLocaleString('en');
const counted = (c: Counted) => `${n(c.rows)} rows, ${n(c.chars)} chars`;

/** The metrics and checks of one document. */
async function measureSpec(spec: Spec, out: BenchResult): Promise<{ t: Teaching; timed: Timed }> {
  const timed = await timeImport(spec.file, spec.runs, spec.entryId);
  const { api, result, registry, cgsBytes } = timed.last;
  const t = teaching(registry, api, spec.named);
  const cgs = registry.get(api)!.cgs;
  const relations = cgs.entities.reduce((k, e) => k + e.relations.length, 0);
  const ops = /(\d+) operations/.exec(result.files['import-report.md'] ?? '')?.[1] ?? '?';
  const m = timed.median;
  const p = `${spec.name}:`;
  const wave = t.chosen;
  out.metrics.push(
    {
      label: `${p} catalog`,
      value: cgs.capabilities.length,
      unit: 'count',
      note: `${api}: ${cgs.entities.length} entities, ${cgs.capabilities.length} capabilities, ${relations} relations; ${result.log.skipped.length} skipped of ${ops} operations`,
    },
    { label: `${p} CGS`, value: cgsBytes, unit: 'bytes' },
    {
      label: `${p} import+pack+load`,
      value: m.total,
      unit: 'ms',
      note: `medians of ${timed.runs}: read ${fmtMs(m.read)}, import ${fmtMs(m.import)}, pack ${fmtMs(m.pack)}, load ${fmtMs(m.load)}; cold ${fmtMs(timed.cold)}`,
    },
    {
      label: `${p} load`,
      value: m.load,
      unit: 'ms',
      note: 'loadCatalogDir with the teachability check, as svc serve',
    },
    {
      label: `${p} wave ${wave.entity}`,
      value: wave.wave.tokens,
      unit: 'count',
      note: `first wave of the entity with the most capabilities (${wave.capabilities}): ${counted(wave.wave)}; largest one-entity wave: ${t.largestWave.entity} ${n(t.largestWave.wave.tokens)}`,
    },
    ...(t.named
      ? [
          {
            label: `${p} wave ${t.named.entity}`,
            value: t.named.wave.tokens,
            unit: 'count' as const,
            note: `${t.named.capabilities} capabilities: ${counted(t.named.wave)}`,
          },
        ]
      : []),
    {
      label: `${p} whole table`,
      value: t.table.tokens,
      unit: 'count',
      note: `every entity in one wave: ${counted(t.table)}; costliest rows ${t.costliest.map((r) => `${r.sym} ${r.tokens}`).join(', ')}`,
    },
    { label: `${p} first answer`, value: t.firstAnswer.tokens, unit: 'count', note: 'rules + whole table' },
  );
  let proxy: ProxyFigures | undefined;
  try {
    proxy = await proxyFigures(spec.file, sourcePath(result, wave.entity));
  } catch (e) {
    const msg = (e as Error).message.replace(/\s+/g, ' ').slice(0, 300);
    out.metrics.push({ label: `${p} proxy did not start`, value: 0, unit: 'count', note: msg });
  }
  if (proxy) {
    const schema = proxy.schema ? `; get-api-endpoint-schema ${proxy.schema.path} ${n(proxy.schema.tokens)}` : '';
    const share = (x: number) => pct(x, proxy.tools);
    out.metrics.push(
      {
        label: `${p} proxy tools/list`,
        value: proxy.tools,
        unit: 'count',
        note: `${proxy.toolCount} tools, as sent; ${n(proxy.toolsPlain)} without the proxy's own fields; up in ${fmtMs(proxy.startMs)}${proxy.rejected ? `; ${proxy.rejected}` : ''}`,
      },
      {
        label: `${p} proxy dynamic`,
        value: proxy.listEndpoints,
        unit: 'count',
        note: `list-api-endpoints answer; its tools/list ${n(proxy.dynamicTools)}${schema}`,
      },
      {
        label: `${p} table / tools %`,
        value: share(t.table.tokens),
        unit: 'count',
        note: `whole table ÷ proxy tools/list; ÷ tools without the proxy's fields: ${pct(t.table.tokens, proxy.toolsPlain)} %`,
      },
      {
        label: `${p} answer / tools %`,
        value: share(t.firstAnswer.tokens),
        unit: 'count',
        note: `first answer ÷ proxy tools/list; ÷ tools without the proxy's fields: ${pct(t.firstAnswer.tokens, proxy.toolsPlain)} %`,
      },
      {
        label: `${p} wave / tools %`,
        value: share(wave.wave.tokens),
        unit: 'count',
        note: `first wave of ${wave.entity} ÷ proxy tools/list${t.named ? `; of ${t.named.entity}: ${share(t.named.wave.tokens)} %` : ''}`,
      },
    );
    out.checks.push(
      {
        target: `${spec.name}: whole table ≤ 20 % of the proxy's tools/list`,
        pass: t.table.tokens <= 0.2 * proxy.tools,
        actual: `${n(t.table.tokens)} / ${n(proxy.tools)} = ${share(t.table.tokens)} %`,
      },
      {
        target: `${spec.name}: first answer (rules + table) ≤ 30 % of the proxy's tools/list`,
        pass: t.firstAnswer.tokens <= 0.3 * proxy.tools,
        actual: `${n(t.firstAnswer.tokens)} / ${n(proxy.tools)} = ${share(t.firstAnswer.tokens)} %`,
      },
    );
  }
  return { t, timed };
}

const run0 = promisify(execFile);

/** The GitHub document: from an installed @octokit/openapi, else `npm pack` into a temp directory. */
async function githubDocument(): Promise<string> {
  const dir = join(tmpdir(), 'svc-bench-octokit-openapi');
  const file = join(dir, GITHUB_FILE);
  if (existsSync(file)) return file;
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const { stdout } = await run0(npm, ['pack', OCTOKIT, '--silent', '--pack-destination', dir], {
    cwd: dir,
    timeout: 300_000,
  });
  const tgz = stdout.trim().split('\n').pop()!;
  await run0('tar', ['xzf', join(dir, tgz), '-C', dir, GITHUB_FILE], { timeout: 120_000 });
  await rm(join(dir, tgz), { force: true });
  if (!existsSync(file)) throw new Error(`${tgz} holds no ${GITHUB_FILE}`);
  return file;
}

async function github(out: BenchResult): Promise<void> {
  let file: string;
  try {
    file = await githubDocument();
  } catch (e) {
    const msg = (e as Error).message.replace(/\s+/g, ' ').slice(0, 300);
    out.metrics.push({ label: 'github: skipped', value: 0, unit: 'count', note: `${OCTOKIT} not fetched: ${msg}` });
    return;
  }
  const spec = { name: 'github', file, entryId: 'github', runs: GITHUB.runs, named: GITHUB.entity };
  const { t, timed } = await measureSpec(spec, out);
  const wave = t.named?.wave.tokens ?? NaN;
  const found = discoverFigures(timed.last.registry, timed.last.api);
  found.results.forEach((r, i) =>
    out.metrics.push({ label: `github: intent ${i + 1}`, value: r.rank, unit: 'count', note: intentLine(r) }),
  );
  out.metrics.push({
    label: 'github: discover hits',
    value: found.at3,
    unit: 'count',
    note: `of ${found.results.length} intents, an answering entity within discover's first 3 rows; first row: ${found.at1}`,
  });
  out.checks.push(
    {
      target: `github: whole table ≤ ${n(GITHUB.tableMax)} tokens`,
      pass: t.table.tokens <= GITHUB.tableMax,
      actual: n(t.table.tokens),
    },
    {
      target: `github: first wave of github:${GITHUB.entity} < ${n(GITHUB.waveMax)} tokens`,
      pass: wave < GITHUB.waveMax,
      actual: t.named ? n(wave) : `no entity ${GITHUB.entity}`,
    },
    {
      target: `github: discover finds the entity of ≥ ${GITHUB.discoverMin} of ${found.results.length} intents within its first 3 rows`,
      pass: found.at3 >= GITHUB.discoverMin,
      actual: `${found.at3}/${found.results.length} (first row: ${found.at1}/${found.results.length})`,
    },
    {
      target: `github: import + pack + load < ${GITHUB.totalMs / 1000} s`,
      pass: timed.median.total < GITHUB.totalMs,
      actual: fmtMs(timed.median.total),
    },
    {
      target: `github: load < ${GITHUB.loadMs / 1000} s`,
      pass: timed.median.load < GITHUB.loadMs,
      actual: fmtMs(timed.median.load),
    },
  );
}

async function run(): Promise<BenchResult> {
  const out: BenchResult = { metrics: [], checks: [] };
  let rules: Counted | undefined;
  for (const name of SPECS) {
    const spec = { name: name.replace(/\.\w+$/, ''), file: join(OPENAPI, name), runs: RUNS };
    rules = (await measureSpec(spec, out)).t.rules;
  }
  await github(out);
  if (rules)
    out.metrics.unshift({
      label: 'rules preamble',
      value: rules.tokens,
      unit: 'count',
      note: `teachingRules(), once per session, in every first answer: ${n(rules.chars)} chars`,
    });
  return out;
}
