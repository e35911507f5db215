/**
 * The execute core shared by every surface: open and extend sessions (teaching waves), compile
 * programs, dry-run and mint plan tokens, enforce the review gate, run plans, mint page handles
 * and store run artifacts. Routes and MCP tools only parse input and render what this returns.
 */
import { svcError, SvcFailure, CODES, type SvcError } from '../../common/errors.js';
import { compileProgram } from '../../compiler/compile.js';
import type { ContinuationStmt } from '../../compiler/ast.js';
import { planCatalogs, planCommitId, type Plan, type Review } from '../../compiler/plan.js';
import { reviewPlan } from '../../compiler/review.js';
import { checkResolvedPlan } from './resolved-plan.js';
import { renderWave, teachingRules } from '../../compiler/teaching.js';
import type { Seed } from '../../compiler/symbols.js';
import type { Registry } from '../../pack/registry.js';
import { nearest } from '../../common/suggest.js';
import { executePlan, continuePage, type ExecuteOptions, type RunResult } from '../../runtime/execute.js';
import { snapshotOf, type ArtifactStore, type RunSnapshot } from '../../runtime/artifacts/index.js';
import { isArtifactId } from '../../runtime/artifacts/snapshot.js';
import type { Outcome, ResultBlock } from './outcome.js';
import { SessionStore, type ExecuteSession } from './session.js';
import { applyProgress, DEFAULT_MAX_RUNNING_OPS, notify, opLine, terminalSign, trimOperations, type Operation, type Sign } from './operations.js';

/** Plan commit TTL: a pcN can be used for 10 minutes (SPEC). */
export const PLAN_TOKEN_TTL_MS = 10 * 60 * 1000;

export interface ServiceDeps {
  /** The registry in force (a reload swaps it). */
  registry: () => Registry;
  sessions: SessionStore;
  artifacts: ArtifactStore;
  /** Base runtime options (env, http client, timeouts). */
  runtime: ExecuteOptions;
  /** Running background operations allowed per session (SVC_MAX_RUNNING_OPS_PER_SESSION). */
  maxRunningOps?: number;
  now?: () => number;
}

export interface ProgramRequest {
  program: string;
  mode: 'plan' | 'live';
  wait: boolean;
  force: boolean;
  plan_commit_ref?: string;
}

const fail = (code: SvcError['code'], message: string, hint: string): never => {
  throw new SvcFailure([svcError(code, message, { hint })]);
};

export class ExecuteService {
  private readonly now: () => number;

  constructor(private readonly deps: ServiceDeps) {
    this.now = deps.now ?? Date.now;
  }

  private get registry(): Registry {
    return this.deps.registry();
  }

  /** Parse seeds (`"api:Entity"`, `"Entity"` of `defaultApi`, or `{api, entity}`), all or nothing. */
  parseSeeds(raw: unknown, defaultApi: string | undefined): Seed[] {
    if (raw === undefined) return [];
    if (!Array.isArray(raw)) fail('bad_seed', '`seeds` must be a list', 'write for example "seeds": ["brewery:Beer"]');
    const out: Seed[] = [];
    const problems: SvcError[] = [];
    for (const s of raw as unknown[]) {
      let api: string | undefined;
      let entity: string | undefined;
      if (typeof s === 'string') {
        const i = s.indexOf(':');
        [api, entity] = i >= 0 ? [s.slice(0, i), s.slice(i + 1)] : [defaultApi, s];
      } else if (s && typeof s === 'object') {
        api = typeof (s as Seed).api === 'string' ? (s as Seed).api : defaultApi;
        entity = (s as Seed).entity;
      }
      const entry = api ? this.registry.get(api) : undefined;
      if (!entry) {
        problems.push(svcError('bad_seed', `seed ${JSON.stringify(s)} names no loaded catalog`, { hint: `write api:Entity; catalogs: ${this.registry.list().map((e) => e.entry_id).join(', ')}` }));
      } else if (typeof entity !== 'string' || !this.registry.entity(entry.entry_id, entity)) {
        const names = entry.cgs.entities.map((e) => e.name);
        const near = nearest(String(entity), names, 3);
        problems.push(svcError('bad_seed', `${entry.entry_id} has no entity ${JSON.stringify(entity)}`, { hint: near.length ? `did you mean ${near.map((n) => `${entry.entry_id}:${n}`).join(' or ')}?` : `entities: ${names.map((n) => `${entry.entry_id}:${n}`).join(', ')}` }));
      } else out.push({ api: entry.entry_id, entity });
    }
    if (problems.length) throw new SvcFailure(problems);
    return out;
  }

