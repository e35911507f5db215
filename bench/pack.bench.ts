/**
 * Packing and loading a large catalog: 500 entities x 12 fields x 5 capabilities (with mappings
 * and one relation each), generated in memory. Phases:
 *   compileSource  YAML parse + authoring schema + normalize + semantic checks + cgs_hash
 *   writeArtifacts serialize (sorted keys) + write CGS and manifest to a fresh temp directory
 *   loadCatalogDir read + JSON decode + CGS schema + hash verify + semantic checks + registry
 *   teachabilityCheck  the compiler's check (one example program per capability) that `svc pack`
 *                  and `svc catalogs` add on top of compileSource and loadCatalogDir
 * Targets (medians): pack + load under 1000 ms, for the core phases and as the CLI runs them.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatError } from '../common/errors.js';
import { teachabilityCheck } from '../compiler/index.js';
import { compileSource, loadCatalogDir, writeArtifacts, type CompiledCatalog } from '../pack/index.js';
import { fmtMs, measure, timeMetric, type Benchmark, type BenchResult } from './harness.js';
import { syntheticCatalog } from './synthetic-catalog.js';

export const ENTITIES = 500;
export const TARGET_MS = 1000;

export const benchmark: Benchmark = {
  name: 'pack',
  title: `pack + load of a ${ENTITIES}-entity catalog (12 fields, 5 capabilities each)`,
  run,
};

async function run(): Promise<BenchResult> {
  const texts = syntheticCatalog({ entities: ENTITIES });
  const sourceBytes = texts.reduce((n, t) => n + Buffer.byteLength(t.text, 'utf8'), 0);

  let compiled: CompiledCatalog = { diagnostics: [] };
  const tCompile = await measure(() => {
    compiled = compileSource(texts);
  });
  const { cgs, cgs_hash: hash } = compiled;
  if (!cgs || !hash) {
    const shown = compiled.diagnostics.slice(0, 5).map(formatError).join('\n');
    throw new Error(`the synthetic catalog does not compile (${compiled.diagnostics.length} diagnostics):\n${shown}`);
  }

  let unteachable = 0;
  const tTeach = await measure(() => {
    unteachable = teachabilityCheck(cgs).length;
  });
  if (unteachable) throw new Error(`${unteachable} capabilities of the synthetic catalog are not teachable`);

  const root = await mkdtemp(join(tmpdir(), 'svc-bench-pack-'));
  try {
    const dirOf = (i: number) => join(root, `run-${i}`);
    let cgsFile = '';
    const tWrite = await measure(async (i) => {
      cgsFile = (await writeArtifacts(cgs, hash, dirOf(i))).cgsFile;
    });
    const cgsBytes = (await stat(cgsFile)).size;

    const dir = dirOf(0);
    let loaded = 0;
    const tLoad = await measure(async () => {
      const r = await loadCatalogDir(dir, { env: {} });
      if (r.problems.length) throw new Error(`loading failed: ${r.problems.map(formatError).join('\n')}`);
      loaded = r.registry.get(cgs.entry_id)?.cgs.capabilities.length ?? 0;
    });
    if (loaded !== cgs.capabilities.length)
      throw new Error(`loaded ${loaded} capabilities, packed ${cgs.capabilities.length}`);

    const total = tCompile.median + tWrite.median + tLoad.median;
    const totalCold = tCompile.cold + tWrite.cold + tLoad.cold;
    // svc pack runs the teachability check after compileSource, svc catalogs again after loading.
    const cli = total + 2 * tTeach.median;
    return {
      metrics: [
        { label: 'entities', value: cgs.entities.length, unit: 'count' },
        { label: 'capabilities', value: cgs.capabilities.length, unit: 'count' },
        { label: 'source (YAML)', value: sourceBytes, unit: 'bytes' },
        { label: 'CGS file', value: cgsBytes, unit: 'bytes' },
        timeMetric('compileSource', tCompile),
        timeMetric('writeArtifacts', tWrite),
        timeMetric('loadCatalogDir', tLoad),
        { label: 'pack', value: tCompile.median + tWrite.median, unit: 'ms', note: 'compileSource + writeArtifacts' },
        { label: 'pack + load', value: total, unit: 'ms', note: `sum of medians; cold ${fmtMs(totalCold)}` },
        timeMetric('teachabilityCheck', tTeach),
        {
          label: 'pack + load as the CLI',
          value: cli,
          unit: 'ms',
          note: 'pack + load + teachabilityCheck twice (svc pack, svc catalogs)',
        },
      ],
      checks: [
        { target: `pack + load under ${TARGET_MS} ms`, pass: total < TARGET_MS, actual: fmtMs(total) },
        { target: `pack + load as the CLI runs them under ${TARGET_MS} ms`, pass: cli < TARGET_MS, actual: fmtMs(cli) },
      ],
    };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
