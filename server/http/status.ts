/**
 * The HTTP status of every answer, in one place: the status of each error code, and of each kind
 * of outcome of the execute core (which knows no protocol).
 */
import type { ErrorCode, SvcError } from '../../common/errors.js';
import type { Outcome } from '../execute/outcome.js';

/**
 * The HTTP status of every code (a failed request answers with the status of its first error).
 * A code without a sensible status of its own (authoring and loading codes that only reach HTTP
 * through a failed reload) answers 400.
 */
export const HTTP_STATUS: Record<ErrorCode, number> = {
  yaml_syntax: 400,
  schema_violation: 400,
  missing_catalog_metadata: 400,
  duplicate_name: 400,
  unsafe_entry_id: 400,
  bad_version: 400,
  unknown_entity: 400,
  unknown_field: 400,
  unknown_capability: 400,
  unknown_parameter: 400,
  missing_id_field: 400,
  missing_mapping: 400,
  orphan_mapping: 400,
  path_parameter_undeclared: 400,
  path_parameter_optional: 400,
  bad_type: 400,
  bad_auth: 400,
  bad_backend: 400,
  bad_enum: 400,
  bad_default: 400,
  bad_relation: 400,
  bad_capability: 400,
  bad_mapping: 400,
  unmapped_parameter: 400,
  source_read_failed: 400,
  openapi_unreadable: 400,
  openapi_invalid: 400,
  openapi_bad_ref: 400,
  openapi_ref_outside: 400,
  openapi_nothing_importable: 400,
  import_write_failed: 400,
  artifact_conflict: 409,
  artifact_unreadable: 400,
  artifact_missing: 400,
  hash_mismatch: 400,
  unsupported_format_version: 400,
  manifest_mismatch: 400,
  cgs_invalid: 400,
  version_conflict: 409,
  bad_backend_override: 400,
  backend_userinfo_ignored: 400,
  catalog_dir_empty: 400,
  bad_arguments: 400,
  syntax_error: 400,
  unexpected_character: 400,
  unterminated_string: 400,
  bad_escape: 400,
  bad_number: 400,
  unterminated_heredoc: 400,
  heredoc_missing_tag: 400,
  legacy_heredoc: 400,
  empty_program: 400,
  too_many_errors: 400,
  program_too_large: 400,
  unknown_symbol: 400,
  legacy_symbol: 400,
  legacy_slot: 400,
  unknown_relation: 400,
  unknown_argument: 400,
  duplicate_argument: 400,
  missing_argument: 400,
  wrong_type: 400,
  enum_value_not_allowed: 400,
  constraint_violation: 400,
  projection_unknown_field: 400,
  not_sortable: 400,
  unsortable_field: 400,
  write_in_read_position: 400,
  not_on_row: 400,
  unknown_binding: 400,
  duplicate_binding: 400,
  bad_handle: 400,
  continuation_not_alone: 400,
  fanout_too_large: 400,
  not_teachable: 400,
  write_not_accepted: 409,
  missing_secret: 424,
  vendor_credentials_missing: 424,
  credentials_config_invalid: 500,
  vendor_error: 502,
  vendor_timeout: 504,
  vendor_unreachable: 502,
  vendor_bad_response: 502,
  response_shape_mismatch: 502,
  vendor_body_too_large: 502,
  vendor_auth_failed: 502,
  deadline_exceeded: 504,
  cancelled: 409,
  catalog_mismatch: 409,
  step_skipped: 424,
  call_budget_exceeded: 422,
  unsupported_store: 400,
  not_found: 404,
  method_not_allowed: 405,
  body_too_large: 413,
  bad_json: 400,
  unsupported_media_type: 415,
  not_acceptable: 406,
  unknown_entry: 404,
  unknown_session: 404,
  unknown_logical_session: 404,
  api_not_allowed: 403,
  too_many_sessions: 429,
  session_stale: 409,
  catalog_not_in_session: 400,
  bad_seed: 400,
  review_required: 409,
  read_only: 403,
  plan_token_unknown: 404,
  plan_token_expired: 410,
  plan_token_consumed: 409,
  plan_token_mismatch: 409,
  unknown_page_handle: 404,
  page_exhausted: 410,
  unknown_operation_handle: 404,
  too_many_operations: 429,
  operation_not_on_replica: 400,
  operation_lost: 502,
  store_unavailable: 503,
  unknown_run: 404,
  run_not_stored: 200,
  run_artifact_pending: 200,
  run_artifact_lost: 410,
  run_artifact_unavailable: 503,
  auth_required: 401,
  forbidden: 403,
  reload_unavailable: 409,
  auth_config_invalid: 500,
  // terminal codes: never answered by the server; a status only because the table is total
  no_profile: 400,
  bad_profile: 400,
  workspace_damaged: 500,
  server_unreachable: 502,
  no_active_context: 400,
  ambiguous_entity: 400,
  unknown_seed: 400,
  catalog_changed: 409,
  device_login_unavailable: 404,
  device_login_unsupported: 501,
  mcp_config_invalid: 500,
  auth_token_expired: 401,
  auth_token_not_yet_valid: 401,
  auth_bad_signature: 401,
  auth_bad_algorithm: 401,
  auth_malformed_token: 401,
  auth_missing_claim: 401,
  auth_invalid_claim: 401,
  auth_bad_issuer: 401,
  auth_bad_audience: 401,
  auth_unknown_key: 401,
  auth_method_unavailable: 401,
  auth_ambiguous: 401,
  bad_authorization_header: 401,
  ambiguous_credentials: 400,
  host_not_allowed: 421,
  origin_not_allowed: 403,
  internal_error: 500,
};

/** The status of an error code. */
export function codeStatus(code: ErrorCode): number {
  return HTTP_STATUS[code];
}

/** The status of an error answer: the first error's. */
export function errorsStatus(errors: readonly SvcError[]): number {
  return codeStatus(errors[0]?.code ?? 'internal_error');
}

/**
 * The status of an execute outcome: a new session 201, a background run accepted 202, a report on
 * an operation 200 (its errors are what it reports), anything else 200, or the status of its
 * first error when it carries errors (a compile error, a failed run).
 */
export function outcomeStatus(o: Outcome): number {
  switch (o.kind) {
    case 'created':
      return 201;
    case 'started':
      return 202;
    case 'report':
      return 200;
    case 'result':
      return o.errors.length ? errorsStatus(o.errors) : 200;
  }
}