  /** POST /execute: a new session for one entry; seeds default to every entity of the entry. */
  open(body: Record<string, unknown>, tenant: string): Outcome {
    const entryId = body.entry_id;
    if (typeof entryId !== 'string') fail('bad_arguments', '`entry_id` is required', 'send {"entry_id": "<catalog>", "seeds": ["<catalog>:<Entity>"]}; GET /v1/registry lists catalogs');
    const entry = this.registry.get(entryId as string) ?? fail('unknown_entry', `no catalog \`${String(entryId)}\` is loaded`, `catalogs: ${this.registry.list().map((e) => e.entry_id).join(', ')}`);
    const intent = typeof body.intent === 'string' ? body.intent : '';
    let seeds = this.parseSeeds(body.seeds, entry.entry_id);
    if (seeds.some((s) => s.api !== entry.entry_id)) fail('bad_seed', 'a new session takes seeds of its own entry only', 'federate other catalogs afterwards with POST /execute/{prompt_hash}/{session}/context');
    if (seeds.length === 0) seeds = entry.cgs.entities.map((e) => ({ api: entry.entry_id, entity: e.name }));
    const s = this.deps.sessions.create(entry.entry_id, intent, tenant, this.registry);
    const wave = s.symbols.expose(this.registry, seeds);
    const table = renderWave(wave, this.registry, s.symbols);
    const rules = teachingRules();
    s.teaching = `${rules}\n${table}`;
    return {
      status: 201, results: [], errors: [], text: s.teaching,
      meta: { domain_revision: s.symbols.domainRevision },
      extra: { prompt_hash: s.prompt_hash, session: s.session, domain_revision: s.symbols.domainRevision, entries: this.pins(s), rules, wave: table },
    };
  }

  /** POST .../context: expand (same entries) or federate (new entry) with a delta-only wave. */
  context(s: ExecuteSession, body: Record<string, unknown>): Outcome {
    const first = s.pins.keys().next().value as string;
    const seeds = this.parseSeeds(body.seeds, first);
    if (seeds.length === 0) fail('bad_seed', '`seeds` is required and not empty', 'send {"seeds": ["api:Entity"]}');
    for (const api of [...new Set(seeds.map((x) => x.api))].sort()) if (!s.pins.has(api)) s.pins.set(api, this.registry.get(api)!.cgs_hash);
    const wave = s.symbols.expose(this.registry, seeds);
    const fresh = wave.entities.length + wave.capabilities.length + wave.relations.length > 0;
    const notice = wave.repeated.length
      ? `already taught: ${wave.repeated.map((r) => `${s.symbols.entitySymbol(r.api, r.entity)?.sym} (${r.api}:${r.entity})`).join(', ')}`
      : undefined;
    const table = fresh ? renderWave(wave, this.registry, s.symbols) : '';
    if (fresh) s.teaching += `\n${table.split('\n').slice(1).join('\n')}`;
    const text = [notice, table].filter(Boolean).join('\n');
    return {
      status: 200, results: [], errors: [], text,
      meta: { domain_revision: s.symbols.domainRevision },
      extra: { domain_revision: s.symbols.domainRevision, entries: this.pins(s), wave: table, ...(notice ? { notice } : {}) },
    };
  }

