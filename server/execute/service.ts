/**
 * The execute core shared by every surface: open and extend sessions (teaching waves), compile
 * programs, dry-run and mint plan tokens, enforce the review gate, run plans, mint page handles
 * and store run artifacts. Routes and MCP tools only parse input and render what this returns.
 */
import { svcError, SvcFailure, CODES, type SvcError } from '../../common/errors.js';
import { SILENT, type Logger } from '../../common/log.js';
import { quote } from '../../common/quote.js';
import { compileProgram } from '../../compiler/compile.js';
import type { ContinuationStmt } from '../../compiler/ast.js';
import { parseProgram } from '../../compiler/parse.js';
import { planCatalogs, planCommitId, type Plan, type Review } from '../../compiler/plan.js';
import { reviewPlan } from '../../compiler/review.js';
import { checkResolvedPlan } from './resolved-plan.js';
import { renderWave, teachingRules } from '../../compiler/teaching.js';
import type { Seed } from '../../compiler/symbols.js';
import type { Registry } from '../../pack/registry.js';
import { nearest } from '../../common/suggest.js';
import { executePlan, continuePage, type ExecuteOptions, type RunResult } from '../../runtime/execute.js';
import { PooledHttpClient, type HttpClient } from '../../runtime/http-client.js';
import { snapshotOf, type ArtifactStore, type RunSnapshot } from '../../runtime/artifacts/index.js';
import { isArtifactId } from '../../runtime/artifacts/snapshot.js';
import { DEFAULT_LIMITS, type Limits } from '../limits.js';
import type { ContextBody, OpenBody, PlanBody } from '../http/requests.js';
import { Background, runOptions, type RunHow } from './background.js';
import type { Outcome, ResultBlock } from './outcome.js';
import { PlanCache } from './plan-cache.js';
import type { Operation } from './operations.js';
import type { ExecuteSession, SessionStore } from './session.js';

/** Plan commit TTL: a pcN can be used for 10 minutes (SPEC). */
export const PLAN_TOKEN_TTL_MS = 10 * 60 * 1000;

export interface ServiceDeps {
  /** The registry in force (a reload swaps it). */
  registry: () => Registry;
  sessions: SessionStore;
  artifacts: ArtifactStore;
  /** Base runtime options for vendor calls (env, http client, timeouts). */
  runtime: ExecuteOptions;
  /** Limits (defaults: DEFAULT_LIMITS). */
  limits?: Partial<Limits>;
  /** Vendor connections of background runs (default: a pool of their own). */
  backgroundHttp?: HttpClient;
  planCache?: PlanCache;
  now?: () => number;
  logger?: Logger;
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
  readonly limits: Limits;
  readonly plans: PlanCache;
  readonly background: Background;
  private readonly backgroundHttp: HttpClient;
  /** Aborted at shutdown: synchronous runs still going are cancelled with it. */
  private readonly stopping = new AbortController();

  constructor(private readonly deps: ServiceDeps) {
    this.now = deps.now ?? Date.now;
    this.limits = { ...DEFAULT_LIMITS, ...deps.limits };
    this.plans = deps.planCache ?? new PlanCache();
    this.backgroundHttp = deps.backgroundHttp ?? new PooledHttpClient();
    this.background = new Background({
      registry: deps.registry,
      artifacts: deps.artifacts,
      runtime: { ...deps.runtime, http: this.backgroundHttp, deadlineMs: this.limits.backgroundDeadlineMs, background: true },
      limits: this.limits,
      now: this.now,
      logger: deps.logger ?? SILENT,
      finish: async (s, plan, commit_id, run, startedAt, program) => {
        const run_id = await this.store(s, plan, commit_id, run, startedAt, program);
        const blocks = this.blocks(s, run);
        this.recordRun(s, run_id, commit_id, run, startedAt, blocks);
        return { run_id, blocks };
      },
    });
  }

