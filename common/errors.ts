/**
 * One error model for all of svc. User mistakes are returned as `SvcError` values (diagnostics);
 * bugs are thrown. Each surface maps a `code` to its own form in one place (HTTP status, MCP
 * `isError`, CLI exit code).
 */

/** Where a diagnostic points: a file (when there is one), 1-based line and column. */
export interface Span {
  file?: string;
  line: number;
  col: number;
  endLine?: number;
  endCol?: number;
}

export interface SvcError {
  /** Stable snake_case code from `CODES`. */
  code: ErrorCode;
  /** One line saying what is wrong. */
  message: string;
  /** How to fix it, addressed to the author or agent. */
  hint?: string;
  /** Source position, when the error is about a piece of text. */
  span?: Span;
  /** JSON pointer into the document the error is about (for example a CGS path). */
  path?: string;
  /** The file the error is about when there is no line and column (for example an artifact). */
  file?: string;
  /** Short free-form detail (never a secret, never a stack trace). */
  cause?: string;
}

/**
 * Every stable code svc reports, with the HTTP status the server answers with.
 * Add new codes here; tests assert codes, so never rename one.
 */
export const CODES = {
  // authoring and packing
  yaml_syntax: { status: 400, about: 'a catalog source file is not valid YAML' },
  schema_violation: { status: 400, about: 'a catalog source file breaks the authoring JSON Schema' },
  missing_catalog_metadata: { status: 400, about: 'no source file holds the `catalog` section' },
  duplicate_name: { status: 400, about: 'a name is declared twice' },
  unsafe_entry_id: { status: 400, about: 'entry_id is not a safe identifier' },
  bad_version: { status: 400, about: 'version is not a positive integer' },
  unknown_entity: { status: 400, about: 'a reference names an entity that does not exist' },
  unknown_field: { status: 400, about: 'a reference names a field that does not exist' },
  unknown_capability: { status: 400, about: 'a reference names a capability that does not exist' },
  unknown_parameter: { status: 400, about: 'a reference names a parameter that does not exist' },
  missing_id_field: { status: 400, about: 'an entity has no id field among its fields' },
  missing_mapping: { status: 400, about: 'a capability has no HTTP mapping' },
  orphan_mapping: { status: 400, about: 'an HTTP mapping names no capability' },
  path_parameter_undeclared: { status: 400, about: 'a path template variable is not a declared parameter' },
  path_parameter_optional: { status: 400, about: 'a path template variable is an optional parameter' },
  bad_type: { status: 400, about: 'a type is incomplete: enum without values, ref without entity, array without items' },
  bad_auth: { status: 400, about: 'the outbound auth block lacks what its scheme needs' },
  bad_backend: { status: 400, about: 'the backend URL is not an absolute http(s) URL' },
  bad_enum: { status: 400, about: 'an enum is empty, repeats a value, or its default is not allowed' },
  bad_default: { status: 400, about: 'a default does not match the declared type' },
  bad_relation: { status: 400, about: 'a relation cannot be followed as declared' },
  bad_capability: { status: 400, about: 'a capability is inconsistent with its kind' },
  bad_mapping: { status: 400, about: 'an HTTP mapping is inconsistent with its capability' },
  unmapped_parameter: { status: 400, about: 'a parameter is sent nowhere in the HTTP request' },
  source_read_failed: { status: 400, about: 'a catalog source directory or file cannot be read' },
  // artifacts and loading
  artifact_conflict: { status: 409, about: 'a different artifact with the same file name already exists' },
  artifact_unreadable: { status: 400, about: 'an artifact or manifest file cannot be read or decoded' },
  artifact_missing: { status: 400, about: 'a manifest names an artifact file that does not exist' },
  hash_mismatch: { status: 400, about: 'the CGS content does not hash to the manifest cgs_hash' },
  unsupported_format_version: { status: 400, about: 'the CGS format_version is not supported' },
  manifest_mismatch: { status: 400, about: 'manifest and CGS disagree on entry_id or version' },
  cgs_invalid: { status: 400, about: 'a CGS breaks the interchange JSON Schema' },
  version_conflict: { status: 409, about: 'two different artifacts claim the same entry_id and version' },
  bad_backend_override: { status: 400, about: 'a backend URL override is malformed or names no entry' },
  backend_userinfo_ignored: { status: 400, about: 'a backend URL carries user:password, which svc never sends (a warning; the entry loads without it)' },
  catalog_dir_empty: { status: 400, about: 'a catalog directory holds no loadable catalog' },
  bad_arguments: { status: 400, about: 'command-line or request arguments are invalid' },
  // program text: lexing and parsing (compiler/)
  syntax_error: { status: 400, about: 'the program does not follow the grammar' },
  unexpected_character: { status: 400, about: 'a character that starts no token' },
  unterminated_string: { status: 400, about: 'a double-quoted string has no closing quote on its line' },
  bad_escape: { status: 400, about: 'a string holds an unknown backslash escape' },
  bad_number: { status: 400, about: 'a number literal is malformed or out of range' },
  unterminated_heredoc: { status: 400, about: 'a heredoc has no closing line holding its tag' },
  heredoc_missing_tag: { status: 400, about: 'a heredoc opener `<<` has no tag before the newline' },
  legacy_heredoc: { status: 400, about: 'the removed three-character heredoc opener' },
  empty_program: { status: 400, about: 'the program has no statement' },
  too_many_errors: { status: 400, about: 'more errors than are shown: the count of those left out (MAX_SHOWN_ERRORS)' },
  program_too_large: { status: 400, about: 'a program or plan has more statements or steps than allowed (MAX_PROGRAM_STATEMENTS)' },
  // program text: resolving and checking (compiler/)
  unknown_symbol: { status: 400, about: 'a symbol or qualified name that the session does not know' },
  legacy_symbol: { status: 400, about: 'a `p#` parameter symbol: parameters use wire names' },
  legacy_slot: { status: 400, about: 'an `s#` transport slot: removed' },
  unknown_relation: { status: 400, about: 'a relation the entity does not have' },
  unknown_argument: { status: 400, about: 'an argument the capability does not take' },
  duplicate_argument: { status: 400, about: 'an argument given twice' },
  missing_argument: { status: 400, about: 'a required argument is missing' },
  wrong_type: { status: 400, about: 'a literal of the wrong type for the parameter' },
  enum_value_not_allowed: { status: 400, about: 'a value outside the enum of the parameter' },
  projection_unknown_field: { status: 400, about: 'a projection names a field the entity does not have' },
  write_in_read_position: { status: 400, about: 'a write capability where a read is expected' },
  not_on_row: { status: 400, about: 'a capability that acts on no row is written after a row' },
  unknown_binding: { status: 400, about: 'a name that no earlier line binds' },
  duplicate_binding: { status: 400, about: 'a name bound twice' },
  bad_handle: { status: 400, about: 'a continuation handle of the wrong form' },
  continuation_not_alone: { status: 400, about: 'page/wait/cancel mixed with other statements' },
  fanout_too_large: { status: 400, about: 'a binding fans out over more rows than allowed' },
  not_teachable: { status: 400, about: 'a capability whose generated example program does not compile' },
  // execution (runtime/)
  write_not_accepted: { status: 409, about: 'a plan with writes was run without being accepted' },
  missing_secret: { status: 424, about: 'an environment variable named by the catalog auth is not set' },
  vendor_error: { status: 502, about: 'the vendor answered with an HTTP error status' },
  vendor_timeout: { status: 504, about: 'the vendor did not answer within the request timeout' },
  vendor_unreachable: { status: 502, about: 'the vendor could not be reached or reset the connection' },
  vendor_bad_response: { status: 502, about: 'the vendor answered with malformed JSON, a wrong content type or an unexpected shape' },
  vendor_body_too_large: { status: 502, about: 'the vendor answered with a body over the size limit' },
  vendor_auth_failed: { status: 502, about: 'the OAuth2 token endpoint refused the client credentials' },
  deadline_exceeded: { status: 504, about: 'the run did not finish before its overall deadline' },
  cancelled: { status: 409, about: 'the run was cancelled' },
  catalog_mismatch: { status: 409, about: 'a plan was compiled against a catalog content the server does not hold' },
  step_skipped: { status: 424, about: 'a step did not run because a step it needs failed' },
  call_budget_exceeded: { status: 422, about: 'the run reached its budget of vendor calls (maxCalls) and stopped before the next call' },
  unsupported_store: { status: 400, about: 'a storage URL names a scheme this build does not support' },
  // HTTP surface (server/)
  not_found: { status: 404, about: 'no route, entry or resource at this address' },
  method_not_allowed: { status: 405, about: 'the route exists but not for this method' },
  body_too_large: { status: 413, about: 'the request body is over the size limit' },
  bad_json: { status: 400, about: 'the request body is not a JSON object' },
  unsupported_media_type: { status: 415, about: 'the request body has a content type the route does not take' },
  not_acceptable: { status: 406, about: 'no response format matches the Accept header' },
  // execute sessions, plan tokens and page handles (server/)
  unknown_entry: { status: 404, about: 'no loaded catalog has this entry_id' },
  unknown_session: { status: 404, about: 'no execute session at this prompt_hash and session' },
  too_many_sessions: { status: 429, about: 'the tenant or the server holds as many sessions as allowed, each running a background operation' },
  session_stale: { status: 409, about: 'a catalog pinned by the session changed (reload): the session is not reused' },
  catalog_not_in_session: { status: 400, about: 'a program names a catalog the session has not loaded' },
  bad_seed: { status: 400, about: 'a seed is not api:Entity of a loaded catalog' },
  review_required: { status: 409, about: 'a plan that needs review was run live without plan_commit_ref or force' },
  plan_token_unknown: { status: 404, about: 'plan_commit_ref names no pcN of this session' },
  plan_token_expired: { status: 410, about: 'the pcN is older than the plan commit TTL (10 minutes)' },
  plan_token_consumed: { status: 409, about: 'the pcN of a plan with writes was already used' },
  plan_token_mismatch: { status: 409, about: 'the pcN was minted for another plan' },
  unknown_page_handle: { status: 404, about: 'page(pgN) names no page handle of this session' },
  page_exhausted: { status: 410, about: 'the page handle was already continued, or its result has no more pages' },
  unknown_operation_handle: { status: 404, about: 'wait or cancel names no operation of this session' },
  too_many_operations: { status: 429, about: 'the per-session cap of running operations is reached' },
  operation_not_on_replica: { status: 400, about: 'the operation runs on another replica' },
  unknown_run: { status: 404, about: 'no stored run artifact with this id in the session' },
  run_not_stored: { status: 200, about: 'a warning: the run completed but its artifact could not be stored' },
  auth_required: { status: 401, about: 'a control-plane or inbound credential is missing' },
  forbidden: { status: 403, about: 'the credential is wrong or does not reach this resource' },
  reload_unavailable: { status: 409, about: 'catalog reload needs a server started with --catalog-dir' },
  // inbound authentication (server/auth/)
  auth_config_invalid: { status: 500, about: 'the inbound auth settings cannot start the server' },
  auth_token_expired: { status: 401, about: 'the JWT has expired (exp)' },
  auth_token_not_yet_valid: { status: 401, about: 'the JWT is not valid yet (nbf), or was issued in the future (iat), beyond the clock skew' },
  auth_bad_signature: { status: 401, about: 'the JWT signature does not verify with the configured secret' },
  auth_bad_algorithm: { status: 401, about: 'the JWT is not signed with HS256' },
  auth_malformed_token: { status: 401, about: 'the bearer token is not a well-formed JWT' },
  auth_missing_claim: { status: 401, about: 'the JWT lacks sub or tenant_id (tid)' },
  auth_invalid_claim: { status: 401, about: 'a JWT claim svc reads (sub, tenant_id, tid) is present but not a non-empty string' },
  auth_bad_issuer: { status: 401, about: 'the JWT iss does not match SVC_AUTH_JWT_ISSUER' },
  auth_bad_audience: { status: 401, about: 'the JWT aud does not match SVC_AUTH_JWT_AUDIENCE' },
  auth_unknown_key: { status: 401, about: 'the X-API-Key is not in the key file' },
  auth_method_unavailable: { status: 401, about: 'the server is not configured for this kind of credential' },
  auth_ambiguous: { status: 401, about: 'both a bearer token and an API key were sent' },
  bad_authorization_header: { status: 401, about: 'the Authorization header is not `Bearer <token>`' },
  internal_error: { status: 500, about: 'a bug in svc; the message carries no detail' },
} as const satisfies Record<string, { status: number; about: string }>;

