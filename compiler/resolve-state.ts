/**
 * The state one resolution shares between its parts: the diagnostics, the steps made so far (by
 * id, with how many steps depend on each), the bindings and the bounds. Owns how a diagnostic is
 * recorded and when a hint may search for near names.
 */
import type { ErrorCode, SvcError } from '../common/errors.js';
import { svcError } from '../common/errors.js';
import type { HintOptions } from '../common/suggest.js';
import type { Entity } from '../pack/cgs.js';
import type { Chain, SrcSpan } from './ast.js';
import type { PlanStep } from './plan.js';
import { DEFAULT_MAX_FANOUT, DEFAULT_MAX_LIMIT, type ResolveOptions } from './resolve-options.js';
import { LineIndex } from './spans.js';

/** What a resolved expression yields. */
export interface Shape {
  api: string;
  entity: Entity;
  card: 'rows' | 'row' | 'none';
  step: PlanStep;
  /** True when the step was made by this chain (so it may be folded or projected). */
  own: boolean;
}

export class ResolveState {
  readonly lines: LineIndex;
  readonly diags: SvcError[] = [];
  readonly steps: PlanStep[] = [];
  /** The steps by id, and how many steps depend on each (so a lookup never scans `steps`). */
  readonly byId = new Map<string, PlanStep>();
  private readonly dependents = new Map<string, number>();
  /** Step ids are never reused, even when a folded parent is dropped (renumber makes them dense). */
  private stepCount = 0;
  /** Set once the plan has more than `MAX_PROGRAM_STATEMENTS` steps: resolution stops there. */
  tooLarge = false;
  /**
   * Set while resolving a statement after enough diagnostics to show: its diagnostics are only
   * counted, so they skip the "did you mean" search.
   */
  quiet = false;
  readonly bindings = new Map<string, Shape>();
  /** The expression each binding was made from (hints quote it). */
  readonly bindingExprs = new Map<string, Chain>();
  readonly maxFanout: number;
  readonly maxLimit: number;

  constructor(
    source: string,
    readonly opts: ResolveOptions,
    lines?: LineIndex,
  ) {
    this.lines = lines ?? new LineIndex(source);
    this.maxFanout = opts.maxFanout ?? DEFAULT_MAX_FANOUT;
    this.maxLimit = opts.maxLimit ?? DEFAULT_MAX_LIMIT;
  }

  fail(code: ErrorCode, at: SrcSpan, message: string, hint?: string): undefined {
    this.diags.push(svcError(code, message, { span: this.lines.span(at), ...(hint ? { hint } : {}) }));
    return undefined;
  }

  /** A hint that searches for near names: skipped while `quiet`. */
  suggest(hint: () => string): string | undefined {
    return this.quiet ? undefined : hint();
  }

  /** A fresh step id (`n<count>`). */
  nextStepId(): string {
    return `n${++this.stepCount}`;
  }

  /** How many steps made so far depend on `id`. */
  dependentsOf(id: string): number {
    return this.dependents.get(id) ?? 0;
  }

  push(step: PlanStep): void {
    this.steps.push(step);
    this.byId.set(step.id, step);
    for (const d of step.depends_on) this.dependents.set(d, (this.dependents.get(d) ?? 0) + 1);
  }

  /** Drop the last step (a folded parent). */
  pop(): void {
    const step = this.steps.pop()!;
    this.byId.delete(step.id);
    for (const d of step.depends_on) this.dependents.set(d, (this.dependents.get(d) ?? 1) - 1);
  }
}

/** How the resolver lists `what` when no name is close: "fields: `a`, `b`", or "there are no fields here". */
export function listOf(what: string): HintOptions {
  return { known: what, none: `there are no ${what} here` };
}
