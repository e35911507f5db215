/**
 * The import truth check (docs/import.md "The truth check"): each OpenAPI document is imported as
 * `svc import openapi` does (bench/imported-catalog.ts importPackLoad), a Prism mock of the same
 * document starts on a free port (bench/prism-mock.ts), and a real svc server in this process,
 * pointed at the mock, runs one program per get, list (query), create and update capability: the
 * example program the teachability check compiles, written from the teaching table's form with
 * example values for the required parameters. Writes are dry-run first and run with their `pcN`.
 *
 * A capability passes when every request svc sent for it passed Prism's request validation (no
 * `sl-violations` of severity Error), the run answered 200, and for a read the first row is
 * filled: its id field non-null (when the entity declares it among its fields) and at least half of
 * the entity's declared fields non-null (a value answer, `response.value`: the row holds its field,
 * null when the document declares no content). Prism's static mock fills every property of a
 * response from the document's examples or its schema, so an empty or sparse row is svc's
 * reading, not the mock's.
 *
 * CLI (development): `node dist/bench/import-truth.js [--json] <doc...>`.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Capability, CapabilityKind, Cgs, Entity } from '../pack/cgs.js';
import { loadCatalogDir, readOpenApi } from '../pack/index.js';
import { isObj, type Schema } from '../pack/import/schema.js';
import { SymbolTable } from '../compiler/symbols.js';
import { renderWave } from '../compiler/teaching.js';
import { teachabilityCheck, teachableExample } from '../compiler/teachable.js';
import { MemoryArtifactStore } from '../runtime/artifacts/index.js';
import { SvcApp } from '../server/app.js';
import { listen } from '../server/serve.js';
import { importPackLoad } from './imported-catalog.js';
import { startPrismMock, type PrismMock, type RecordedCall } from './prism-mock.js';

/** The kinds checked: get, list (query), create, update. */
export const TRUTH_KINDS = ['get', 'query', 'create', 'update'] as const satisfies readonly CapabilityKind[];
export type TruthKind = (typeof TRUTH_KINDS)[number];

/** Why a capability failed, so the figures say what to fix. */
export const TRUTH_CATEGORIES = [
  /** No example program could be written (the teachability check should have refused the catalog). */
  'not_written',
  /** The program did not compile (400 with diagnostics). */
  'compile_error',
  /** A request svc sent failed Prism's request validation: the violation's message. */
  'request_invalid',
  /** The mock answered an HTTP error status without a request violation. */
  'vendor_status',
  /**
   * The operation declares no 2xx response, so the mock can only answer an error status: the
   * document's gap, not the program's (counted as a failure all the same).
   */
  'no_success_declared',
  /** The mock could not answer a valid request (Prism's `Schema too complex`): no verdict on svc. */
  'mock_error',
  /**
   * The document's path key carries a fragment (`/#X-Amz-Target=Svc.Op`, AWS JSON protocols):
   * svc sends the path without it, as HTTP does (the operation rides in a header), and Prism,
   * which routes path keys literally, finds no route: no verdict on svc.
   */
  'mock_unroutable',
  /**
   * svc refused or could not fill the answer, and Prism found that answer against the document's
   * own response schema (an example of another shape): the document's gap, no verdict on svc.
   */
  'example_mismatch',
  /** svc refused the answer's shape (`response_shape_mismatch`, `vendor_bad_response`). */
  'response_shape_mismatch',
  /** A read answered 200 but its first row is missing or not filled (see the header). */
  'not_filled',
  /** The run or the vendor request ran out of time. */
  'timeout',
  /** The run failed otherwise (the error code). */
  'run_error',
] as const;
export type TruthCategory = (typeof TRUTH_CATEGORIES)[number];

/** Failures that say nothing about svc: the mock could not answer, or only with an error. */
export const UNJUDGED: ReadonlySet<TruthCategory> = new Set([
  'mock_error',
  'mock_unroutable',
  'no_success_declared',
  'example_mismatch',
]);

export interface CapabilityTruth {
  capability: string;
  kind: TruthKind;
  entity: string;
  program?: string;
  ok: boolean;
  category?: TruthCategory;
  /** What failed: the violation, the error code and message, the fields left empty. */
  detail?: string;
  /** Requests svc sent to the mock for this program. */
  calls: number;
}

export interface DocumentTruth {
  file: string;
  bytes: number;
  api?: string;
  /** Set when the document was not checked: it did not import, or Prism or the session did not start. */
  error?: { stage: 'import' | 'mock' | 'session'; message: string };
  capabilities: CapabilityTruth[];
  ms: number;
}

