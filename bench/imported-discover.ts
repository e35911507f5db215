/**
 * The `discover` part of the `imported` benchmark: ten plain-English intents an agent might bring
 * to the imported GitHub catalog, each with the entities that answer it, run through the server's
 * own `discover` (server/catalog/discover.ts) over the loaded registry. A hit is an answering
 * entity among the first rows discover returns: first (`@1`) and within the first three (`@3`,
 * what an agent reads of the answer table). Discovery itself is not tuned here; what the importer
 * writes (entity descriptions, capability descriptions) is what it reads.
 */
import type { Registry } from '../pack/index.js';
import { discover } from '../server/catalog/discover.js';

export interface Intent {
  /** What the agent asks, in its words. */
  text: string;
  /** Entities that answer it (the one holding the list or the write asked for). */
  accept: string[];
}

/** Fixed before the importer was changed for discovery, and not reworded since to suit the scores. */
export const GITHUB_INTENTS: Intent[] = [
  { text: 'list open pull requests of a repository', accept: ['PullRequestSimple', 'PullRequest'] },
  { text: 'who starred a repository', accept: ['SimpleUser', 'Stargazer'] },
  { text: 'create a comment on an issue', accept: ['IssueComment'] },
  { text: 'workflow runs of a repository', accept: ['WorkflowRun'] },
  { text: 'issues of a repository with a given label', accept: ['Issue'] },
  { text: 'releases of a repository', accept: ['Release'] },
  { text: 'commits of a repository', accept: ['Commit'] },
  { text: 'review comments on a pull request', accept: ['PullRequestReviewComment', 'ReviewComment'] },
  { text: 'gists of a user', accept: ['BaseGist', 'GistSimple'] },
  { text: 'branches of a repository', accept: ['ShortBranch', 'BranchWithProtection'] },
];

export interface IntentResult {
  intent: Intent;
  /** Entities of the first three rows, best first. */
  top: string[];
  /** 1-based rank of the first answering entity in the first 20 rows, or 0. */
  rank: number;
}

export interface DiscoverFigures {
  results: IntentResult[];
  at1: number;
  at3: number;
}

/** Runs every intent against catalog `api` of `registry`. */
export function discoverFigures(registry: Registry, api: string, intents = GITHUB_INTENTS): DiscoverFigures {
  const allowed = new Set([api]);
  const results = intents.map((intent) => {
    const rows = discover(registry, intent.text, { limit: 20, allowed });
    const rank = rows.findIndex((r) => intent.accept.includes(r.entity)) + 1;
    return { intent, top: rows.slice(0, 3).map((r) => r.entity), rank };
  });
  return {
    results,
    at1: results.filter((r) => r.rank === 1).length,
    at3: results.filter((r) => r.rank >= 1 && r.rank <= 3).length,
  };
}

/** `✓ "releases of a repository" -> Release (1)` or `✗ ... -> FullRepository, ... (Release 5th)`. */
export function intentLine(r: IntentResult): string {
  const mark = r.rank >= 1 && r.rank <= 3 ? '✓' : '✗';
  const where = r.rank === 0 ? 'not in the first 20' : `rank ${r.rank}`;
  return `${mark} "${r.intent.text}" -> ${r.top.join(', ')} (${r.intent.accept.join('/')}: ${where})`;
}
