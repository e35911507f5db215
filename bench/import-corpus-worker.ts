/**
 * The child process of the `import-corpus` benchmark (forked by corpus-pool.ts): imports one
 * document per message exactly as `svc import openapi` does (readOpenApi, then importOpenApi with
 * the pack check of the CLI, teachability check included) and packs the emitted YAML as
 * `svc pack` does (compileSource, the teachability check, writeArtifacts), then answers with
 * what became of the document. A pathological document can only hang or crash this process,
 * which the pool kills or replaces; the benchmark goes on.
 */
import { performance } from 'node:perf_hooks';
import { SvcFailure } from '../common/errors.js';
import { teachabilityCheck } from '../compiler/teachable.js';
import { compileSource, importOpenApi, readOpenApi, writeArtifacts } from '../pack/index.js';
import { packCheck, texts } from './imported-catalog.js';

/** Import and pack `file`; write the packed artifacts into `out`. */
export interface DocJob {
  type: 'doc';
  id: number;
  file: string;
  out: string;
}

/** How `svc pack` saw the taught forms: each capability's example program (teachable.ts). */
export interface Forms {
  checked: number;
  failed: number;
  /** Up to 3 of the failures: `capability: message`. */
  examples: string[];
}

export interface DocOutcome {
  ok: boolean;
  /** The error code of a failure (the first diagnostic's), `exception` for a thrown non-svc error. */
  code?: string;
  /** The stage that failed and its first diagnostic, one line. */
  message?: string;
  entryId?: string;
  /** Milliseconds: read (readOpenApi), import (importOpenApi), pack (compile, teach, write). */
  times: { read: number; import: number; pack: number };
  /** The `METHOD /path (operationId)` origin of every capability of the catalog. */
  kept: string[];
  skipped: Array<{ what: string; reason: string }>;
  forms?: Forms;
}

export interface DocAnswer {
  type: 'result';
  id: number;
  outcome: DocOutcome;
}

const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim().slice(0, 300);

/** The code and one-line message of whatever a stage threw. */
function failure(stage: string, e: unknown): { code: string; message: string } {
  if (e instanceof SvcFailure && e.errors[0])
    return { code: e.errors[0].code, message: `${stage}: ${oneLine(e.errors[0].message)}` };
  const err = e as Error;
  const at = err?.stack?.split('\n')[1]?.trim() ?? '';
  return {
    code: 'exception',
    message: `${stage}: ${oneLine(`${err?.name ?? 'Error'}: ${err?.message ?? String(e)} ${at}`)}`,
  };
}

/** The capability names whose example program does not compile, from the teachability check. */
function formsOf(cgs: Parameters<typeof teachabilityCheck>[0]): Forms {
  const problems = teachabilityCheck(cgs);
  const failed = new Map<number, string>();
  for (const p of problems) {
    const i = Number(/^\/capabilities\/(\d+)/.exec(p.at)?.[1] ?? -1);
    if (!failed.has(i)) failed.set(i, `${cgs.capabilities[i]?.name ?? p.at}: ${oneLine(p.error.message)}`);
  }
  return { checked: cgs.capabilities.length, failed: failed.size, examples: [...failed.values()].slice(0, 3) };
}

export async function importAndPack(job: DocJob): Promise<DocOutcome> {
  const times = { read: 0, import: 0, pack: 0 };
  const t0 = performance.now();
  let doc;
  try {
    doc = await readOpenApi(job.file);
  } catch (e) {
    return { ok: false, ...failure('read', e), times, kept: [], skipped: [] };
  } finally {
    times.read = performance.now() - t0;
  }
  const t1 = performance.now();
  let result;
  try {
    result = importOpenApi(doc, packCheck, {});
  } catch (e) {
    return { ok: false, ...failure('import', e), times, kept: [], skipped: [] };
  } finally {
    times.import = performance.now() - t1;
  }
  const kept = result.catalog.capabilities.map((c) => c.origin);
  const skipped = result.log.skipped.map((s) => ({ what: s.what, reason: s.reason }));
  const base = { entryId: result.catalog.entry_id, times, kept, skipped };
  const t2 = performance.now();
  try {
    const packed = compileSource(texts(result.files));
    if (!packed.cgs || !packed.cgs_hash) {
      const d = packed.diagnostics[0];
      return { ok: false, code: d?.code ?? 'pack_failed', message: `pack: ${oneLine(d?.message ?? '')}`, ...base };
    }
    const forms = formsOf(packed.cgs);
    if (forms.failed > 0)
      return { ok: false, code: 'not_teachable', message: `pack: ${forms.examples[0]}`, forms, ...base };
    await writeArtifacts(packed.cgs, packed.cgs_hash, job.out);
    return { ok: true, forms, ...base };
  } catch (e) {
    return { ok: false, ...failure('pack', e), ...base };
  } finally {
    times.pack = performance.now() - t2;
  }
}

if (process.send) {
  process.on('disconnect', () => process.exit(0));
  process.on('message', (job: DocJob) => {
    void importAndPack(job).then((outcome) => {
      const answer: DocAnswer = { type: 'result', id: job.id, outcome };
      process.send!(answer);
    });
  });
  process.send({ type: 'ready' });
}