export interface Tally {
  total: number;
  ok: number;
}

export interface TruthReport {
  documents: DocumentTruth[];
  /**
   * Capabilities of the checked documents, by kind and over all; `judged` leaves out those the
   * mock could give no verdict on (UNJUDGED: Prism's own failures, operations declaring no 2xx).
   */
  totals: Record<TruthKind, Tally> & { all: Tally & { pct: number }; judged: Tally & { pct: number } };
  /** Failures per category, most frequent first, with up to 3 examples (`api capability: detail`). */
  categories: Array<{ category: TruthCategory; count: number; examples: string[] }>;
  /** Documents not checked, by stage. */
  unchecked: { import: number; mock: number; session: number };
}

export interface TruthOptions {
  /** Timeout of one vendor request in ms (default 10 000); a run's deadline is twice it. */
  requestTimeoutMs?: number;
  /** Most ms to wait for Prism to start (default 60 000). */
  prismStartMs?: number;
  /** A line per document as it is done (the CLI prints them). */
  progress?: (line: string) => void;
}

/** Import, mock and run every document in turn; one Prism process at a time. */
export async function truthCheck(documents: string[], opts: TruthOptions = {}): Promise<TruthReport> {
  const done: DocumentTruth[] = [];
  for (const file of documents) {
    const d = await checkDocument(file, opts);
    done.push(d);
    const ok = d.capabilities.filter((c) => c.ok).length;
    opts.progress?.(
      `${file}: ${d.error ? `not checked (${d.error.stage}: ${d.error.message.split('\n')[0]!.slice(0, 160)})` : `${ok}/${d.capabilities.length} ok`} in ${Math.round(d.ms)} ms`,
    );
  }
  return summarize(done);
}

/** The report of `documents` (pure). */
export function summarize(documents: DocumentTruth[]): TruthReport {
  const tally = (): Tally => ({ total: 0, ok: 0 });
  const totals = {
    get: tally(),
    query: tally(),
    create: tally(),
    update: tally(),
    all: { ...tally(), pct: 0 },
    judged: { ...tally(), pct: 0 },
  };
  const byCategory = new Map<TruthCategory, { count: number; examples: string[] }>();
  for (const d of documents)
    for (const c of d.capabilities) {
      const judged = c.ok || !c.category || !UNJUDGED.has(c.category);
      for (const t of [totals[c.kind], totals.all, ...(judged ? [totals.judged] : [])]) {
        t.total++;
        if (c.ok) t.ok++;
      }
      if (c.ok || !c.category) continue;
      const entry = byCategory.get(c.category) ?? { count: 0, examples: [] };
      entry.count++;
      if (entry.examples.length < 3) entry.examples.push(`${d.api} ${c.capability}: ${c.detail ?? ''}`);
      byCategory.set(c.category, entry);
    }
  for (const t of [totals.all, totals.judged]) t.pct = t.total ? Math.round((1000 * t.ok) / t.total) / 10 : 0;
  const unchecked = { import: 0, mock: 0, session: 0 };
  for (const d of documents) if (d.error) unchecked[d.error.stage]++;
  return {
    documents,
    totals,
    categories: [...byCategory]
      .map(([category, v]) => ({ category, ...v }))
      .sort((a, b) => b.count - a.count || a.category.localeCompare(b.category)),
    unchecked,
  };
}

