/**
 * The svc side of the `imported` benchmark: import an OpenAPI document as `svc import openapi`
 * does (teachability check included), pack the emitted files (compileSource + teachability check +
 * writeArtifacts, as `svc pack`), load them (loadCatalogDir with the teachability check, as
 * `svc serve`), then render teaching tables from the loaded registry and count them in o200k tokens.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { formatError } from '../common/errors.js';
import { renderWave, teachingRules, waveRows } from '../compiler/teaching.js';
import { SymbolTable } from '../compiler/symbols.js';
import { teachabilityCheck } from '../compiler/teachable.js';
import {
  compileSource,
  importOpenApi,
  loadCatalogDir,
  readOpenApi,
  writeArtifacts,
  type ImportResult,
  type Registry,
} from '../pack/index.js';
import { median } from './harness.js';

export const texts = (files: Record<string, string>) =>
  Object.entries(files)
    .filter(([n]) => n.endsWith('.yaml'))
    .map(([file, text]) => ({ file, text }));

/** The check the CLI passes to importOpenApi: compileSource's diagnostics with the teachability check. */
export const packCheck = (files: Record<string, string>) =>
  compileSource(texts(files), [teachabilityCheck]).diagnostics;

export interface Imported {
  api: string;
  result: ImportResult;
  registry: Registry;
  cgsBytes: number;
  /** Milliseconds per phase of this run. */
  phases: { read: number; import: number; pack: number; load: number };
}

/** One import + pack + load of `file`, the artifacts written into `dir`. */
export async function importPackLoad(file: string, dir: string, entryId?: string): Promise<Imported> {
  const t0 = performance.now();
  const doc = await readOpenApi(file);
  const t1 = performance.now();
  const result = importOpenApi(doc, packCheck, entryId ? { entryId } : {});
  const t2 = performance.now();
  const packed = compileSource(texts(result.files), [teachabilityCheck]);
  if (!packed.cgs || !packed.cgs_hash)
    throw new Error(
      `the import of ${file} does not pack: ${packed.diagnostics.slice(0, 3).map(formatError).join('\n')}`,
    );
  const { cgsFile } = await writeArtifacts(packed.cgs, packed.cgs_hash, dir);
  const t3 = performance.now();
  const loaded = await loadCatalogDir(dir, { env: {}, extraChecks: [teachabilityCheck] });
  const t4 = performance.now();
  if (loaded.problems.length) throw new Error(`loading ${file} failed: ${loaded.problems.map(formatError).join('\n')}`);
  return {
    api: packed.cgs.entry_id,
    result,
    registry: loaded.registry,
    cgsBytes: (await stat(cgsFile)).size,
    phases: { read: t1 - t0, import: t2 - t1, pack: t3 - t2, load: t4 - t3 },
  };
}

export interface Timed {
  /** The last run's catalog. */
  last: Imported;
  /** Median per phase and of the totals; `runs` measured runs after one warm-up. */
  median: Imported['phases'] & { total: number };
  cold: number;
  runs: number;
}

/** `runs` measured runs of importPackLoad after one warm-up (each into a fresh directory). */
export async function timeImport(file: string, runs: number, entryId?: string): Promise<Timed> {
  const root = await mkdtemp(join(tmpdir(), 'svc-bench-imported-'));
  try {
    const all: Imported[] = [];
    for (let i = 0; i <= runs; i++) all.push(await importPackLoad(file, join(root, `run-${i}`), entryId));
    const measured = all.slice(1);
    const total = (p: Imported['phases']) => p.read + p.import + p.pack + p.load;
    const med = (f: (p: Imported['phases']) => number) => median(measured.map((x) => f(x.phases)));
    return {
      last: all[all.length - 1]!,
      median: {
        read: med((p) => p.read),
        import: med((p) => p.import),
        pack: med((p) => p.pack),
        load: med((p) => p.load),
        total: med(total),
      },
      cold: total(all[0]!.phases),
      runs,
    };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

export interface Counted {
  tokens: number;
  chars: number;
  rows: number;
}

const count = (s: string): Counted => ({
  tokens: countTokens(s),
  chars: s.length,
  rows: s.split('\n').length - 1,
});

export interface Teaching {
  rules: Counted;
  /** The entity with the most capabilities (first in catalog order on a tie). */
  chosen: { entity: string; capabilities: number; wave: Counted };
  /** The first wave of `extra` (an entity a target names), when given. */
  named?: { entity: string; capabilities: number; wave: Counted };
  /** The largest single-entity first wave of the catalog. */
  largestWave: { entity: string; wave: Counted };
  /** Every entity exposed in one wave. */
  table: Counted;
  /** Rules + whole table, as svc_context's first answer. */
  firstAnswer: Counted;
  /** The costliest rows of the whole table: symbol, form start, tokens. */
  costliest: Array<{ sym: string; form: string; tokens: number }>;
}

/** The teaching figures of catalog `api` of `registry`. */
export function teaching(registry: Registry, api: string, named?: string): Teaching {
  const entities = registry.get(api)!.cgs.entities.map((e) => e.name);
  const capCount = (e: string) => registry.capabilitiesOf(api, e).length;
  const firstWave = (entity: string): Counted => {
    const t = new SymbolTable();
    return count(renderWave(t.expose(registry, [{ api, entity }]), registry, t));
  };
  const chosenName = entities.reduce((best, e) => (capCount(e) > capCount(best) ? e : best), entities[0]!);
  let largestWave = { entity: '', wave: { tokens: -1, chars: 0, rows: 0 } };
  for (const e of entities) {
    const w = firstWave(e);
    if (w.tokens > largestWave.wave.tokens) largestWave = { entity: e, wave: w };
  }
  const symbols = new SymbolTable();
  const wave = symbols.expose(
    registry,
    entities.map((entity) => ({ api, entity })),
  );
  const table = renderWave(wave, registry, symbols);
  const rules = teachingRules();
  const costliest = waveRows(wave, registry, symbols)
    .map((r) => ({ sym: r.sym, form: r.form.slice(0, 40), tokens: countTokens(`${r.form}\t${r.meaning}`) }))
    .sort((a, b) => b.tokens - a.tokens)
    .slice(0, 3);
  return {
    rules: count(rules),
    chosen: { entity: chosenName, capabilities: capCount(chosenName), wave: firstWave(chosenName) },
    ...(named && entities.includes(named)
      ? { named: { entity: named, capabilities: capCount(named), wave: firstWave(named) } }
      : {}),
    largestWave,
    table: count(table),
    firstAnswer: count(`${rules}\n${table}`),
    costliest,
  };
}

/** The OpenAPI `METHOD path` a capability of the import came from (a get of the entity first). */
export function sourcePath(result: ImportResult, entity: string): string | undefined {
  const caps = result.catalog.capabilities.filter((c) => c.entity === entity);
  const cap = caps.find((c) => c.kind === 'get') ?? caps[0];
  return cap ? /^\S+ (\S+)/.exec(cap.origin)?.[1] : undefined;
}
