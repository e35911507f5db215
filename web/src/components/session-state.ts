/** What the page holds about an open session: its address, pinned catalogs, rules, waves and symbols. */
import type { PinnedEntry, Symbols } from '../api/types.js';
import type { SessionRef } from '../api/svc.js';
import type { Wave } from './waves.js';

export type { Wave };

export interface SessionState {
  ref: SessionRef;
  entry: string;
  entries: PinnedEntry[];
  revision: number;
  rules: string[];
  waves: Wave[];
  symbols: Symbols | null;
}
