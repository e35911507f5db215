/** How a live run was let through the review gate, and the runtime options that follow from it. */
import type { ExecuteOptions } from '../../runtime/execute.js';
import type { Caller } from '../../runtime/credentials/types.js';
import type { GraphView } from '../../runtime/graph.js';

/** How a live run was let through the gate: whether writes were accepted, and its call cap. */
export interface RunHow {
  accepted: boolean;
  maxCalls: number | undefined;
  /** Who the vendor calls are made for. */
  caller?: Caller;
  /** The session graph the run reads and feeds. */
  graph?: GraphView;
}

/** The runtime options that `how` sets. */
export function runOptions(how: RunHow): Pick<ExecuteOptions, 'accepted' | 'maxCalls' | 'caller' | 'graph'> {
  return {
    accepted: how.accepted,
    ...(how.maxCalls !== undefined ? { maxCalls: how.maxCalls } : {}),
    ...(how.caller ? { caller: how.caller } : {}),
    ...(how.graph ? { graph: how.graph } : {}),
  };
}
