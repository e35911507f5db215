/**
 * JSON Schema (draft-07) of the CGS interchange artifact. The loader validates every decoded CGS
 * against it before the semantic checks; it is also written to `schemas/cgs.schema.json`.
 */
import {
  AUTH_SCHEMES,
  BODY_ENCODINGS,
  CAPABILITY_KINDS,
  HTTP_METHODS,
  SCALAR_TYPES,
  SORT_ORDERS,
  STRING_FORMATS,
  SVC_CATALOG_FORMAT_VERSION,
} from './cgs.js';

const name = { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' };
const str = { type: 'string' };
const envName = { type: 'string', pattern: '^[A-Z_][A-Z0-9_]*$' };
const templateMap = { type: 'object', additionalProperties: str };
const nonEmpty = { type: 'string', minLength: 1 };

const typeProps = {
  type: { enum: [...SCALAR_TYPES, 'enum', 'ref', 'array', 'object'] },
  values: { type: 'array', minItems: 1, items: { type: ['string', 'number'] } },
  entity: name,
  items: { $ref: '#/definitions/typeSpec' },
  fields: { type: 'array', items: { $ref: '#/definitions/field' } },
};

const paginationCommon = {
  page_size: { type: 'integer', minimum: 1 },
  max_page_size: { type: 'integer', minimum: 1 },
  size_param: { type: 'string', minLength: 1 },
};

export const CGS_SCHEMA_ID = 'https://svc.invalid/schemas/cgs.schema.json';

export const cgsSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  $id: CGS_SCHEMA_ID,
  title: 'svc CGS interchange artifact',
  type: 'object',
  properties: {
    format_version: { const: SVC_CATALOG_FORMAT_VERSION },
    entry_id: str,
    version: { type: 'integer', minimum: 1 },
    label: str,
    tags: { type: 'array', items: str },
    description: str,
    backend: { type: 'object', properties: { base_url: str }, required: ['base_url'], additionalProperties: false },
    auth: {
      type: 'object',
      properties: {
        scheme: { enum: [...AUTH_SCHEMES] },
        in: { enum: ['header', 'query'] },
        name: str,
        env: envName,
        username_env: envName,
        password_env: envName,
        token_url: str,
        client_id_env: envName,
        client_secret_env: envName,
        scopes: { type: 'array', items: str },
        also: {
          type: 'array',
          minItems: 1,
          items: {
            type: 'object',
            properties: { in: { enum: ['header', 'query'] }, name: nonEmpty, env: envName },
            required: ['in', 'name', 'env'],
            additionalProperties: false,
          },
        },
      },
      required: ['scheme'],
      additionalProperties: false,
    },
    entities: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          name,
          description: str,
          id_field: name,
          fields: { type: 'array', items: { $ref: '#/definitions/field' } },
          relations: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                name,
                description: str,
                target: name,
                cardinality: { enum: ['one', 'many'] },
                capability: name,
                bind: { type: 'object', additionalProperties: name },
              },
              required: ['name', 'description', 'target', 'cardinality', 'capability', 'bind'],
              additionalProperties: false,
            },
          },
        },
        required: ['name', 'description', 'id_field', 'fields', 'relations'],
        additionalProperties: false,
      },
    },
    capabilities: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          name,
          kind: { enum: [...CAPABILITY_KINDS] },
          entity: name,
          description: str,
          id_param: name,
          singleton: { const: true },
          at_least_one: { type: 'array', items: name, uniqueItems: true },
          returns: { enum: ['rows', 'row', 'none'] },
          params: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                ...typeProps,
                name,
                description: str,
                required: { type: 'boolean' },
                default: {},
                requires: { type: 'array', items: name, minItems: 1, uniqueItems: true },
                many: { const: true },
                minimum: { type: 'number' },
                maximum: { type: 'number' },
                minLength: { type: 'integer', minimum: 0 },
                maxLength: { type: 'integer', minimum: 0 },
                pattern: str,
                format: { enum: [...STRING_FORMATS] },
              },
              required: ['name', 'type', 'description', 'required'],
              additionalProperties: false,
            },
          },
          http: {
            type: 'object',
            properties: {
              method: { enum: [...HTTP_METHODS] },
              path: { type: 'string', pattern: '^/' },
              query: templateMap,
              headers: templateMap,
              body: {},
              body_encoding: { enum: BODY_ENCODINGS.filter((e) => e !== 'json') },
              body_required: { anyOf: [{ const: true }, { type: 'object' }] },
              array_style: { enum: ['repeat', 'comma'] },
              pagination: {
                type: 'object',
                properties: {
                  style: { enum: ['page', 'offset', 'cursor', 'link'] },
                  ...paginationCommon,
                  page_param: { type: 'string', minLength: 1 },
                  first_page: { type: 'integer', minimum: 0 },
                  offset_param: { type: 'string', minLength: 1 },
                  cursor_param: { type: 'string', minLength: 1 },
                  next_cursor: str,
                  cursor_field: str,
                  has_more: str,
                  next_url: str,
                  omit_first_page: { const: true },
                },
                required: ['style', 'page_size', 'max_page_size'],
                additionalProperties: false,
              },
              sort: {
                type: 'object',
                properties: {
                  fields: { type: 'array', items: name },
                  param: nonEmpty,
                  order_param: nonEmpty,
                  asc: nonEmpty,
                  desc: nonEmpty,
                  desc_prefix: nonEmpty,
                  default: {
                    type: 'object',
                    properties: { field: name, order: { enum: [...SORT_ORDERS] } },
                    required: ['field', 'order'],
                    additionalProperties: false,
                  },
                },
                required: ['fields', 'param'],
                additionalProperties: false,
              },
              response: {
                type: 'object',
                properties: {
                  path: str,
                  total: {
                    type: 'object',
                    properties: { header: str, path: str },
                    minProperties: 1,
                    maxProperties: 1,
                    additionalProperties: false,
                  },
                  value: name,
                },
                required: ['path'],
                additionalProperties: false,
              },
            },
            required: ['method', 'path', 'query', 'headers', 'array_style', 'response'],
            additionalProperties: false,
          },
        },
        required: ['name', 'kind', 'entity', 'description', 'params', 'returns', 'http'],
        additionalProperties: false,
      },
    },
  },
  required: [
    'format_version',
    'entry_id',
    'version',
    'label',
    'tags',
    'description',
    'backend',
    'auth',
    'entities',
    'capabilities',
  ],
  additionalProperties: false,
  definitions: {
    typeSpec: {
      type: 'object',
      properties: typeProps,
      required: ['type'],
      additionalProperties: false,
    },
    field: {
      type: 'object',
      properties: { ...typeProps, name, description: str },
      required: ['name', 'type', 'description'],
      additionalProperties: false,
    },
  },
} as const;
