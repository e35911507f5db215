/**
 * How the HTTP surface words the fix for some codes. The core's hints speak in program forms and
 * are the same on every surface ("dry-run it, then run it with its pcN"); on HTTP the same advice
 * names the query parameter or route that does it. One table, applied where execute answers are
 * rendered; a code without an entry keeps the core's hint.
 */
import type { ErrorCode, SvcError } from '../../common/errors.js';
import { withHints } from '../execute/outcome-json.js';

export const HTTP_HINTS: Partial<Record<ErrorCode, string>> = {
  review_required:
    'dry-run it with mode=plan, then send the same program with plan_commit_ref=<the pcN it returns> (or force=true)',
  plan_token_unknown: 'dry-run the program with mode=plan to get a pcN',
  plan_token_expired: 'dry-run the program again with mode=plan',
  unknown_session: 'open one with POST /execute {"entry_id": "...", "seeds": ["api:Entity"]}',
  session_stale:
    'open a new session with POST /execute and learn its symbols again; old symbols may mean something else',
};

/** `errors` with the HTTP wording of their hints. */
export function httpHints(errors: SvcError[]): SvcError[] {
  return withHints(errors, HTTP_HINTS);
}
