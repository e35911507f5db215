/**
 * How MCP renders what the execute core answers: a tool result whose `content` is TOON text (the
 * encoder the HTTP surface uses) holding everything an agent needs to read (rows, errors with
 * hints, handles), `structuredContent` with the same data as JSON, and `_meta.svc` with the
 * machine fields (run_ref, dry_review, dry_verdict, continuity, codes). Rows beyond 25 per result
 * are not inline: a `resource_link` points at the stored run, and a "more" field names the page
 * handle to pass to svc_run. Errors become `isError` results, never a protocol error.
 */
import { toonEncode as toon } from '../http/toon-fast.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ErrorCode, SvcError } from '../../common/errors.js';
import type { Outcome, ResultBlock } from '../execute/outcome.js';
import { blockJson, errorsJson, withHints } from '../execute/outcome-json.js';

/** Rows inline per result (SPEC: at most 25 in a terminal response). */
export const INLINE_ROWS = 25;

/** How MCP words the fix for some codes (the core's hints name no tool). */
const MCP_HINTS: Partial<Record<ErrorCode, string>> = {
  review_required: 'call svc with the program: it dry-runs and returns run_ref pcN; then call svc_run with it',
  plan_token_unknown: 'call svc with the program again for a new run_ref',
  plan_token_expired: 'call svc with the program again for a new run_ref',
  plan_token_consumed: 'call svc with the program again for a new run_ref',
  unknown_session: 'call svc_context again (same intent and seeds): it recovers the session',
  unknown_logical_session: 'call svc_context (intent and seeds) for a logical_session_ref',
  session_stale: 'call svc_context again: a catalog changed, so it opens a new symbol space',
  auth_required: 'call svc_incoming_auth first with bearer_token or api_key',
  catalog_not_in_session: 'add a seed of that catalog with svc_context first',
  unknown_page_handle: 'pass the run_ref of a "more" field of a result of this logical session',
  // The core's hint names wait(oN)/cancel(oN), which MCP does not dispatch.
  too_many_operations:
    'let the svc_run calls already running answer (or cancel those requests), then call svc_run with this run_ref again',
};

/** A tool error: `isError`, the errors as TOON text and as structured content, the first code in `_meta.svc`. */
export function errorResult(errors: SvcError[], meta: object = {}): CallToolResult {
  const list = errorsJson(withHints(errors, MCP_HINTS));
  return {
    isError: true,
    content: [{ type: 'text', text: toon({ errors: list }) }],
    structuredContent: { errors: list },
    _meta: { svc: { ...meta, code: errors[0]?.code } },
  };
}

export interface RenderScope {
  /** The logical session the result belongs to: page handles and run links are written with it. */
  ref: string;
}

/** The URI of a stored run, in the short logical-session form. */
export function runUri(ref: string, runId: string): string {
  return `svc://session/${ref}/run/${runId}`;
}

/** The result of svc (fused read or dry-run) or svc_run. */
export function programResult(o: Outcome, scope: RenderScope): CallToolResult {
  if (o.meta.mode === 'plan' && !o.errors.length) return dryRunResult(o);
  if (o.errors.length && !o.results.length) return errorResult(o.errors, o.meta);
  const runId = typeof o.meta.run_id === 'string' ? o.meta.run_id : undefined;
  const blocks = o.results.map((b) => blockObject(b, scope, runId));
  const body: Record<string, unknown> = blocks.length === 1 ? { ...blocks[0] } : { results: blocks };
  if (o.text && o.kind === 'report') body.status = o.text;
  if (o.errors.length) body.errors = errorsJson(withHints(o.errors, MCP_HINTS));
  if (o.warnings?.length) body.warnings = errorsJson(withHints(o.warnings, MCP_HINTS));
  const content: CallToolResult['content'] = [{ type: 'text', text: toon(body) }];
  if (runId && o.results.some((b) => b.rows.length > INLINE_ROWS))
    content.push({
      type: 'resource_link',
      uri: runUri(scope.ref, runId),
      name: runId,
      mimeType: 'application/json',
      description: 'the full run: every row of every result',
    });
  const { op: _op, ...meta } = o.meta;
  return {
    ...(o.errors.length ? { isError: true } : {}),
    content,
    structuredContent: body,
    _meta: { svc: { ...meta, ...(o.errors[0] ? { code: o.errors[0].code } : {}) } },
  };
}

function blockObject(b: ResultBlock, scope: RenderScope, runId: string | undefined): Record<string, unknown> {
  const over = b.rows.length > INLINE_ROWS;
  return blockJson(b, {
    more: (next) => `svc_run run_ref=${scope.ref}_${next}`,
    ...(over ? { extra: { shown: INLINE_ROWS, ...(runId ? { full: runUri(scope.ref, runId) } : {}) } } : {}),
    rows: b.rows.slice(0, INLINE_ROWS),
  });
}

/** A dry-run: the run_ref to pass to svc_run, and the review. */
function dryRunResult(o: Outcome): CallToolResult {
  const ref = String(o.meta.plan_commit_ref);
  const review = o.meta.dry_review!;
  const writes = review.mutations ? `, ${review.mutations} write${review.mutations === 1 ? '' : 's'}` : '';
  const flow = review.flow === 'clean' ? '' : `, flow: ${(review.flow as string[]).join(', ')}`;
  const text = `dry-run ${ref}: ${review.verdict}${writes}${flow}; to run it, call svc_run with run_ref=${ref} within 10 minutes\n${review.summary}`;
  const { plan_commit_ref: _p, ...meta } = o.meta;
  return {
    content: [{ type: 'text', text }],
    structuredContent: { run_ref: ref, dry_verdict: review.verdict, dry_review: review },
    _meta: { svc: { ...meta, run_ref: ref } },
  };
}

/** A teaching answer of svc_context. */
export function contextResult(o: Outcome, ref: string, continuity: Record<string, unknown>): CallToolResult {
  const entries = o.extra?.entries;
  const text = [`logical_session_ref: ${ref}`, o.text ?? ''].filter(Boolean).join('\n');
  const meta = {
    logical_session_ref: ref,
    continuity,
    domain_revision: o.meta.domain_revision,
    entries,
  };
  return {
    content: [{ type: 'text', text }],
    structuredContent: meta,
    _meta: { svc: meta },
  };
}

/** Plain text answers (discovery, the registry, auth). */
export function textResult(text: string, structured?: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text }], ...(structured ? { structuredContent: structured } : {}) };
}
