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
 * Every stable code svc reports, with what it means. Add new codes here; tests assert codes, so
 * never rename one. How a surface answers a code (an HTTP status, an MCP tool error, a CLI exit
 * code) is that surface's own table: server/http/status.ts for HTTP.
 */
export const CODES = {
  // authoring and packing
  yaml_syntax: { about: 'a catalog source file is not valid YAML' },
  schema_violation: { about: 'a catalog source file breaks the authoring JSON Schema' },
  missing_catalog_metadata: { about: 'no source file holds the `catalog` section' },
  duplicate_name: { about: 'a name is declared twice' },
  unsafe_entry_id: { about: 'entry_id is not a safe identifier' },
  bad_version: { about: 'version is not a positive integer' },
  unknown_entity: { about: 'a reference names an entity that does not exist' },
  unknown_field: { about: 'a reference names a field that does not exist' },
  unknown_capability: { about: 'a reference names a capability that does not exist' },
  unknown_parameter: { about: 'a reference names a parameter that does not exist' },
  missing_id_field: { about: 'an entity has no id field among its fields' },
  missing_mapping: { about: 'a capability has no HTTP mapping' },
  orphan_mapping: { about: 'an HTTP mapping names no capability' },
  path_parameter_undeclared: { about: 'a path template variable is not a declared parameter' },
  path_parameter_optional: { about: 'a path template variable is an optional parameter' },
  bad_type: {
    about:
      'a type is incomplete (enum without values, ref without entity, array without items) or a parameter constraint does not fit it',
  },
  bad_auth: { about: 'the outbound auth block lacks what its scheme needs' },
  bad_backend: { about: 'the backend URL is not an absolute http(s) URL' },
  bad_enum: { about: 'an enum is empty, repeats a value, or its default is not allowed' },
  bad_default: { about: 'a default does not match the declared type' },
  bad_relation: { about: 'a relation cannot be followed as declared' },
  bad_capability: { about: 'a capability is inconsistent with its kind' },
  bad_mapping: { about: 'an HTTP mapping is inconsistent with its capability' },
  unmapped_parameter: { about: 'a parameter is sent nowhere in the HTTP request' },
  source_read_failed: { about: 'a catalog source directory or file cannot be read' },
  // importing OpenAPI documents (svc import openapi)
  openapi_unreadable: { about: 'the OpenAPI document (or the directory said to hold one) cannot be read' },
  openapi_invalid: { about: 'the file is not an OpenAPI 3.x or Swagger 2.0 document, or not valid YAML/JSON' },
  openapi_bad_ref: { about: 'a $ref of the OpenAPI document does not resolve' },
  openapi_ref_outside: {
    about:
      'a $ref of the OpenAPI document reads outside its folder and the allowed ones, or names a URL (never fetched)',
  },
  openapi_nothing_importable: { about: 'no operation of the OpenAPI document maps to a capability' },
  import_write_failed: { about: 'the imported catalog cannot be written to the output directory' },
  // artifacts and loading
  artifact_conflict: { about: 'a different artifact with the same file name already exists' },
  artifact_unreadable: { about: 'an artifact or manifest file cannot be read or decoded' },
  artifact_missing: { about: 'a manifest names an artifact file that does not exist' },
  hash_mismatch: { about: 'the CGS content does not hash to the manifest cgs_hash' },
  unsupported_format_version: { about: 'the CGS format_version is not supported' },
  manifest_mismatch: { about: 'manifest and CGS disagree on entry_id or version' },
  cgs_invalid: { about: 'a CGS breaks the interchange JSON Schema' },
  version_conflict: { about: 'two different artifacts claim the same entry_id and version' },
  bad_backend_override: { about: 'a backend URL override is malformed or names no entry' },
  backend_userinfo_ignored: {
    about: 'a backend URL carries user:password, which svc never sends (a warning; the entry loads without it)',
  },
  catalog_dir_empty: { about: 'a catalog directory holds no loadable catalog' },
  bad_arguments: { about: 'command-line or request arguments are invalid' },
  // program text: lexing and parsing (compiler/)
  syntax_error: { about: 'the program does not follow the grammar' },
  unexpected_character: { about: 'a character that starts no token' },
  unterminated_string: { about: 'a double-quoted string has no closing quote on its line' },
  bad_escape: { about: 'a string holds an unknown backslash escape' },
  bad_number: { about: 'a number literal is malformed or out of range' },
  unterminated_heredoc: { about: 'a heredoc has no closing line holding its tag' },
  heredoc_missing_tag: { about: 'a heredoc opener `<<` has no tag before the newline' },
  legacy_heredoc: { about: 'the removed three-character heredoc opener' },
  empty_program: { about: 'the program has no statement' },
  too_many_errors: { about: 'more errors than are shown: the count of those left out (MAX_SHOWN_ERRORS)' },
  program_too_large: { about: 'a program or plan has more statements or steps than allowed (MAX_PROGRAM_STATEMENTS)' },
  // program text: resolving and checking (compiler/)
  unknown_symbol: { about: 'a symbol or qualified name that the session does not know' },
  legacy_symbol: { about: 'a `p#` parameter symbol: parameters use wire names' },
  legacy_slot: { about: 'an `s#` transport slot: removed' },
  unknown_relation: { about: 'a relation the entity does not have' },
  unknown_argument: { about: 'an argument the capability does not take' },
  duplicate_argument: { about: 'an argument given twice' },
  missing_argument: { about: 'a required argument is missing' },
  wrong_type: { about: 'a literal of the wrong type for the parameter' },
  enum_value_not_allowed: { about: 'a value outside the enum of the parameter' },
  constraint_violation: { about: 'a value breaks a parameter constraint (minimum, maximum, length, pattern, format)' },
  projection_unknown_field: { about: 'a projection names a field the entity does not have' },
  not_sortable: { about: '`sort=` on a list or capability that does not sort' },
  unsortable_field: { about: '`sort=` names a field the list does not sort by' },
  write_in_read_position: { about: 'a write capability where a read is expected' },
  not_on_row: { about: 'a capability that acts on no row is written after a row' },
  unknown_binding: { about: 'a name that no earlier line binds' },
  duplicate_binding: { about: 'a name bound twice' },
  bad_handle: { about: 'a continuation handle of the wrong form' },
  continuation_not_alone: { about: 'page/wait/cancel mixed with other statements' },
  fanout_too_large: { about: 'a binding fans out over more rows than allowed' },
  not_teachable: { about: 'a capability whose generated example program does not compile' },
  // execution (runtime/)
  write_not_accepted: { about: 'a plan with writes was run without being accepted' },
  missing_secret: { about: 'an environment variable named by the catalog auth is not set' },
  vendor_credentials_missing: {
    about:
      'the caller (its tenant or user) has no credential for a catalog that needs one, and the deployment gives it no fallback; nothing was sent',
  },
  credentials_config_invalid: {
    about:
      'the outbound credentials file cannot be used: unreadable, readable by group or others, malformed, or naming an unknown catalog or scheme',
  },
  vendor_error: { about: 'the vendor answered with an HTTP error status' },
  vendor_timeout: { about: 'the vendor did not answer within the request timeout' },
  vendor_unreachable: { about: 'the vendor could not be reached or reset the connection' },
  vendor_bad_response: {
    about: 'the vendor answered with malformed JSON, a wrong content type or an unexpected shape',
  },
  response_shape_mismatch: {
    about:
      "a read's answer at the mapping's row path is not rows of its entity: not an object, or an object with none of the entity's declared fields",
  },
  vendor_body_too_large: { about: 'the vendor answered with a body over the size limit' },
  vendor_auth_failed: { about: 'the OAuth2 token endpoint refused the client credentials' },
  deadline_exceeded: { about: 'the run did not finish before its overall deadline' },
  cancelled: { about: 'the run was cancelled' },
  catalog_mismatch: { about: 'a plan was compiled against a catalog content the server does not hold' },
  step_skipped: { about: 'a step did not run because a step it needs failed' },
  call_budget_exceeded: {
    about: 'the run reached its budget of vendor calls (maxCalls) and stopped before the next call',
  },
  unsupported_store: { about: 'a storage URL names a scheme this build does not support' },
  // HTTP surface (server/)
  not_found: { about: 'no route, entry or resource at this address' },
  method_not_allowed: { about: 'the route exists but not for this method' },
  body_too_large: { about: 'the request body is over the size limit' },
  bad_json: { about: 'the request body is not a JSON object' },
  unsupported_media_type: { about: 'the request body has a content type the route does not take' },
  not_acceptable: { about: 'no response format matches the Accept header' },
  // execute sessions, plan tokens and page handles (server/)
  unknown_entry: { about: 'no loaded catalog has this entry_id' },
  unknown_session: { about: 'no execute session at this prompt_hash and session' },
  unknown_logical_session: { about: 'no execute session is bound to this logical session ref (l_<token>)' },
  api_not_allowed: { about: "the tenant's configuration does not allow this catalog" },
  too_many_sessions: {
    about: 'the tenant or the server holds as many sessions as allowed, each running a background operation',
  },
  session_stale: { about: 'a catalog pinned by the session changed (reload): the session is not reused' },
  catalog_not_in_session: { about: 'a program names a catalog the session has not loaded' },
  bad_seed: { about: 'a seed is not api:Entity of a loaded catalog' },
  review_required: { about: 'a plan that needs review was run live without plan_commit_ref or force' },
  read_only: {
    about: 'the caller may only read: a plan that changes vendor data is refused before anything is sent',
  },
  plan_token_unknown: { about: 'plan_commit_ref names no pcN of this session' },
  plan_token_expired: { about: 'the pcN is older than the plan commit TTL (10 minutes)' },
  plan_token_consumed: { about: 'the pcN of a plan with writes was already used' },
  plan_token_mismatch: { about: 'the pcN was minted for another plan' },
  unknown_page_handle: { about: 'page(pgN) names no page handle of this session' },
  page_exhausted: { about: 'the page handle was already continued, or its result has no more pages' },
  unknown_operation_handle: { about: 'wait or cancel names no operation of this session' },
  too_many_operations: { about: 'the per-session cap of running operations is reached' },
  operation_not_on_replica: { about: 'the operation runs on another replica' },
  operation_lost: {
    about: 'the server process running a background operation stopped before it ended (its lease expired)',
  },
  store_unavailable: {
    about: 'a shared store (the Redis key-value store, the object store) cannot be reached; retry shortly',
  },
  unknown_run: { about: 'no stored run artifact with this id in the session' },
  run_not_stored: { about: 'a warning: the run completed but its artifact could not be stored' },
  run_artifact_pending: {
    about: "a warning: a background run's rows answered from memory; its artifact is not stored yet (retried)",
  },
  run_artifact_lost: { about: "a background run's artifact could not be stored and was dropped: its rows are lost" },
  run_artifact_unavailable: {
    about: "the artifact store does not have an ended operation's run artifact (held elsewhere, lost or removed)",
  },
  auth_required: { about: 'a control-plane or inbound credential is missing' },
  forbidden: { about: 'the credential is wrong or does not reach this resource' },
  reload_unavailable: { about: 'catalog reload needs a server started with --catalog-dir' },
  // inbound authentication (server/auth/)
  // the terminal (svc init, doctor, login, search, context, run)
  no_profile: { about: 'no terminal profile: run svc init' },
  bad_profile: { about: 'the terminal profile is not valid JSON of the expected shape' },
  workspace_damaged: { about: 'a file of the .svc workspace is missing or unreadable' },
  server_unreachable: { about: 'the server of the profile does not answer' },
  no_active_context: { about: 'svc run without a context: run svc context with api:Entity seeds first' },
  ambiguous_entity: { about: 'an unqualified entity name matches entities of several catalogs' },
  unknown_seed: { about: 'a context seed names no entity of the discovery cache or the registry' },
  catalog_changed: { about: "a catalog's digest changed since the session fetched it: svc context --new" },
  device_login_unavailable: { about: 'the server has no device login (only managed hosts do)' },
  device_login_unsupported: { about: 'the device login of this server is not supported by this build' },
  mcp_config_invalid: { about: 'an MCP setting (transport key file, tenant file, allowed hosts) is malformed' },
  auth_config_invalid: { about: 'the inbound auth settings cannot start the server' },
  auth_token_expired: { about: 'the JWT has expired (exp)' },
  auth_token_not_yet_valid: {
    about: 'the JWT is not valid yet (nbf), or was issued in the future (iat), beyond the clock skew',
  },
  auth_bad_signature: { about: 'the JWT signature does not verify with the configured secret' },
  auth_bad_algorithm: { about: 'the JWT is not signed with HS256' },
  auth_malformed_token: { about: 'the bearer token is not a well-formed JWT' },
  auth_missing_claim: { about: 'the JWT lacks sub or tenant_id (tid)' },
  auth_invalid_claim: { about: 'a JWT claim svc reads (sub, tenant_id, tid) is present but not a non-empty string' },
  auth_bad_issuer: { about: 'the JWT iss does not match SVC_AUTH_JWT_ISSUER' },
  auth_bad_audience: { about: 'the JWT aud does not match SVC_AUTH_JWT_AUDIENCE' },
  auth_unknown_key: { about: 'the X-API-Key is not in the key file' },
  auth_method_unavailable: { about: 'the server is not configured for this kind of credential' },
  auth_ambiguous: { about: 'both a bearer token and an API key were sent' },
  bad_authorization_header: { about: 'the Authorization header is not `Bearer <token>`' },
  ambiguous_credentials: { about: 'the request repeats the Authorization or X-API-Key header' },
  // the Host/Origin policy of every route (server/http/host-policy.ts)
  host_not_allowed: { about: 'the Host header names a host this server does not answer (DNS-rebinding protection)' },
  origin_not_allowed: { about: 'the Origin header names a page of another site that may not call this server' },
  internal_error: { about: 'a bug in svc; the message carries no detail' },
} as const satisfies Record<string, { about: string }>;

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

/**
 * Refuse with one error: throws it as a `SvcFailure`, which each surface answers in its own form.
 * @example fail('unknown_session', 'no session s9', 'open a session with POST /execute')
 */
export function fail(code: ErrorCode, message: string, hint?: string): never {
  throw new SvcFailure([svcError(code, message, hint === undefined ? {} : { hint })]);
}

/** `file:line:col: code: message` plus an indented `hint:` line: the form the CLI prints. */
export function formatError(e: SvcError): string {
  const where = e.span ? `${e.span.file ?? '<input>'}:${e.span.line}:${e.span.col}: ` : e.file ? `${e.file}: ` : '';
  const at = !e.span && e.path ? ` (at ${e.path || '/'})` : '';
  const hint = e.hint ? `\n  hint: ${e.hint}` : '';
  return `${where}${e.code}: ${e.message}${at}${hint}`;
}
