/**
 * JSON Schema (draft-07) of one catalog source file. Every YAML file of a catalog source directory
 * is validated against it; the same schema, written to `schemas/catalog-source.schema.json`, lets
 * an editor's YAML language server complete and check catalog files.
 */
import { AUTH_SCHEMES, CAPABILITY_KINDS, HTTP_METHODS, SCALAR_TYPES } from './cgs.js';

const name = { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' };
const description = { type: 'string', description: 'Plain text; becomes teaching text.' };
const scalarName = { enum: [...SCALAR_TYPES], description: 'A scalar type name as a shorthand for {type: <name>}.' };

const typeSpec = {
  type: 'object',
  properties: {
    type: { enum: [...SCALAR_TYPES, 'enum', 'ref', 'array', 'object'] },
    description,
    values: { type: 'array', items: { type: ['string', 'number'] }, description: 'Allowed values of an enum.' },
    entity: { ...name, description: 'Entity named by a ref.' },
    items: { $ref: '#/definitions/typeOrShorthand', description: 'Element type of an array.' },
    fields: { $ref: '#/definitions/fields', description: 'Fields of an object.' },
  },
  required: ['type'],
  additionalProperties: false,
};

const param = {
  description: 'A parameter. null, {} or an object without `type` takes the type and description of the entity field of the same name (or the one named by `field`).',
  anyOf: [
    { type: 'null' },
    scalarName,
    {
      type: 'object',
      properties: {
        ...typeSpec.properties,
        field: { ...name, description: 'Entity field whose type and description the parameter takes.' },
        required: { type: 'boolean' },
        default: {},
      },
      additionalProperties: false,
    },
  ],
};

const template = { type: 'string', description: '"{param}" takes a parameter; other text is a constant; {{ and }} are literal braces.' };
const templateMap = {
  description: 'Wire name -> template. A list of parameter names is shorthand for {name: "{name}"}.',
  anyOf: [
    { type: 'object', additionalProperties: template },
    { type: 'array', items: name, uniqueItems: true },
  ],
};

const pagination = {
  type: 'object',
  properties: {
    style: { enum: ['page', 'offset', 'cursor', 'link'], description: 'page counter, offset/limit, cursor from the body, or Link rel="next" header.' },
    page_size: { type: 'integer', minimum: 1 },
    max_page_size: { type: 'integer', minimum: 1 },
    size_param: { type: 'string', minLength: 1 },
    page_param: { type: 'string', minLength: 1 },
    first_page: { type: 'integer', minimum: 0 },
    offset_param: { type: 'string', minLength: 1 },
    cursor_param: { type: 'string', minLength: 1 },
    next_cursor: { type: 'string', description: 'Dot path of the next cursor in the response body.' },
  },
  required: ['style'],
  additionalProperties: false,
};

const mapping = {
  description: 'How a capability maps onto HTTP. The string form "METHOD /path/{param}" is shorthand for {method, path}.',
  anyOf: [
    { type: 'string', pattern: `^(${HTTP_METHODS.join('|')})\\s+/\\S*$` },
    {
      type: 'object',
      properties: {
        method: { enum: [...HTTP_METHODS] },
        path: { type: 'string', pattern: '^/' },
        query: templateMap,
        headers: templateMap,
        body: { description: 'JSON body template; absent = every parameter not used elsewhere (for POST, PUT, PATCH).' },
        array_style: { enum: ['repeat', 'comma'] },
        pagination,
        response: {
          type: 'object',
          properties: {
            path: { type: 'string', description: 'Dot path of the rows (or row) in the body; "" is the body itself.' },
            total: {
              type: 'object',
              properties: { header: { type: 'string', minLength: 1 }, path: { type: 'string', minLength: 1 } },
              minProperties: 1,
              maxProperties: 1,
              additionalProperties: false,
            },
          },
          additionalProperties: false,
        },
      },
      required: ['method', 'path'],
      additionalProperties: false,
    },
  ],
};

const auth = {
  type: 'object',
  properties: {
    scheme: { enum: [...AUTH_SCHEMES] },
    in: { enum: ['header', 'query'] },
    name: { type: 'string', minLength: 1, description: 'Header or query parameter carrying the API key.' },
    env: { $ref: '#/definitions/envName' },
    username_env: { $ref: '#/definitions/envName' },
    password_env: { $ref: '#/definitions/envName' },
    token_url: { type: 'string', minLength: 1 },
    client_id_env: { $ref: '#/definitions/envName' },
    client_secret_env: { $ref: '#/definitions/envName' },
    scopes: { type: 'array', items: { type: 'string' } },
  },
  required: ['scheme'],
  additionalProperties: false,
};

export const SOURCE_SCHEMA_ID = 'https://svc.invalid/schemas/catalog-source.schema.json';

export const sourceSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  $id: SOURCE_SCHEMA_ID,
  title: 'svc catalog source file',
  description: 'One YAML file of an svc catalog source directory. Sections may be split across files; `catalog` must appear in exactly one.',
  type: 'object',
  properties: {
    catalog: {
      type: 'object',
      properties: {
        entry_id: { type: 'string', description: 'Safe identifier: lower-case letter, then lower-case letters, digits, _ or -.' },
        version: { description: 'Positive integer; the highest version of an entry_id is loaded.' },
        label: { type: 'string', minLength: 1 },
        tags: { type: 'array', items: { type: 'string', minLength: 1 }, uniqueItems: true },
        description,
        backend: {
          type: 'object',
          properties: { url: { type: 'string', pattern: '^https?://' } },
          required: ['url'],
          additionalProperties: false,
        },
        auth,
      },
      required: ['entry_id', 'version', 'label', 'description', 'backend'],
      additionalProperties: false,
    },
    entities: {
      type: 'object',
      propertyNames: name,
      additionalProperties: {
        type: 'object',
        properties: {
          description,
          id: { ...name, description: 'The id field; default `id`.' },
          fields: { $ref: '#/definitions/fields' },
          relations: {
            type: 'object',
            propertyNames: name,
            additionalProperties: {
              type: 'object',
              properties: {
                description,
                target: name,
                cardinality: { enum: ['one', 'many'] },
                capability: name,
                bind: { type: 'object', propertyNames: name, additionalProperties: name, description: 'Target capability parameter -> source field.' },
              },
              required: ['target', 'cardinality', 'capability', 'bind'],
              additionalProperties: false,
            },
          },
        },
        required: ['fields'],
        additionalProperties: false,
      },
    },
    capabilities: {
      type: 'object',
      propertyNames: name,
      additionalProperties: {
        type: 'object',
        properties: {
          kind: { enum: [...CAPABILITY_KINDS] },
          entity: name,
          description,
          id_param: name,
          returns: { enum: ['rows', 'row', 'none'] },
          params: {
            description: 'Parameters: a map of name -> type, or a list of entity field names.',
            anyOf: [
              { type: 'object', propertyNames: name, additionalProperties: param },
              { type: 'array', items: name, uniqueItems: true },
            ],
          },
        },
        required: ['kind', 'entity'],
        additionalProperties: false,
      },
    },
    mappings: { type: 'object', propertyNames: name, additionalProperties: mapping },
  },
  additionalProperties: false,
  definitions: {
    envName: { type: 'string', pattern: '^[A-Z_][A-Z0-9_]*$', description: 'Name of an environment variable holding a secret.' },
    typeOrShorthand: { description: 'A type: a scalar type name (string, integer, number, boolean, date, datetime) or an object with `type`.', anyOf: [scalarName, typeSpec] },
    fields: {
      type: 'object',
      propertyNames: name,
      additionalProperties: { $ref: '#/definitions/typeOrShorthand' },
    },
  },
} as const;
