export { compileProgram } from './compile.js';
export type { Compiled, CompileOptions } from './compile.js';
export { parseProgram } from './parse.js';
export { renderDiagnostic } from './render-diagnostic.js';
export type * from './ast.js';
export { PLAN_VERSION, planCommitId, planCatalogs } from './plan.js';
export type { Plan, PlanStep, PlanArg, Review, Verdict, FlowWarning } from './plan.js';
export { planSchema } from './plan-schema.js';
export { validatePlanShape, isPlan } from './validate-plan.js';
export { resolveProgram, DEFAULT_MAX_FANOUT, DEFAULT_MAX_LIMIT, LIMIT_ARG } from './resolve.js';
export { reviewPlan, REVIEW_MAX_ROWS, REVIEW_MAX_FANOUT_ROWS } from './review.js';
export { SymbolTable, defaultReads } from './symbols.js';
export type {
  Seed,
  Wave,
  SymbolTableJson,
  AnySymbol,
  EntitySymbol,
  CapabilitySymbol,
  RelationSymbol,
} from './symbols.js';
export { renderWave, waveRows, teachingRules, exampleProgram, TEACHING_HEADER } from './teaching.js';
export type { TeachingRow } from './teaching.js';
export { teachabilityCheck } from './teachable.js';
export { describeType, exampleLiteral } from './values.js';
export { MAX_PROGRAM_STATEMENTS, DEFAULT_MAX_VENDOR_CALLS } from './limits.js';