  private pins(s: ExecuteSession): Array<{ entry_id: string; cgs_hash: string }> {
    return [...s.pins].map(([entry_id, cgs_hash]) => ({ entry_id, cgs_hash }));
  }

  /** POST /execute/{ph}/{s}: a program (or a page continuation). */
  async program(s: ExecuteSession, req: ProgramRequest): Promise<Outcome> {
    const registry = this.registry;
    let compiled = this.deps.sessions.cachedPlan(s, req.program, registry);
    if (!compiled) {
      const c = compileProgram(req.program, { registry, symbols: s.symbols });
      if (c.kind === 'error') return { status: 400, results: [], errors: c.diagnostics, meta: { code: c.diagnostics[0]?.code } };
      if (c.kind === 'continuation') {
        if (req.mode === 'plan') fail('bad_arguments', `\`${c.continuation.kind}(${c.continuation.handle.text})\` is a continuation: it has no dry-run`, 'send it without mode=plan');
        return this.continuation(s, c.continuation);
      }
      compiled = { plan: c.plan, commit_id: c.commit_id, review: c.review };
      this.deps.sessions.cachePlan(s, req.program, registry, compiled);
    }
    const { plan, commit_id, review } = compiled;
    for (const api of Object.keys(planCatalogs(plan))) {
      if (!s.pins.has(api)) fail('catalog_not_in_session', `the program uses catalog \`${api}\`, which this session has not loaded`, `federate it first: POST /execute/${s.prompt_hash}/${s.session}/context {"seeds": ["${api}:<Entity>"]}`);
    }
    if (req.mode === 'plan') return this.dryRun(s, plan, commit_id, review);
    return this.runPlan(s, plan, commit_id, review, req, req.program);
  }

  /** The review gate, then a live run: answered when done, or in the background with wait=false. */
  async runPlan(s: ExecuteSession, plan: Plan, commit_id: string, review: Review, req: Omit<ProgramRequest, 'program' | 'mode'>, program?: string): Promise<Outcome> {
    // The cap is checked before the gate, so a refused start does not spend a write's pcN.
    if (!req.wait) this.checkCap(s);
    const accepted = this.gate(s, plan, commit_id, review, { ...req, program: program ?? '', mode: 'live' });
    if (!req.wait) return this.start(s, plan, commit_id, accepted, program);
    return this.live(s, plan, commit_id, accepted, program);
  }

  private dryRun(s: ExecuteSession, plan: Plan, commit_id: string, review: Review): Outcome {
    const ref = this.deps.sessions.mintToken(s, { commit_id, plan, review });
    const dry_review = { verdict: review.verdict, flow: review.flow, mutations: review.mutations, summary: review.text };
    const next = review.verdict === 'proceed' ? 'it runs as is: send it again without mode=plan' : `run it with plan_commit_ref=${ref} within 10 minutes`;
    return {
      status: 200, results: [], errors: [],
      text: `dry-run ${ref}: ${review.verdict}${review.mutations ? `, ${review.mutations} write${review.mutations === 1 ? '' : 's'}` : ''}${review.flow === 'clean' ? '' : `, flow: ${(review.flow as string[]).join(', ')}`}; ${next}\n${review.text}`,
      meta: { mode: 'plan', commit_id, plan_commit_ref: ref, dry_verdict: review.verdict, dry_review },
    };
  }

