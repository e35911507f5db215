/**
 * The CGS: the portable JSON interchange artifact of one catalog (domain + HTTP mappings).
 * Self-contained, normalized (every default made explicit), free of timestamps, absolute paths
 * and platform. `cgs_hash` is the SHA-256 hex of its canonical JSON.
 */

/** The interchange format version this build reads and writes. */
export const SVC_CATALOG_FORMAT_VERSION = 1 as const;

export type JsonValue = string | number | boolean | null | JsonValue[] | { [k: string]: JsonValue };

export type ScalarTypeName = 'string' | 'integer' | 'number' | 'boolean' | 'date' | 'datetime';
export const SCALAR_TYPES: readonly ScalarTypeName[] = ['string', 'integer', 'number', 'boolean', 'date', 'datetime'];
export type TypeName = ScalarTypeName | 'enum' | 'ref' | 'array' | 'object';
export const TYPE_NAMES: readonly TypeName[] = [...SCALAR_TYPES, 'enum', 'ref', 'array', 'object'];

/** A value type. `enum` lists its allowed values, `ref` names an entity (the value is its id). */
export type TypeSpec =
  | { type: ScalarTypeName }
  | { type: 'enum'; values: Array<string | number> }
  | { type: 'ref'; entity: string }
  | { type: 'array'; items: TypeSpec }
  | { type: 'object'; fields: FieldDef[] };

export type FieldDef = TypeSpec & { name: string; description: string };

/** What `format:` a string parameter may declare; `param-constraints.ts` says what each accepts. */
export type StringFormat = 'email' | 'uri' | 'uuid' | 'date-time' | 'date';
export const STRING_FORMATS: readonly StringFormat[] = ['email', 'uri', 'uuid', 'date-time', 'date'];

/**
 * Limits on a parameter's values, checked at compile time for literals and at run time for values
 * taken from bound rows (`constraint_violation`). `minimum`/`maximum` apply to integer and number
 * parameters, the others to string parameters; for a `many` parameter they apply to each item.
 */
export interface ParamConstraints {
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  /** A JavaScript regular expression (`u` flag), unanchored as in JSON Schema: write `^...$` for the whole value. */
  pattern?: string;
  format?: StringFormat;
}
export const CONSTRAINT_KEYS = ['minimum', 'maximum', 'minLength', 'maxLength', 'pattern', 'format'] as const;

export type ParamDef = TypeSpec &
  ParamConstraints & {
    name: string;
    description: string;
    required: boolean;
    default?: JsonValue;
    /** Parameters this one works only with (json-server ignores `_order` without `_sort`): a program giving it without them is a compile error. */
    requires?: string[];
    /** Set when the parameter takes one value or a list of them (`?genre=a&genre=b`); absent = one value. */
    many?: true;
  };

export interface Relation {
  /** Wire name of the relation, unique among the entity's fields and relations. */
  name: string;
  description: string;
  /** Target entity name in the same catalog. */
  target: string;
  cardinality: 'one' | 'many';
  /** Capability of the target entity that follows the relation. */
  capability: string;
  /** Capability parameter -> field of the source row whose value it takes. */
  bind: Record<string, string>;
}

export interface Entity {
  name: string;
  description: string;
  /** The field holding the row's identity. */
  id_field: string;
  fields: FieldDef[];
  relations: Relation[];
}

export type CapabilityKind = 'query' | 'get' | 'search' | 'create' | 'update' | 'delete' | 'action';
export const CAPABILITY_KINDS: readonly CapabilityKind[] = [
  'query',
  'get',
  'search',
  'create',
  'update',
  'delete',
  'action',
];
export const READ_KINDS: ReadonlySet<CapabilityKind> = new Set(['query', 'get', 'search']);
/** Kinds whose execution changes the vendor's state; they need review before a live run. */
export const WRITE_KINDS: ReadonlySet<CapabilityKind> = new Set(['create', 'update', 'delete', 'action']);

/** What a capability yields: a list of rows, one row, or nothing. */
export type Returns = 'rows' | 'row' | 'none';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export const HTTP_METHODS: readonly HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * Templates: a string that is exactly `{param}` takes the parameter's typed value; a string with
 * embedded `{param}` is interpolated; `{{` and `}}` are literal braces; other strings are constants.
 * A key whose template refers to an absent parameter is omitted from the request.
 */
export type Template = string;
export type JsonTemplate = JsonValue;

/**
 * How a request body goes on the wire: `json` (the default), `form`
 * (`application/x-www-form-urlencoded`) or `multipart` (`multipart/form-data`, text fields). Form
 * and multipart write nested objects as `a[b]=1`, lists of scalars as `a[]=1&a[]=2` and lists of
 * objects as `a[0][b]=1`; see docs/authoring.md. A CGS carries it only when it is not `json`, so
 * catalogs written before it keep their hash.
 */
export type BodyEncoding = 'json' | 'form' | 'multipart';
export const BODY_ENCODINGS: readonly BodyEncoding[] = ['json', 'form', 'multipart'];

