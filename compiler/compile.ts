/**
 * The compiler facade: program text -> plan IR + commit id + review, or diagnostics. Top-level
 * continuations (`page`, `wait`, `cancel`) are recognised and handed back for the server.
 * Diagnostics are bounded (`boundErrors`): the first 20 in program order, then `too_many_errors`.
 */
import { boundErrors } from '../common/bound-errors.js';
import type { SvcError } from '../common/errors.js';
import type { Registry } from '../pack/registry.js';
import type { ContinuationStmt } from './ast.js';
import { DEFAULT_MAX_VENDOR_CALLS } from './limits.js';
import { parseProgram } from './parse.js';
import { planCommitId, type Plan, type Review } from './plan.js';
import { resolveProgram, type ResolveOptions } from './resolve.js';
import { reviewPlan } from './review.js';
import { LineIndex } from './spans.js';
import type { SymbolTable } from './symbols.js';

export type Compiled =
  | { kind: 'plan'; plan: Plan; commit_id: string; review: Review; diagnostics: [] }
  | { kind: 'continuation'; continuation: ContinuationStmt; diagnostics: [] }
  | { kind: 'error'; diagnostics: SvcError[] };

export interface CompileOptions {
  registry: Registry;
  symbols?: SymbolTable;
  maxFanout?: number;
  maxLimit?: number;
  /** Budget of vendor calls: a plan that may make more needs review (default `DEFAULT_MAX_VENDOR_CALLS`, 200). */
  maxCalls?: number;
  /** A caller that may only read: "did you mean" hints name no capability that writes. */
  readsOnly?: boolean;
}

/**
 * Compile a program. Never throws on user input.
 * @example compileProgram('e1(city="Berlin")[name]', { registry, symbols })
 */
export function compileProgram(text: string, opts: CompileOptions): Compiled {
  const lines = new LineIndex(text);
  const parsed = parseProgram(text, lines);
  if (!parsed.program) return { kind: 'error', diagnostics: parsed.diagnostics };
  const [first] = parsed.program.statements;
  if (parsed.program.statements.length === 1 && first && first.kind !== 'binding' && first.kind !== 'expr') {
    return { kind: 'continuation', continuation: first, diagnostics: [] };
  }
  const ropts: ResolveOptions = { registry: opts.registry };
  if (opts.symbols) ropts.symbols = opts.symbols;
  if (opts.maxFanout !== undefined) ropts.maxFanout = opts.maxFanout;
  if (opts.maxLimit !== undefined) ropts.maxLimit = opts.maxLimit;
  if (opts.readsOnly) ropts.readsOnly = true;
  const r = resolveProgram(parsed.program, text, ropts, lines);
  // Resolution goes statement by statement, so its diagnostics are in program order already.
  if (!r.plan) return { kind: 'error', diagnostics: boundErrors(r.diagnostics) };
  const review = reviewPlan(r.plan, opts.registry, opts.maxCalls ?? DEFAULT_MAX_VENDOR_CALLS);
  return {
    kind: 'plan',
    plan: { ...r.plan, summary: review },
    commit_id: planCommitId(r.plan),
    review,
    diagnostics: [],
  };
}
