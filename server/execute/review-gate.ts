/**
 * The review gate of live runs and the dry-run that feeds it: a dry-run mints a plan token (pcN)
 * bound to the plan's commit id; a live run passes the gate with a valid token, with `force`, or
 * because its review says `proceed`; the call cap a run gets follows from how it passed. A check
 * (`mode=check`) answers the review alone.
 */
import { svcError, SvcFailure } from '../../common/errors.js';
import type { Plan, Review } from '../../compiler/plan.js';
import { REVIEW_MAX_ROWS } from '../../compiler/review.js';
import type { Limits } from '../limits.js';
import type { Outcome, PlainOutcome, SvcMeta } from './outcome.js';
import { quote } from '../../common/quote.js';
import { tokenProblem, type SessionRepository } from './repository.js';
import { SESSION_HOLDS, trimMap, type PlanToken, type SessionKey, type SessionState } from './state.js';

/**
 * Dry-run: mint the next pcN for the plan and answer its review. The token keeps the program text
 * (within the session's budget, `SESSION_HOLDS.tokenProgramBytes`, newest first), so a run can be
 * asked for by the token alone (`runToken`).
 */
export async function dryRun(
  repo: SessionRepository,
  s: SessionKey,
  plan: Plan,
  commit_id: string,
  review: Review,
  now: number,
  program?: string,
): Promise<Outcome> {
  const ref = await repo.update(s, (st) => {
    const name = `pc${++st.counters.pc}`;
    st.tokens.set(name, {
      commit_id,
      verdict: review.verdict,
      mutations: review.mutations,
      minted_at: now,
      ...(program !== undefined ? { program } : {}),
    });
    trimMap(st.tokens, SESSION_HOLDS.maxTokens);
    keepProgramsWithinBudget(st.tokens);
    return name;
  });
  const next =
    review.verdict === 'proceed'
      ? 'it runs as is: send it again as a live program'
      : `run it with its token ${ref} within 10 minutes`;
  return {
    kind: 'result',
    results: [],
    errors: [],
    text: `dry-run ${ref}: ${reviewLine(review)}; ${next}\n${review.text}`,
    meta: { mode: 'plan', commit_id, plan_commit_ref: ref, dry_verdict: review.verdict, dry_review: dryReview(review) },
  };
}

/**
 * The answer of `mode=check` for a plan: its review, as a dry-run reports it, without a pcN (the
 * session is not touched). @example checkedPlan(c.commit_id, c.review)
 */
export function checkedPlan(commit_id: string, review: Review): Outcome {
  const next =
    review.verdict === 'proceed' ? 'it runs as a live program' : 'dry-run it (mode=plan) for a pcN to run it';
  return {
    ...checked(`check: ${reviewLine(review)}; ${next}\n${review.text}`),
    meta: { mode: 'check', commit_id, dry_verdict: review.verdict, dry_review: dryReview(review) },
  };
}

/** The answer of `mode=check` with no plan to review (a continuation): `text` says why. */
export function checked(text: string): PlainOutcome {
  return { kind: 'result', results: [], errors: [], text, meta: { mode: 'check' } };
}

/** `_meta.svc.dry_review` of a review. */
function dryReview(review: Review): NonNullable<SvcMeta['dry_review']> {
  return {
    verdict: review.verdict,
    flow: review.flow,
    mutations: review.mutations,
    max_calls: review.max_calls,
    summary: review.text,
  };
}

/** `proceed, 2 writes, flow: …`: a review's verdict, writes and flow on one line. */
function reviewLine(review: Review): string {
  const writes = review.mutations ? `, ${review.mutations} write${review.mutations === 1 ? '' : 's'}` : '';
  const flow = review.flow === 'clean' ? '' : `, flow: ${review.flow.join(', ')}`;
  return `${review.verdict}${writes}${flow}`;
}

/** The program a pcN of the session was minted for, when it is usable and its program still kept. */
export function tokenProgram(s: SessionState, ref: string, now: number): string {
  if (!/^pc\d{1,9}$/.test(ref))
    throw new SvcFailure([
      svcError('bad_arguments', `\`${quote(ref, 40)}\` is not a run_ref`, {
        hint: 'send the pcN of a dry-run, or the page handle of a "more" line',
      }),
    ]);
  const token = s.tokens.get(ref);
  const problem = tokenProblem(ref, token, token?.commit_id ?? '', now);
  if (problem) throw new SvcFailure([problem]);
  if (token!.program === undefined)
    throw new SvcFailure([
      svcError('plan_token_unknown', `the program of \`${ref}\` is no longer held (a session keeps 64 KiB of them)`, {
        hint: 'dry-run the program again for a new pcN',
      }),
    ]);
  return token!.program;
}

/** Drop the programs of the oldest tokens until the kept ones fit the session's budget. */
function keepProgramsWithinBudget(tokens: Map<string, PlanToken>): void {
  let bytes = 0;
  for (const t of [...tokens.values()].reverse()) {
    if (t.program === undefined) continue;
    bytes += t.program.length;
    if (bytes > SESSION_HOLDS.tokenProgramBytes) delete t.program;
  }
}

/**
 * The review gate. A `plan_commit_ref`, when given, must be a pcN of this session for the same
 * commit id, unexpired and (for plans with writes) not yet used, `force` or not; it is spent
 * atomically. Without one, a plan with verdict `proceed` runs, and any other needs `force`.
 * Returns whether the caller accepted the plan (writes run only then).
 */
export async function passGate(
  repo: SessionRepository,
  s: SessionKey,
  commit_id: string,
  review: Review,
  req: { force: boolean; plan_commit_ref?: string },
  now: number,
): Promise<boolean> {
  if (req.plan_commit_ref !== undefined) {
    await repo.spendToken(s, req.plan_commit_ref, commit_id, now);
    return true;
  }
  if (req.force) return true;
  if (review.verdict === 'proceed') return false;
  const why = review.mutations
    ? `${review.mutations} write${review.mutations === 1 ? '' : 's'}`
    : (review.flow as string[]).join(', ');
  // A read held back only by its row bound: a limit is a fix an agent can make at once. Said in
  // the message: each surface words the hint (the pcN route) its own way (server/http/hints.ts).
  const onlyUnbounded = !review.mutations && review.flow.length === 1 && review.flow[0] === 'unbounded_list';
  const atOnce = onlyUnbounded ? `; with limit=N (N up to ${REVIEW_MAX_ROWS}) on the list it runs at once` : '';
  throw new SvcFailure([
    svcError('review_required', `this plan needs review (${why}) before it runs${atOnce}`, {
      hint: 'dry-run it, then run the same program with the pcN the dry-run returns (or with force)',
    }),
  ]);
}

/**
 * The vendor calls a run may make: a plan nobody accepted stops at the budget; an accepted one
 * at the bound its review showed (never below the budget; none when the bound is unknown).
 */
export function callCap(limits: Pick<Limits, 'maxVendorCalls'>, accepted: boolean, review: Review): number | undefined {
  if (!accepted) return limits.maxVendorCalls;
  return review.max_calls === null ? undefined : Math.max(review.max_calls, limits.maxVendorCalls);
}