  private get registry(): Registry {
    return this.deps.registry();
  }

  /**
   * Parse seeds (`"api:Entity"`, `"Entity"` of `defaultApi`, or `{api, entity}`), all or nothing.
   * Shapes are checked first; a bad value is quoted by a short prefix only.
   */
  parseSeeds(raw: unknown, defaultApi: string | undefined): Seed[] {
    if (raw === undefined || raw === null) return [];
    if (!Array.isArray(raw)) fail('bad_seed', '`seeds` must be a list', 'write for example "seeds": ["brewery:Beer"]');
    const out: Seed[] = [];
    const problems: SvcError[] = [];
    (raw as unknown[]).forEach((s, i) => {
      let api: string | undefined;
      let entity: string | undefined;
      if (typeof s === 'string') {
        const c = s.indexOf(':');
        [api, entity] = c >= 0 ? [s.slice(0, c), s.slice(c + 1)] : [defaultApi, s];
      } else if (s && typeof s === 'object' && !Array.isArray(s) && typeof (s as Seed).entity === 'string' && ['string', 'undefined'].includes(typeof (s as Seed).api)) {
        api = (s as Seed).api ?? defaultApi;
        entity = (s as Seed).entity;
      } else {
        problems.push(svcError('bad_seed', `seed ${i} is not "api:Entity" or {"api": ..., "entity": ...}`, { hint: 'write for example "seeds": ["brewery:Beer"]' }));
        return;
      }
      const shown = typeof s === 'string' ? `"${quote(s)}"` : `{api: "${quote(api ?? '')}", entity: "${quote(entity)}"}`;
      const entry = api ? this.registry.get(api) : undefined;
      if (!entry) {
        problems.push(svcError('bad_seed', `seed ${shown} names no loaded catalog`, { hint: `write api:Entity; catalogs: ${this.registry.list().map((e) => e.entry_id).join(', ')}` }));
      } else if (!this.registry.entity(entry.entry_id, entity)) {
        const names = entry.cgs.entities.map((e) => e.name);
        const near = nearest(entity, names, 3);
        problems.push(svcError('bad_seed', `${entry.entry_id} has no entity "${quote(entity)}"`, { hint: near.length ? `did you mean ${near.map((n) => `${entry.entry_id}:${n}`).join(' or ')}?` : `entities: ${names.map((n) => `${entry.entry_id}:${n}`).join(', ')}` }));
      } else out.push({ api: entry.entry_id, entity });
    });
    if (problems.length) throw new SvcFailure(problems);
    return out;
  }