interface PaginationCommon {
  /** Rows per vendor page when the program does not say. */
  page_size: number;
  /** Largest page size the vendor accepts. */
  max_page_size: number;
  /** Query parameter carrying the page size, when the vendor takes one. */
  size_param?: string;
}
/** Dot path of a boolean in the answer that is true while the vendor has more (`has_more`, `meta.has_more`). */
interface HasMore {
  has_more?: string;
}
export type Pagination =
  | (PaginationCommon & HasMore & { style: 'page'; page_param: string; first_page: number; omit_first_page?: true })
  | (PaginationCommon & HasMore & { style: 'offset'; offset_param: string })
  /** The cursor is the value at `next_cursor` in the answer, or the field `cursor_field` of the last row received (exactly one). */
  | (PaginationCommon &
      HasMore & { style: 'cursor'; cursor_param: string; next_cursor?: string; cursor_field?: string })
  /** The next page's URL: from the `Link` header, or the value at `next_url` in the answer when declared. */
  | (PaginationCommon & {
      style: 'link';
      page_param?: string;
      first_page: number;
      omit_first_page?: true;
      next_url?: string;
    });
export type PaginationStyle = Pagination['style'];
export const PAGINATION_STYLES: readonly PaginationStyle[] = ['page', 'offset', 'cursor', 'link'];

export interface ResponseMapping {
  /** Dot path to the rows (or the row) in the JSON body; `""` is the body itself. */
  path: string;
  /** Where the total row count is, when the vendor reports one. */
  total?: { header: string } | { path: string };
  /**
   * Set on a singleton get whose answer is one value, not a row (a readme's text, a CSV report, a
   * map of counts): the one field of the row that holds the answer whole (docs/authoring.md,
   * Value answers). Absent = the answer is rows or a row (never written empty).
   */
  value?: string;
}

/** A direction of a sorted list. */
export type SortOrder = 'asc' | 'desc';
export const SORT_ORDERS: readonly SortOrder[] = ['asc', 'desc'];

interface SortCommon {
  /** Entity fields the vendor sorts the list by (wire names). */
  fields: string[];
  /** Query parameter taking the field name. */
  param: string;
  /** Order the vendor is asked for when the program names none (one of `fields`). */
  default?: { field: string; order: SortOrder };
}
/**
 * How a list sorts. Either the direction is a query parameter of its own (`order_param`, with the
 * values meaning ascending and descending: json-server's `_sort=createdAt&_order=desc`), or a
 * prefix of the field name marks descending (`sort=-createdAt`); the bare name is ascending.
 */
export type SortMapping =
  (SortCommon & { order_param: string; asc: string; desc: string }) | (SortCommon & { desc_prefix: string });

export interface HttpMapping {
  method: HttpMethod;
  /** Path template relative to the backend URL, e.g. `/breweries/{id}`. */
  path: Template;
  query: Record<string, Template>;
  headers: Record<string, Template>;
  body?: JsonTemplate;
  /** How the body is encoded; absent = `json` (never written as `json`). */
  body_encoding?: Exclude<BodyEncoding, 'json'>;
  /**
   * Set when the vendor requires a body: a call that passes none of the body's parameters sends
   * `{}` (`true`) or this constant (a wrapper's empty object: `{"data": {}}`) instead of no body.
   */
  body_required?: true | { [key: string]: JsonValue };
  /** How an array value is written into the query: `repeat` (a=1&a=2) or `comma` (a=1,2). */
  array_style: 'repeat' | 'comma';
  pagination?: Pagination;
  /** Set when the list sorts: the fields and the query keys asking for an order. */
  sort?: SortMapping;
  response: ResponseMapping;
}

export interface Capability {
  name: string;
  kind: CapabilityKind;
  /** The entity the capability reads or writes. */
  entity: string;
  description: string;
  params: ParamDef[];
  /** Parameter that takes the id of the row the capability acts on (get, update, delete, action). */
  id_param?: string;
  /**
   * Set on a `get` that reads the one row its path answers, without an id (`GET /user`,
   * `GET /repos/{owner}/{repo}/readme`): never the entity symbol's get, it has an `m#` of its own.
   * Absent = false (never written as false, so catalogs written before it keep their hash).
   */
  singleton?: true;
  /**
   * Parameters of which a call must give at least one (an update that changes nothing is refused).
   * Always written for `update` (default: its optional parameters but the id; `[]` turns it off).
   */
  at_least_one?: string[];
  returns: Returns;
  http: HttpMapping;
}

/** One API key: the header or query parameter `name` carries the value of environment variable `env`. */
export interface ApiKeyPlace {
  in: 'header' | 'query';
  name: string;
  env: string;
}

export type OutboundAuth =
  | { scheme: 'none' }
  | {
      scheme: 'api_key';
      in: 'header' | 'query';
      name: string;
      env: string;
      /**
       * Further keys sent with the first on every call (a vendor that needs an app key and an app
       * token together). Absent when there are none (never written empty, so catalogs written
       * before it keep their hash).
       */
      also?: ApiKeyPlace[];
    }
  | { scheme: 'bearer'; env: string }
  | { scheme: 'basic'; username_env: string; password_env: string }
  | {
      scheme: 'oauth2_client_credentials';
      token_url: string;
      client_id_env: string;
      client_secret_env: string;
      scopes: string[];
    };
export type AuthScheme = OutboundAuth['scheme'];
export const AUTH_SCHEMES: readonly AuthScheme[] = ['none', 'api_key', 'bearer', 'basic', 'oauth2_client_credentials'];

export interface Cgs {
  format_version: typeof SVC_CATALOG_FORMAT_VERSION;
  entry_id: string;
  version: number;
  label: string;
  tags: string[];
  description: string;
  backend: { base_url: string };
  auth: OutboundAuth;
  entities: Entity[];
  capabilities: Capability[];
}

/** Safe identifier for entry ids: lower-case letter first, then lower-case letters, digits, `_`, `-`. */
export const ENTRY_ID_PATTERN = /^[a-z][a-z0-9_-]{0,62}$/;