  /**
   * The review gate. A plan with verdict `proceed` runs; otherwise it needs `force` or a pcN for
   * the same commit id, unexpired and (for plans with writes) not yet used. Returns whether the
   * caller accepted writes.
   */
  private gate(s: ExecuteSession, plan: Plan, commit_id: string, review: Review, req: ProgramRequest): boolean {
    if (req.force) return true;
    if (req.plan_commit_ref === undefined) {
      if (review.verdict === 'proceed') return false;
      fail('review_required', `this plan needs review (${review.mutations ? `${review.mutations} write${review.mutations === 1 ? '' : 's'}` : (review.flow as string[]).join(', ')}) before it runs`, 'dry-run it with mode=plan, then send the same program with plan_commit_ref=<the pcN it returns> (or force=true)');
    }
    const ref = req.plan_commit_ref!;
    const token = s.tokens.get(ref) ?? fail('plan_token_unknown', `\`${ref}\` is not a plan token of this session`, 'dry-run the program with mode=plan to get a pcN');
    if (this.now() - token.minted_at > PLAN_TOKEN_TTL_MS) fail('plan_token_expired', `\`${ref}\` expired (plan tokens live 10 minutes)`, 'dry-run the program again with mode=plan');
    if (token.commit_id !== commit_id) fail('plan_token_mismatch', `\`${ref}\` was minted for another plan (${token.commit_id.slice(0, 12)}, this program is ${commit_id.slice(0, 12)})`, 'send the program exactly as dry-run, or dry-run this one');
    if (token.consumed_at !== undefined) fail('plan_token_consumed', `\`${ref}\` was already used for a live run`, 'a token of a plan with writes runs once; dry-run again to run it again');
    if (token.review.mutations > 0) token.consumed_at = this.now();
    return true;
  }

  private async live(s: ExecuteSession, plan: Plan, commit_id: string, accepted: boolean, program: string | undefined): Promise<Outcome> {
    const startedAt = new Date(this.now());
    const run = await executePlan(plan, this.registry, { ...this.deps.runtime, accepted });
    const run_id = await this.store(s, plan, commit_id, run, startedAt, program);
    const results = this.blocks(s, run);
    this.deps.sessions.recordRun(s, { run_id, commit_id, status: run.status, at: startedAt.toISOString(), rows: results.reduce((n, r) => n + r.rows.length, 0) });
    const status = run.status === 'succeeded' ? 200 : CODES[run.errors[0]?.code ?? 'internal_error'].status;
    return { status, results, errors: run.errors, meta: { mode: 'live', commit_id, run_id, status: run.status, ...(run.errors[0] ? { code: run.errors[0].code } : {}) } };
  }

  private store(s: ExecuteSession, plan: Plan, commit_id: string, run: RunResult, startedAt: Date, program: string | undefined): Promise<string> {
    return this.deps.artifacts.put(snapshotOf(plan, commit_id, run, { ...(program !== undefined ? { program } : {}), startedAt, session: { prompt_hash: s.prompt_hash, session: s.session } }));
  }

  private blocks(s: ExecuteSession, run: RunResult): ResultBlock[] {
    return run.returns.map((r) => {
      const b: ResultBlock = { entity: r.entity, rows: r.rows };
      if (r.total !== undefined) b.total = r.total;
      if (r.page) b.next = this.deps.sessions.mintPage(s, r.page, r.entity);
      return b;
    });
  }