async function checkDocument(file: string, opts: TruthOptions): Promise<DocumentTruth> {
  const t0 = performance.now();
  const bytes = (await stat(file)).size;
  const dir = await mkdtemp(join(tmpdir(), 'svc-import-truth-'));
  const out = (rest: Partial<DocumentTruth>): DocumentTruth => ({
    file,
    bytes,
    capabilities: [],
    ...rest,
    ms: performance.now() - t0,
  });
  try {
    let api: string;
    let facts: DocumentFacts;
    try {
      const imported = await importPackLoad(file, dir);
      api = imported.api;
      const caps = imported.result.catalog.capabilities;
      facts = { noSuccess: withoutSuccess(await readOpenApi(file), caps), fragment: withFragment(caps) };
    } catch (e) {
      return out({ error: { stage: 'import', message: messageOf(e) } });
    }
    let mock: PrismMock;
    try {
      mock = await startPrismMock(file, opts.prismStartMs === undefined ? {} : { startMs: opts.prismStartMs });
    } catch (e) {
      return out({ api, error: { stage: 'mock', message: messageOf(e) } });
    }
    try {
      return out({ api, ...(await runAgainst(dir, api, mock, facts, opts)) });
    } finally {
      await mock.stop();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** Load the catalog pointed at the mock, serve it, and run each checked capability's program. */
async function runAgainst(
  dir: string,
  api: string,
  mock: PrismMock,
  facts: DocumentFacts,
  opts: TruthOptions,
): Promise<Pick<DocumentTruth, 'capabilities' | 'error'>> {
  const loaded = await loadCatalogDir(dir, {
    env: {},
    extraChecks: [teachabilityCheck],
    backendOverrides: { [api]: mock.url },
  });
  const registry = loaded.registry;
  const cgs = registry.get(api)!.cgs;
  const requestTimeoutMs = opts.requestTimeoutMs ?? 10_000;
  const artifacts = new MemoryArtifactStore({ retentionSecs: 600, gcIntervalSecs: 600 });
  const app = new SvcApp({
    registry,
    artifacts,
    runtime: { env: secrets(cgs), requestTimeoutMs, deadlineMs: 2 * requestTimeoutMs },
  });
  const server = await listen(app, 0, '127.0.0.1');
  try {
    const symbols = new SymbolTable();
    const wave = symbols.expose(
      registry,
      cgs.entities.map((e) => ({ api, entity: e.name })),
    );
    let session: { path: string; wave: string };
    try {
      session = await openSession(server.url, api);
    } catch (e) {
      return { capabilities: [], error: { stage: 'session', message: messageOf(e) } };
    }
    // The programs use this table's symbols: the session must teach the same ones.
    if (session.wave !== renderWave(wave, registry, symbols))
      return {
        capabilities: [],
        error: { stage: 'session', message: "the session's wave is not the teaching table of every entity" },
      };
    const run = new Runner(server.url + session.path, mock, facts, 3 * requestTimeoutMs);
    const capabilities: CapabilityTruth[] = [];
    for (const cap of cgs.capabilities) {
      if (!isTruthKind(cap.kind)) continue;
      const program = teachableExample(api, cap, registry, symbols);
      capabilities.push(
        await run.check(cap as Capability & { kind: TruthKind }, program, registry.entity(api, cap.entity)!),
      );
    }
    return { capabilities };
  } finally {
    await server.close(500);
    await artifacts.close();
  }
}

/** What the document says of its capabilities that the judge needs (by capability name). */
interface DocumentFacts {
  /** The operation declares no 2xx response. */
  noSuccess: Set<string>;
  /** The operation's path key carries a fragment (`/#X-Amz-Target=...`). */
  fragment: Set<string>;
}

/** Names of the capabilities whose operation's path key carries a fragment. */
export function withFragment(caps: Array<{ name: string; origin: string }>): Set<string> {
  return new Set(caps.filter((c) => (/^\S+ (\S+)/.exec(c.origin)?.[1] ?? '').includes('#')).map((c) => c.name));
}

/** Names of the capabilities whose operation declares no 2xx response (Prism answers them an error). */
export function withoutSuccess(doc: Schema, caps: Array<{ name: string; origin: string }>): Set<string> {
  const out = new Set<string>();
  const paths = isObj(doc.paths) ? doc.paths : {};
  for (const c of caps) {
    const [, method, path] = /^(\S+) (\S+)/.exec(c.origin) ?? [];
    const item = path === undefined ? undefined : paths[path];
    const op = isObj(item) ? item[method!.toLowerCase()] : undefined;
    const codes = isObj(op) && isObj(op.responses) ? Object.keys(op.responses) : [];
    if (isObj(op) && !codes.some((k) => /^(2\d\d|2XX|default)$/i.test(k))) out.add(c.name);
  }
  return out;
}

const isTruthKind = (k: CapabilityKind): k is TruthKind => (TRUTH_KINDS as readonly string[]).includes(k);

/** The environment the catalog's auth reads, every variable set (any value passes Prism's check). */
export function secrets(cgs: Cgs): Record<string, string> {
  const a = cgs.auth;
  switch (a.scheme) {
    case 'none':
      return {};
    case 'basic':
      return { [a.username_env]: 'truth-check', [a.password_env]: 'truth-check' };
    case 'oauth2_client_credentials':
      return { [a.client_id_env]: 'truth-check', [a.client_secret_env]: 'truth-check' };
    case 'api_key':
      // The key and every further key the vendor wants with it.
      return Object.fromEntries([a.env, ...(a.also ?? []).map((k) => k.env)].map((n) => [n, 'truth-check']));
    default:
      return { [a.env]: 'truth-check' };
  }
}

interface Answer {
  status: number;
  body: Record<string, any>;
  text: string;
}

async function post(url: string, body: string, type: string, timeoutMs: number): Promise<Answer> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': type },
    body,
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  let parsed: Record<string, any> = {};
  try {
    parsed = JSON.parse(text) as Record<string, any>;
  } catch {
    /* not JSON */
  }
  return { status: res.status, body: parsed, text };
}

async function openSession(base: string, api: string): Promise<{ path: string; wave: string }> {
  const a = await post(`${base}/execute`, JSON.stringify({ entry_id: api }), 'application/json', 30_000);
  if (a.status !== 201) throw new Error(`POST /execute answered ${a.status}: ${a.text.slice(0, 300)}`);
  return { path: `/execute/${a.body.prompt_hash}/${a.body.session}`, wave: String(a.body.wave) };
}

const errorOf = (a: Answer): { code: string; message: string } => {
  const e = (a.body.errors as Array<{ code?: string; message?: string }> | undefined)?.[0] ?? a.body;
  return { code: String(e.code ?? `http_${a.status}`), message: String(e.message ?? a.text.slice(0, 200)) };
};

/** Runs programs on one session and judges each run by the mock's record and the answer. */
class Runner {
  constructor(
    private readonly session: string,
    private readonly mock: PrismMock,
    private readonly facts: DocumentFacts,
    private readonly timeoutMs: number,
  ) {}

  async check(
    cap: Capability & { kind: TruthKind },
    program: string | undefined,
    entity: Entity,
  ): Promise<CapabilityTruth> {
    const base = { capability: cap.name, kind: cap.kind, entity: cap.entity };
    if (program === undefined)
      return { ...base, ok: false, category: 'not_written', detail: 'no example program', calls: 0 };
    const from = this.mock.calls.length;
    let answer: Answer;
    try {
      answer = await this.run(program, cap.kind === 'create' || cap.kind === 'update');
    } catch (e) {
      const timedOut = e instanceof Error && e.name === 'TimeoutError';
      return {
        ...base,
        program,
        ok: false,
        category: timedOut ? 'timeout' : 'run_error',
        detail: messageOf(e),
        calls: 0,
      };
    }
    const calls = this.mock.calls.slice(from);
    try {
      const verdict = blameExample(
        judge(answer, calls, cap, entity, {
          noSuccessDeclared: this.facts.noSuccess.has(cap.name),
          fragment: this.facts.fragment.has(cap.name),
        }),
        calls,
      );
      return { ...base, program, ok: verdict === undefined, ...verdict, calls: calls.length };
    } catch (e) {
      return { ...base, program, ok: false, category: 'run_error', detail: messageOf(e), calls: calls.length };
    }
  }

  /** A write (or a read the gate holds for review) is dry-run first, then run with its `pcN`. */
  private async run(program: string, write: boolean): Promise<Answer> {
    if (!write) {
      const live = await post(this.session, program, 'text/plain', this.timeoutMs);
      if (live.status !== 409 || errorOf(live).code !== 'review_required') return live;
    }
    const dry = await post(`${this.session}?mode=plan`, program, 'text/plain', this.timeoutMs);
    const ref = dry.body._meta?.svc?.plan_commit_ref as string | undefined;
    if (dry.status !== 200 || !ref) return dry;
    return post(`${this.session}?plan_commit_ref=${ref}`, program, 'text/plain', this.timeoutMs);
  }
}

const CODE_CATEGORY: Record<string, TruthCategory> = {
  vendor_error: 'vendor_status',
  response_shape_mismatch: 'response_shape_mismatch',
  vendor_bad_response: 'response_shape_mismatch',
  vendor_timeout: 'timeout',
  deadline_exceeded: 'timeout',
};

/** Undefined when the capability passed; else its category and detail. */
export function judge(
  answer: Answer,
  calls: RecordedCall[],
  cap: Capability,
  entity: Entity,
  { noSuccessDeclared = false, fragment = false }: { noSuccessDeclared?: boolean; fragment?: boolean } = {},
): { category: TruthCategory; detail: string } | undefined {
  const invalid = calls.find((c) => c.violations.length);
  if (invalid) {
    const v = invalid.violations[0]!;
    return {
      category: fragment && /route not resolved/i.test(v.message) ? 'mock_unroutable' : 'request_invalid',
      detail: `${invalid.method} ${invalid.target}: ${[...(v.location ?? []), v.message].join(': ')}`,
    };
  }
  const mockError = calls.find((c) => c.mockError);
  if (mockError)
    return { category: 'mock_error', detail: `${mockError.method} ${mockError.target}: ${mockError.mockError}` };
  if (answer.status !== 200) {
    const e = errorOf(answer);
    const status = calls.find((c) => c.status >= 400)?.status;
    const category =
      status && noSuccessDeclared
        ? 'no_success_declared'
        : (CODE_CATEGORY[e.code] ?? (answer.status === 400 && calls.length === 0 ? 'compile_error' : 'run_error'));
    return { category, detail: `${e.code}${status ? ` (mock ${status})` : ''}: ${e.message.slice(0, 200)}` };
  }
  if (cap.kind !== 'get' && cap.kind !== 'query') return undefined;
  const first = (answer.body.rows as unknown[] | undefined)?.[0];
  // A value answer is the answer whole, null or "" when the document declares no content: it has it or not.
  const value = cap.http.response.value;
  if (value !== undefined)
    return first !== null && typeof first === 'object' && value in first
      ? undefined
      : { category: 'not_filled', detail: `no value answer: the first row is ${JSON.stringify(first) ?? 'missing'}` };
  return unfilled(first, entity);
}

/** A failure reading the answer becomes example_mismatch when Prism's answer broke the document's schema. */
export function blameExample(
  verdict: { category: TruthCategory; detail: string } | undefined,
  calls: RecordedCall[],
): { category: TruthCategory; detail: string } | undefined {
  if (verdict?.category !== 'response_shape_mismatch' && verdict?.category !== 'not_filled') return verdict;
  const bad = calls.find((c) => c.responseViolations.length);
  if (!bad) return verdict;
  const v = bad.responseViolations[0]!;
  return {
    category: 'example_mismatch',
    detail: `${verdict.detail}; the mock's answer breaks the document's schema: ${[...(v.location ?? []), v.message].join(': ')}`,
  };
}

/**
 * Why the first row of a read is not filled: missing, or its id field null (when declared), or
 * fewer than half of the entity's declared fields non-null.
 */
export function unfilled(row: unknown, entity: Entity): { category: 'not_filled'; detail: string } | undefined {
  if (row === null || typeof row !== 'object' || Array.isArray(row))
    return { category: 'not_filled', detail: row === undefined ? 'no row' : `the first row is ${JSON.stringify(row)}` };
  const r = row as Record<string, unknown>;
  const names = entity.fields.map((f) => f.name);
  const empty = names.filter((n) => r[n] === undefined || r[n] === null);
  if (names.includes(entity.id_field) && empty.includes(entity.id_field))
    return { category: 'not_filled', detail: `the id field ${entity.id_field} is empty` };
  if (2 * (names.length - empty.length) < names.length)
    return {
      category: 'not_filled',
      detail: `${names.length - empty.length} of ${names.length} declared fields filled; empty: ${empty.slice(0, 6).join(', ')}`,
    };
  return undefined;
}

/** The text summary the CLI prints. */
export function formatReport(r: TruthReport): string {
  const kinds = TRUTH_KINDS.map((k) => `${k} ${r.totals[k].ok}/${r.totals[k].total}`).join(', ');
  const checked = r.documents.filter((d) => !d.error).length;
  const lines = [
    `truth check: ${r.totals.all.ok}/${r.totals.all.total} capabilities pass (${r.totals.all.pct}%) over ${checked} documents; ${kinds}`,
    `of those the mock could judge: ${r.totals.judged.ok}/${r.totals.judged.total} (${r.totals.judged.pct}%)`,
    `not checked: ${r.unchecked.import} did not import, ${r.unchecked.mock} had no mock, ${r.unchecked.session} no session`,
  ];
  for (const c of r.categories) {
    lines.push(`${c.count}\t${c.category}`);
    for (const ex of c.examples) lines.push(`\t  ${ex.slice(0, 240)}`);
  }
  return lines.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  const json = args.includes('--json');
  const docs = args.filter((a) => a !== '--json');
  if (docs.length === 0) {
    process.stderr.write('usage: node dist/bench/import-truth.js [--json] <openapi document>...\n');
    process.exit(2);
  }
  const report = await truthCheck(docs, { progress: (l) => process.stderr.write(l + '\n') });
  process.stdout.write((json ? JSON.stringify(report, null, 2) : formatReport(report)) + '\n');
}
