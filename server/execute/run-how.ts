/** How a live run was let through the review gate, and the runtime options that follow from it. */
import type { ExecuteOptions } from '../../runtime/execute.js';

/** How a live run was let through the gate: whether writes were accepted, and its call cap. */
export interface RunHow {
  accepted: boolean;
  maxCalls: number | undefined;
}

/** The runtime options that `how` sets. */
export function runOptions(how: RunHow): Pick<ExecuteOptions, 'accepted' | 'maxCalls'> {
  return { accepted: how.accepted, ...(how.maxCalls !== undefined ? { maxCalls: how.maxCalls } : {}) };
}