export type ErrorCode = keyof typeof CODES;

/** Build an `SvcError` value; drops undefined optional fields so values compare cleanly. */
export function svcError(code: ErrorCode, message: string, extra: Omit<SvcError, 'code' | 'message'> = {}): SvcError {
  const e: SvcError = { code, message };
  if (extra.hint !== undefined) e.hint = extra.hint;
  if (extra.span !== undefined) e.span = extra.span;
  if (extra.path !== undefined) e.path = extra.path;
  if (extra.file !== undefined) e.file = extra.file;
  if (extra.cause !== undefined) e.cause = extra.cause;
  return e;
}

/** An exception that carries `SvcError` values across an I/O boundary (for example a CLI command). */
export class SvcFailure extends Error {
  readonly errors: SvcError[];
  constructor(errors: SvcError[]) {
    super(errors.map((e) => `${e.code}: ${e.message}`).join('; '));
    this.name = 'SvcFailure';
    this.errors = errors;
  }
}

/** `file:line:col: code: message` plus an indented `hint:` line: the form the CLI prints. */
export function formatError(e: SvcError): string {
  const where = e.span ? `${e.span.file ?? '<input>'}:${e.span.line}:${e.span.col}: ` : e.file ? `${e.file}: ` : '';
  const at = !e.span && e.path ? ` (at ${e.path || '/'})` : '';
  const hint = e.hint ? `\n  hint: ${e.hint}` : '';
  return `${where}${e.code}: ${e.message}${at}${hint}`;
}
