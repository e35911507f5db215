/**
 * The read-only profile (docs/auth.md "Read-only callers"): a caller whose tenant may only read
 * (SVC_READ_ONLY, or per tenant) gets no plan that changes vendor data, refused with `read_only`
 * right after compiling (before a dry-run mints a pcN, before the gate, before any vendor call),
 * and is taught no write: its waves and its symbol table leave out every capability the compiler
 * would label `effect: 'write'` (`WRITE_KINDS`, the one rule of pack/cgs.ts). Pure.
 */
import { svcError, SvcFailure } from '../../common/errors.js';
import type { Plan } from '../../compiler/plan.js';
import type { SymbolTableJson, Wave } from '../../compiler/symbols.js';
import { WRITE_KINDS } from '../../pack/cgs.js';
import type { Registry } from '../../pack/registry.js';

/** Whether callers of a tenant may only read (`ServiceDeps.readOnly`); unset: nobody. */
export type ReadOnly = ((tenant: string) => boolean) | undefined;

/** A capability that changes vendor data; one the registry does not know is never taught either. */
export function writes(registry: Registry, api: string, capability: string): boolean {
  const cap = registry.capability(api, capability);
  return !cap || WRITE_KINDS.has(cap.kind);
}

/**
 * `read_only` when the caller of session `s` may only read and the plan has a step with
 * `effect: 'write'` (a resolved plan's effects were checked against the catalog, so none is
 * relabelled). The message names each write as `api:capability`, never by an `m#` the session
 * was not taught.
 */
export function refuseWrites(readOnly: ReadOnly, s: { tenant: string }, plan: Pick<Plan, 'steps'>): void {
  const named = new Set(plan.steps.filter((x) => x.effect === 'write').map((x) => `\`${x.api}:${x.capability}\``));
  if (!named.size || !readOnly?.(s.tenant)) return;
  throw new SvcFailure([
    svcError(
      'read_only',
      `this caller may only read, and the plan changes vendor data with ${[...named].join(', ')}: nothing was sent`,
      { hint: 'this deployment (or your tenant) is read-only: only reads run; ask the operator for write access' },
    ),
  ]);
}

/** The wave a read-only session is taught: without capabilities that write. */
export function readableWave(wave: Wave, registry: Registry): Wave {
  return { ...wave, capabilities: wave.capabilities.filter((c) => !writes(registry, c.api, c.capability)) };
}

/** The symbol table a read-only session shows: without capabilities that write. */
export function readableSymbols(j: SymbolTableJson, registry: Registry): SymbolTableJson {
  return { ...j, capabilities: j.capabilities.filter((c) => !writes(registry, c.api, c.capability)) };
}