  private async continuation(s: ExecuteSession, c: ContinuationStmt): Promise<Outcome> {
    if (c.kind !== 'page') {
      trimOperations(s.ops, this.now());
      const op = s.ops.get(c.handle.text) ?? fail('unknown_operation_handle', `\`${c.handle.text}\` is not an operation of this session`, `operations are started with wait=false; their handles come in the accept line${s.ops.size ? `; this session has ${[...s.ops.keys()].join(', ')}` : ''}`);
      return c.kind === 'wait' ? this.wait(op) : this.cancel(op);
    }
    const handle = c.handle.text;
    const state = s.pages.get(handle) ?? fail('unknown_page_handle', `\`${handle}\` is not a page handle of this session`, 'use the pgN printed in a "more" line of a result of this session');
    if (state.used) fail('page_exhausted', `\`${handle}\` was already continued`, 'continue with the newer pgN printed under that page');
    let projection = state.projection;
    if (c.projection) {
      const [api, name] = state.entity.split(':') as [string, string];
      const fields = this.registry.entity(api, name)?.fields.map((f) => f.name) ?? [];
      const bad = c.projection.fields.find((f) => !fields.includes(f.text));
      if (bad) fail('projection_unknown_field', `${state.entity} has no field \`${bad.text}\``, `fields: ${fields.join(', ')}`);
      projection = c.projection.fields.map((f) => f.text);
    }
    state.used = true;
    const r = await continuePage({ ...state, ...(projection ? { projection } : {}) }, this.registry, this.deps.runtime);
    // A failed continuation (vendor down, timeout) leaves the handle usable for a retry.
    if (r.error) {
      state.used = false;
      return { status: CODES[r.error.code].status, results: [], errors: [r.error], meta: { code: r.error.code } };
    }
    const block: ResultBlock = { entity: state.entity, rows: r.rows };
    if (r.total !== undefined) block.total = r.total;
    if (r.page) block.next = this.deps.sessions.mintPage(s, r.page, state.entity);
    return { status: 200, results: [block], errors: [], meta: { mode: 'live' } };
  }

  /** wait=false: start the run behind `oN` and answer the accept line at once (the caller checked the cap). */
  private start(s: ExecuteSession, plan: Plan, commit_id: string, accepted: boolean, program: string | undefined): Outcome {
    const handle = `o${s.nextOp++}`;
    const startedAt = new Date(this.now());
    const op: Operation = {
      handle, state: 'running', started: this.now(), steps: plan.steps.length, progress: new Map(), version: 0, seen: 0,
      controller: new AbortController(), errors: [], listeners: new Set(), done: Promise.resolve(),
    };
    op.done = executePlan(plan, this.registry, {
      ...this.deps.runtime, accepted, signal: op.controller.signal,
      onProgress: (e) => { if (applyProgress(op, e)) notify(op, { kind: 'progress', line: opLine(op, '~', this.now()) }); },
    }).then(async (run) => {
      op.run_id = await this.store(s, plan, commit_id, run, startedAt, program);
      const blocks = this.blocks(s, run);
      op.blocks = blocks.map(({ rows: _rows, ...b }, i) => ({ ...b, step: run.returns[i]!.step }));
      op.errors = run.errors;
      op.state = run.status;
      op.ended = this.now();
      this.deps.sessions.recordRun(s, { run_id: op.run_id, commit_id, status: run.status, at: startedAt.toISOString(), rows: blocks.reduce((n, b) => n + b.rows.length, 0) });
    }).catch((e: unknown) => {
      op.errors = [svcError('internal_error', 'the background run failed unexpectedly', { hint: 'this is a bug in svc', cause: (e as Error)?.message?.slice(0, 200) ?? 'error' })];
      op.state = 'failed';
      op.ended = this.now();
    }).finally(() => {
      notify(op, { kind: 'terminal', line: opLine(op, terminalSign(op.state), this.now()) });
      op.listeners.clear();
      trimOperations(s.ops, this.now());
    });
    s.ops.set(handle, op);
    const line = opLine(op, '+', this.now());
    return { status: 202, results: [], errors: [], text: line, meta: { mode: 'live', commit_id, op: opMeta(op, '+', line) } };
  }

  /** `too_many_operations` when the session already runs as many operations as allowed. */
  private checkCap(s: ExecuteSession): void {
    const cap = this.deps.maxRunningOps ?? DEFAULT_MAX_RUNNING_OPS;
    const running = [...s.ops.values()].filter((o) => o.state === 'running');
    if (running.length >= cap) {
      fail('too_many_operations', `this session already runs ${running.length} operations (the cap is ${cap}): ${running.map((o) => o.handle).join(', ')}`, `wait for them with wait(oN) or stop them with cancel(oN) first: ${running.map((o) => `wait(${o.handle})`).join(', ')}`);
    }
  }

