/**
 * The importer's model of a catalog: what `importOpenApi` derives from an OpenAPI document before
 * it is written as YAML. Plain data; the order of every list is the order of the YAML files.
 */
import type { ParamConstraints } from '../cgs.js';

/** A type as the authoring format writes it (see docs/authoring.md, Types). */
export type ImportType =
  | { type: 'string' | 'integer' | 'number' | 'boolean' | 'date' | 'datetime'; description?: string }
  | { type: 'enum'; values: (string | number)[]; description?: string }
  | { type: 'ref'; entity: string; description?: string }
  | { type: 'array'; items: ImportType; description?: string }
  | { type: 'object'; description?: string };

export interface ImportRelation {
  name: string;
  description: string;
  target: string;
  cardinality: 'one' | 'many';
  capability: string;
  bind: Record<string, string>;
}

export interface ImportEntity {
  name: string;
  description: string;
  id: string;
  fields: Map<string, ImportType>;
  relations: ImportRelation[];
  /** Where it came from, for the report: a component name or `inline: <path>`. */
  source: string;
}

/** Where a parameter goes on the wire. */
export type ParamIn = 'path' | 'query' | 'header' | 'body';

export interface ImportParam {
  name: string;
  /** The wire name; `''` for a body parameter that is the whole request body (a JSON list or value). */
  wire: string;
  /**
   * A body parameter that is a member of a nested object: the keys of the objects it is sent in,
   * below the body (inside its wrapper), outermost first (`['properties']`).
   */
  at?: string[];
  in: ParamIn;
  /** For a `many` parameter, the type of one item. */
  type: ImportType;
  required: boolean;
  default?: unknown;
  /** One value or a list: a query array of scalars. */
  many?: true;
  /** How the document sends a `many` list: repeated keys (`explode: true`) or one comma-joined key. */
  list?: 'repeat' | 'comma';
  constraints?: ParamConstraints;
  /** Keywords of the document that the catalog cannot say, each with why (for the report). */
  left?: string[];
}

export interface ImportPagination {
  style: 'page' | 'offset' | 'cursor' | 'link';
  page_param?: string;
  size_param?: string;
  offset_param?: string;
  cursor_param?: string;
  next_cursor?: string;
  cursor_field?: string;
  has_more?: string;
  next_url?: string;
  omit_first_page?: true;
  first_page?: number;
  page_size?: number;
  max_page_size?: number;
}

export interface ImportSort {
  param: string;
  order_param: string;
  asc: string;
  desc: string;
  fields: string[];
}

export type CapabilityKind = 'query' | 'get' | 'create' | 'update' | 'delete' | 'action';

/** Where a capability's description came from (meaning.ts), as the report names it. */
export type MeaningSource = 'summary' | 'description' | 'operationId' | 'method and path';

export interface ImportCapability {
  name: string;
  /** Set when the document sends this capability's query lists comma-joined (`explode: false`). */
  array_style?: 'comma';
  /** Set when the document's request body is a form or multipart (absent: JSON, or no body). */
  body_encoding?: 'form' | 'multipart';
  kind: CapabilityKind;
  /** Set on a get of the one row its path answers, without an id (`GET /user`). */
  singleton?: true;
  entity: string;
  description: string;
  returns: 'rows' | 'row' | 'none';
  id_param?: string;
  params: ImportParam[];
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path template with parameter names (`/breweries/{id}`). */
  path: string;
  pagination?: ImportPagination;
  sort?: ImportSort;
  /** `value`: the field of a value answer (value-answers.ts) that holds the answer whole. */
  response: { path: string; total?: { header: string } | { path: string }; value?: string };
  /** The key the request body wraps the body parameters under (`{"data": {...}}`), when it does. */
  body_wrapper?: string;
  /** The document requires the body and none of its parameters is required: send `{}` (in its wrapper) at least. */
  body_required?: true;
  /**
   * Values the mapping always sends (wire name -> value): the query a document's path key fixes
   * (`/items?action=archive`) and required query or header parameters of one value
   * (`X-Amz-Target: Svc.CreateKey`).
   */
  constants?: { query?: Record<string, string>; headers?: Record<string, string> };
  /** `METHOD /path (operationId)` of the source operation, for the report. */
  origin: string;
  /** Where `description` came from (meaning.ts), for the report. */
  meaning_from: MeaningSource;
}

export type ImportAuth =
  | { scheme: 'none' }
  | {
      scheme: 'api_key';
      in: 'header' | 'query';
      name: string;
      env: string;
      /** Further keys the document requires with the first (one security requirement naming several). */
      also?: Array<{ in: 'header' | 'query'; name: string; env: string }>;
    }
  | { scheme: 'bearer'; env: string }
  | { scheme: 'basic'; username_env: string; password_env: string };

export interface ImportCatalog {
  entry_id: string;
  label: string;
  description: string;
  base_url: string;
  auth: ImportAuth;
  entities: ImportEntity[];
  capabilities: ImportCapability[];
}

/**
 * Why an operation (or a schema, field or relation) was left out: a closed list, so a report or
 * a benchmark over many documents can count them. `why` gives the detail.
 */
export const SKIP_REASONS = {
  method: 'HEAD, OPTIONS and TRACE operations are not imported',
  deprecated: 'the document marks it deprecated',
  file_answer: 'a read whose answer is a file (binary)',
  no_entity:
    'a write below no read resource with no JSON answer, no resource `{param}` in its path and no request body',
  parameter: 'a required parameter svc cannot map or send',
  body: 'a required request body svc cannot send (not JSON, a form or multipart; not an object; a file part; on a GET)',
  file_part: 'an optional file part of a form or multipart body (svc sends text fields)',
  no_fields: 'a schema with no field of a usable name and type',
  pack_refused: '`svc pack` refused what the importer wrote (the diagnostic is given)',
} as const;

export type SkipReason = keyof typeof SKIP_REASONS;

/** Something the importer left out, and why. */
export interface Skipped {
  what: string;
  reason: SkipReason;
  why: string;
}

/** What a person should look at after importing. */
export interface ReviewNote {
  what: string;
  note: string;
}

export interface ImportLog {
  skipped: Skipped[];
  review: ReviewNote[];
}