  /** POST /execute: a new session for one entry; seeds default to every entity of the entry. */
  open(body: OpenBody, tenant: string): Outcome {
    const entryId = body.entry_id;
    const entry = this.registry.get(entryId) ?? fail('unknown_entry', `no catalog "${quote(entryId)}" is loaded`, `catalogs: ${this.registry.list().map((e) => e.entry_id).join(', ')}`);
    const intent = body.intent ?? '';
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
  context(s: ExecuteSession, body: ContextBody): Outcome {
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

  /**
   * POST /execute/{ph}/{s}: a program (or a continuation). `stale` is set when a catalog of the
   * session changed since (a reload): only `wait(oN)` and `cancel(oN)` of what it started still run.
   */
  async program(s: ExecuteSession, req: ProgramRequest, stale?: SvcError): Promise<Outcome> {
    if (stale) return this.staleProgram(s, req, stale);
    const registry = this.registry;
    let compiled = this.plans.get(s, req.program, registry);
    if (!compiled) {
      const c = compileProgram(req.program, { registry, symbols: s.symbols, maxCalls: this.limits.maxVendorCalls });
      if (c.kind === 'error') return { status: 400, results: [], errors: c.diagnostics, meta: { code: c.diagnostics[0]?.code } };
      if (c.kind === 'continuation') {
        if (req.mode === 'plan') fail('bad_arguments', `\`${c.continuation.kind}(${quote(c.continuation.handle.text)})\` is a continuation: it has no dry-run`, 'send it without mode=plan');
        return this.continuation(s, c.continuation);
      }
      compiled = { plan: c.plan, commit_id: c.commit_id, review: c.review };
      this.plans.set(s, req.program, registry, compiled);
    }
    const { plan, commit_id, review } = compiled;
    this.checkPins(s, plan, 'program');
    if (req.mode === 'plan') return this.dryRun(s, plan, commit_id, review);
    return this.runPlan(s, plan, commit_id, review, req, req.program);
  }

  private staleProgram(s: ExecuteSession, req: ProgramRequest, stale: SvcError): Promise<Outcome> {
    const parsed = parseProgram(req.program).program;
    const only = parsed?.statements.length === 1 ? parsed.statements[0] : undefined;
    if (req.mode !== 'plan' && only && (only.kind === 'wait' || only.kind === 'cancel')) return this.continuation(s, only);
    throw new SvcFailure([stale]);
  }

  private checkPins(s: ExecuteSession, plan: Plan, what: 'program' | 'plan'): void {
    for (const api of Object.keys(planCatalogs(plan))) {
      if (!s.pins.has(api)) fail('catalog_not_in_session', `the ${what} uses catalog \`${api}\`, which this session has not loaded`, `federate it first: POST /execute/${s.prompt_hash}/${s.session}/context {"seeds": ["${api}:<Entity>"]}`);
    }
  }

  /** The review gate, then a live run: answered when done, or in the background with wait=false. */
  async runPlan(s: ExecuteSession, plan: Plan, commit_id: string, review: Review, req: Omit<ProgramRequest, 'program' | 'mode'>, program?: string): Promise<Outcome> {
    // The cap is checked before the gate, so a refused start does not spend a write's pcN.
    if (!req.wait) this.background.checkCap(s);
    const accepted = this.gate(s, commit_id, review, req);
    const maxCalls = this.callCap(accepted, review);
    if (!req.wait) return this.background.start(s, plan, commit_id, { accepted, maxCalls }, program);
    return this.live(s, plan, commit_id, { accepted, maxCalls }, program);
  }

  /**
   * The vendor calls a run may make: a plan nobody accepted stops at the budget; an accepted one
   * at the bound its review showed (never below the budget; none when the bound is unknown).
   */
  private callCap(accepted: boolean, review: Review): number | undefined {
    if (!accepted) return this.limits.maxVendorCalls;
    return review.max_calls === null ? undefined : Math.max(review.max_calls, this.limits.maxVendorCalls);
  }

  private dryRun(s: ExecuteSession, plan: Plan, commit_id: string, review: Review): Outcome {
    const ref = this.deps.sessions.mintToken(s, { commit_id, verdict: review.verdict, mutations: review.mutations });
    const dry_review = { verdict: review.verdict, flow: review.flow, mutations: review.mutations, max_calls: review.max_calls, summary: review.text };
    const next = review.verdict === 'proceed' ? 'it runs as is: send it again without mode=plan' : `run it with plan_commit_ref=${ref} within 10 minutes`;
    return {
      status: 200, results: [], errors: [],
      text: `dry-run ${ref}: ${review.verdict}${review.mutations ? `, ${review.mutations} write${review.mutations === 1 ? '' : 's'}` : ''}${review.flow === 'clean' ? '' : `, flow: ${(review.flow as string[]).join(', ')}`}; ${next}\n${review.text}`,
      meta: { mode: 'plan', commit_id, plan_commit_ref: ref, dry_verdict: review.verdict, dry_review },
    };
  }

  /**
   * The review gate. A `plan_commit_ref`, when given, must be a pcN of this session for the same
   * commit id, unexpired and (for plans with writes) not yet used, `force` or not. Without one, a
   * plan with verdict `proceed` runs, and any other needs `force`. Returns whether the caller
   * accepted the plan (writes run only then).
   */
  private gate(s: ExecuteSession, commit_id: string, review: Review, req: Pick<ProgramRequest, 'force' | 'plan_commit_ref'>): boolean {
    if (req.plan_commit_ref !== undefined) {
      this.spendToken(s, req.plan_commit_ref, commit_id);
      return true;
    }
    if (req.force) return true;
    if (review.verdict === 'proceed') return false;
    const why = review.mutations ? `${review.mutations} write${review.mutations === 1 ? '' : 's'}` : (review.flow as string[]).join(', ');
    return fail('review_required', `this plan needs review (${why}) before it runs`, 'dry-run it with mode=plan, then send the same program with plan_commit_ref=<the pcN it returns> (or force=true)');
  }

  private spendToken(s: ExecuteSession, ref: string, commit_id: string): void {
    const token = s.tokens.get(ref) ?? fail('plan_token_unknown', `\`${ref}\` is not a plan token of this session`, 'dry-run the program with mode=plan to get a pcN');
    if (this.now() - token.minted_at > PLAN_TOKEN_TTL_MS) fail('plan_token_expired', `\`${ref}\` expired (plan tokens live 10 minutes)`, 'dry-run the program again with mode=plan');
    if (token.commit_id !== commit_id) fail('plan_token_mismatch', `\`${ref}\` was minted for another plan (${token.commit_id.slice(0, 12)}, this program is ${commit_id.slice(0, 12)})`, 'send the program exactly as dry-run, or dry-run this one');
    if (token.consumed_at !== undefined) fail('plan_token_consumed', `\`${ref}\` was already used for a live run`, 'a token of a plan with writes runs once; dry-run again to run it again');
    if (token.mutations > 0) token.consumed_at = this.now();
  }

  private async live(s: ExecuteSession, plan: Plan, commit_id: string, how: RunHow, program: string | undefined): Promise<Outcome> {
    const startedAt = new Date(this.now());
    const run = await executePlan(plan, this.registry, { ...this.deps.runtime, ...runOptions(how), signal: this.stopping.signal });
    const run_id = await this.store(s, plan, commit_id, run, startedAt, program);
    const results = this.blocks(s, run);
    this.recordRun(s, run_id, commit_id, run, startedAt, results);
    const status = run.status === 'succeeded' ? 200 : CODES[run.errors[0]?.code ?? 'internal_error'].status;
    return { status, results, errors: run.errors, meta: { mode: 'live', commit_id, run_id, status: run.status, ...(run.errors[0] ? { code: run.errors[0].code } : {}) } };
  }

  private recordRun(s: ExecuteSession, run_id: string, commit_id: string, run: RunResult, startedAt: Date, blocks: ResultBlock[]): void {
    this.deps.sessions.recordRun(s, { run_id, commit_id, status: run.status, at: startedAt.toISOString(), rows: blocks.reduce((n, b) => n + b.rows.length, 0) });
  }

  private store(s: ExecuteSession, plan: Plan, commit_id: string, run: RunResult, startedAt: Date, program: string | undefined): Promise<string> {
    return this.deps.artifacts.put(snapshotOf(plan, commit_id, run, { ...(program !== undefined ? { program } : {}), startedAt, session: { prompt_hash: s.prompt_hash, session: s.session, tenant: s.tenant } }));
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
    if (c.kind === 'page') return this.page(s, c);
    const op = this.background.find(s, c.handle.text);
    return c.kind === 'wait' ? this.background.wait(op) : this.background.cancel(op);
  }

  /**
   * page(pgN): the next page. The handle stays valid: sent again (a response lost in transit), it
   * fetches the same page and answers the same next handle; a failed fetch can be retried.
   */
  private async page(s: ExecuteSession, c: ContinuationStmt): Promise<Outcome> {
    const handle = c.handle.text;
    const state = s.pages.get(handle) ?? fail('unknown_page_handle', `\`${quote(handle)}\` is not a page handle of this session`, 'use the pgN printed in a "more" line of a result of this session');
    let projection = state.projection;
    if (c.kind === 'page' && c.projection) {
      const [api, name] = state.entity.split(':') as [string, string];
      const fields = this.registry.entity(api, name)?.fields.map((f) => f.name) ?? [];
      const bad = c.projection.fields.find((f) => !fields.includes(f.text));
      if (bad) fail('projection_unknown_field', `${state.entity} has no field \`${quote(bad.text)}\``, `fields: ${fields.join(', ')}`);
      projection = c.projection.fields.map((f) => f.text);
    }
    const { used: _used, entity: _entity, next: _next, ...page } = state;
    const r = await continuePage({ ...page, ...(projection ? { projection } : {}) }, this.registry, { ...this.deps.runtime, signal: this.stopping.signal });
    if (r.error) return { status: CODES[r.error.code].status, results: [], errors: [r.error], meta: { code: r.error.code } };
    state.used = true;
    const block: ResultBlock = { entity: state.entity, rows: r.rows };
    if (r.total !== undefined) block.total = r.total;
    if (r.page) block.next = state.next ??= this.deps.sessions.mintPage(s, r.page, state.entity);
    return { status: 200, results: [block], errors: [], meta: { mode: 'live' } };
  }

  /** The current line of an operation (the SSE snapshot) and whether it has ended. */
  snapshotLine(op: Operation): { line: string; terminal: boolean } {
    return this.background.snapshotLine(op);
  }

  /** POST .../plan: a client-compiled plan, checked, reviewed and run like a compiled program. */
  async resolvedPlan(s: ExecuteSession, body: PlanBody, req: Omit<ProgramRequest, 'program'>): Promise<Outcome> {
    const plan = checkResolvedPlan(body.plan, this.registry);
    this.checkPins(s, plan, 'plan');
    const clean: Plan = { version: plan.version, steps: plan.steps, bind: plan.bind, return: plan.return };
    const commit_id = planCommitId(clean);
    const review = reviewPlan(clean, this.registry, this.limits.maxVendorCalls);
    if (req.mode === 'plan') return this.dryRun(s, clean, commit_id, review);
    return this.runPlan(s, clean, commit_id, review, req, typeof body.program === 'string' ? body.program : undefined);
  }

  /** The operation `handle` of a session (for streams). */
  operation(s: ExecuteSession, handle: string): Operation {
    return this.background.find(s, handle);
  }

  /** A stored run of this session. */
  async artifact(s: ExecuteSession, runId: string): Promise<RunSnapshot> {
    return this.storedRun(s.prompt_hash, s.session, s.tenant, runId);
  }

  /**
   * A stored run by its address alone, for a session this process no longer holds (a restart
   * with a file store): the snapshot must name this session and the caller's tenant.
   */
  async storedRun(promptHash: string, session: string, tenant: string, runId: string): Promise<RunSnapshot> {
    const snap = isArtifactId(runId) ? await this.deps.artifacts.get(runId) : undefined;
    const mine = snap?.session?.prompt_hash === promptHash && snap.session.session === session && (snap.session.tenant ?? '') === tenant;
    return (mine ? snap : undefined) ?? fail('unknown_run', `no run \`${quote(runId)}\` in this session`, 'GET .../runs lists the runs of the session');
  }

  /** Resolves when no background operation runs. */
  idle(): Promise<void> {
    return this.background.idle();
  }

  /**
   * Shutdown, once the grace has passed: cancel every run still going (synchronous and
   * background) and give the cancellations `settleMs` to store what they did.
   */
  async cancelAll(settleMs: number): Promise<void> {
    this.stopping.abort();
    await this.background.cancelAll(settleMs);
    await Promise.race([this.backgroundHttp.close(), new Promise<void>((r) => setTimeout(r, settleMs).unref())]);
  }
}