  /** wait(oN): a progress line while running; the rows (from the run artifact) once done. */
  private async wait(op: Operation): Promise<Outcome> {
    if (op.state === 'running') {
      const sign: Sign = op.version !== op.seen ? '~' : '=';
      op.seen = op.version;
      const line = opLine(op, sign, this.now());
      return { status: 200, results: [], errors: [], text: line, meta: { op: opMeta(op, sign, line) } };
    }
    return this.terminal(op);
  }

  private async terminal(op: Operation): Promise<Outcome> {
    const sign = terminalSign(op.state);
    const line = opLine(op, sign, this.now());
    const snap = op.run_id ? await this.deps.artifacts.get(op.run_id) : undefined;
    const results: ResultBlock[] = (op.blocks ?? []).map(({ step, ...b }) => ({ ...b, rows: snap?.steps.find((x) => x.id === step)?.rows ?? [] }));
    return { status: 200, results, errors: op.errors, text: line, meta: { op: opMeta(op, sign, line), ...(op.run_id ? { run_id: op.run_id } : {}), status: op.state, ...(op.errors[0] ? { code: op.errors[0].code } : {}) } };
  }

  /** cancel(oN): stop a running operation (cooperatively) and answer its terminal line. */
  private async cancel(op: Operation): Promise<Outcome> {
    if (op.state === 'running') {
      op.controller.abort();
      await op.done;
    }
    return this.terminal(op);
  }

  /** The current line of an operation (the SSE snapshot) and whether it has ended. */
  snapshotLine(op: Operation): { line: string; terminal: boolean } {
    if (op.state === 'running') return { line: opLine(op, op.version ? '~' : '+', this.now()), terminal: false };
    return { line: opLine(op, terminalSign(op.state), this.now()), terminal: true };
  }

  /** POST .../plan: a client-compiled plan, checked, reviewed and run like a compiled program. */
  async resolvedPlan(s: ExecuteSession, body: Record<string, unknown>, req: Omit<ProgramRequest, 'program'>): Promise<Outcome> {
    const plan = checkResolvedPlan(body.plan, this.registry);
    for (const api of Object.keys(planCatalogs(plan))) {
      if (!s.pins.has(api)) fail('catalog_not_in_session', `the plan uses catalog \`${api}\`, which this session has not loaded`, `federate it first: POST /execute/${s.prompt_hash}/${s.session}/context {"seeds": ["${api}:<Entity>"]}`);
    }
    const clean: Plan = { version: plan.version, steps: plan.steps, bind: plan.bind, return: plan.return };
    const commit_id = planCommitId(clean);
    const review = reviewPlan(clean, this.registry);
    if (req.mode === 'plan') return this.dryRun(s, clean, commit_id, review);
    return this.runPlan(s, clean, commit_id, review, req, typeof body.program === 'string' ? body.program : undefined);
  }

  /** The operation `handle` of a session (for streams). */
  operation(s: ExecuteSession, handle: string): Operation {
    return s.ops.get(handle) ?? fail('unknown_operation_handle', `\`${handle}\` is not an operation of this session`, 'operations are started with wait=false; their handles come in the accept line');
  }

  /** A stored run of this session. */
  async artifact(s: ExecuteSession, runId: string): Promise<RunSnapshot> {
    const snap = isArtifactId(runId) ? await this.deps.artifacts.get(runId) : undefined;
    const mine = snap?.session?.prompt_hash === s.prompt_hash && snap.session.session === s.session;
    return (mine ? snap : undefined) ?? fail('unknown_run', `no run \`${runId}\` in this session`, 'GET .../runs lists the runs of the session');
  }
}

/** `_meta.svc.op`: `n` handle, `~` sign, `s` state, `l` the line, `r` run artifact id (when ended). */
function opMeta(op: Operation, sign: Sign, line: string): Record<string, string> {
  return { n: op.handle, '~': sign, s: op.state, l: line, ...(op.run_id ? { r: op.run_id } : {}) };
}
