/**
 * The catalog source format, defined once: a JSON Schema (draft-07) built in code with TypeBox,
 * from which ajv compiles the validator (`ajv.ts`), `svc schemas` writes
 * `schemas/catalog-source.schema.json` (for editors' YAML language servers), and TypeScript derives
 * the types of a valid file (`CatalogSourceFile` and its parts).
 *
 * Two forms are written by hand on purpose, for the messages `schema-errors.ts` makes of ajv's
 * errors: enumerations are `{enum: [...]}` (one `enum` error, turned into "did you mean"), not
 * TypeBox's union of literals; maps keyed by names carry `propertyNames` (a bad name is told as such).
 */
import { CloneType, Type, type Static, type TSchema } from '@sinclair/typebox';
import {
  AUTH_SCHEMES,
  BODY_ENCODINGS,
  CAPABILITY_KINDS,
  HTTP_METHODS,
  PAGINATION_STYLES,
  SCALAR_TYPES,
  SORT_ORDERS,
  STRING_FORMATS,
  TYPE_NAMES,
} from './cgs.js';

export const SOURCE_SCHEMA_ID = 'https://svc.invalid/schemas/catalog-source.schema.json';
const TYPE_REF = '#/definitions/typeOrShorthand';

// Small pieces: enumerations as `{enum: [...]}`, names, descriptions, maps keyed by names.

/** `{enum: values}`, typed as one of the values. */
const OneOf = <const T extends readonly (string | number)[]>(values: T, description?: string) =>
  Type.Unsafe<T[number]>(description ? { enum: [...values], description } : { enum: [...values] });

const Name = Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$' });
const NameOf = (description: string) => Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$', description });
const Description = Type.String({ description: 'Plain text; becomes teaching text.' });
const EnvName = Type.String({
  pattern: '^[A-Z_][A-Z0-9_]*$',
  description: 'Name of an environment variable holding a secret.',
});
const ScalarName = OneOf(SCALAR_TYPES, 'A scalar type name as a shorthand for {type: <name>}.');

/** An object keyed by names (entities, fields, parameters, ...). */
const NameMap = <T extends TSchema>(value: T, description?: string) =>
  Type.Record(Type.String(), value, description ? { propertyNames: Name, description } : { propertyNames: Name });
/** A list of names, each once. */
const NameList = Type.Array(Name, { uniqueItems: true });

// The `mappings:` part: how a capability maps onto HTTP (method, path, query, headers, body,
// pagination, sort, response).

const Template = Type.String({
  description: '"{param}" takes a parameter; other text is a constant; {{ and }} are literal braces.',
});
const TemplateMap = Type.Union([Type.Record(Type.String(), Template), NameList], {
  description: 'Wire name -> template. A list of parameter names is shorthand for {name: "{name}"}.',
});

const Pagination = Type.Object(
  {
    style: OneOf(
      PAGINATION_STYLES,
      'page counter, offset/limit, cursor (from the body or the last row), or next URL (Link header or body).',
    ),
    page_size: Type.Optional(Type.Integer({ minimum: 1 })),
    max_page_size: Type.Optional(Type.Integer({ minimum: 1 })),
    size_param: Type.Optional(Type.String({ minLength: 1 })),
    page_param: Type.Optional(Type.String({ minLength: 1 })),
    first_page: Type.Optional(Type.Integer({ minimum: 0 })),
    offset_param: Type.Optional(Type.String({ minLength: 1 })),
    cursor_param: Type.Optional(Type.String({ minLength: 1 })),
    next_cursor: Type.Optional(Type.String({ description: 'Dot path of the next cursor in the response body.' })),
    cursor_field: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          'The cursor is this field of the last row received (`id` for `starting_after`), instead of next_cursor.',
      }),
    ),
    has_more: Type.Optional(
      Type.String({ minLength: 1, description: 'Dot path of a boolean in the body: true while the vendor has more.' }),
    ),
    next_url: Type.Optional(
      Type.String({
        minLength: 1,
        description: "Dot path of the next page's URL in the body (`links.next`), instead of the Link header.",
      }),
    ),
    omit_first_page: Type.Optional(Type.Boolean({ description: 'The first request sends no page_param.' })),
  },
  { additionalProperties: false },
);

const QueryKey = (description: string) => Type.String({ minLength: 1, description });
const Sort = Type.Object(
  {
    param: QueryKey('Query parameter taking the field to sort by, e.g. `_sort`.'),
    order_param: Type.Optional(QueryKey('Query parameter taking the direction, e.g. `_order`.')),
    asc: Type.Optional(QueryKey('Value of order_param for ascending; default "asc".')),
    desc: Type.Optional(QueryKey('Value of order_param for descending; default "desc".')),
    desc_prefix: Type.Optional(QueryKey('Prefix of the field name meaning descending, e.g. "-" (sort=-createdAt).')),
    fields: Type.Optional(
      Type.Array(Name, {
        uniqueItems: true,
        description: 'Fields the list sorts by; default every field that is not an array or object.',
      }),
    ),
    default: Type.Optional(
      Type.Object(
        { field: Name, order: Type.Optional(OneOf(SORT_ORDERS)) },
        { additionalProperties: false, description: 'Order asked for when the program gives no sort=.' },
      ),
    ),
  },
  {
    additionalProperties: false,
    description: 'The list sorts: the program writes sort="field", order="desc". Give order_param or desc_prefix.',
  },
);

const Response = Type.Object(
  {
    path: Type.Optional(
      Type.String({ description: 'Dot path of the rows (or row) in the body; "" is the body itself.' }),
    ),
    total: Type.Optional(
      Type.Object(
        {
          header: Type.Optional(Type.String({ minLength: 1 })),
          path: Type.Optional(Type.String({ minLength: 1 })),
        },
        { minProperties: 1, maxProperties: 1, additionalProperties: false },
      ),
    ),
    value: Type.Optional(
      NameOf(
        'Only on a singleton get: the answer is one value (text, or any JSON value) held whole by this field of the entity; no rows are read.',
      ),
    ),
  },
  { additionalProperties: false },
);

const Mapping = Type.Union(
  [
    Type.String({ pattern: `^(${HTTP_METHODS.join('|')})\\s+/\\S*$` }),
    Type.Object(
      {
        method: OneOf(HTTP_METHODS),
        path: Type.String({ pattern: '^/' }),
        query: Type.Optional(TemplateMap),
        headers: Type.Optional(TemplateMap),
        body: Type.Optional(
          Type.Unknown({
            description:
              'Body template (JSON, or fields with body_encoding); absent = every parameter not used elsewhere (for POST, PUT, PATCH).',
          }),
        ),
        body_encoding: Type.Optional(
          OneOf(
            BODY_ENCODINGS,
            'How the body is sent: json (default), form (application/x-www-form-urlencoded) or multipart (multipart/form-data, text fields); form and multipart write nested keys as a[b]=1, lists as a[]=1.',
          ),
        ),
        body_required: Type.Optional(
          Type.Union([Type.Boolean(), Type.Record(Type.String(), Type.Unknown())], {
            description:
              'The vendor requires a body: a call passing none of its parameters sends {} (true) or this constant (a wrapper\'s empty object: {"data": {}}) instead of no body.',
          }),
        ),
        array_style: Type.Optional(OneOf(['repeat', 'comma'])),
        pagination: Type.Optional(Pagination),
        sort: Type.Optional(Sort),
        response: Type.Optional(Response),
      },
      { additionalProperties: false },
    ),
  ],
  {
    description:
      'How a capability maps onto HTTP. The string form "METHOD /path/{param}" is shorthand for {method, path}.',
  },
);

// Types, parameters, auth, the catalog header, relations, entities, capabilities and the file.

/** The keys of a type written out (`{type: ..., ...}`); `self` is the type of `items` and `fields`. */
const typeSpecKeys = <T extends TSchema>(self: T) => ({
  type: OneOf(TYPE_NAMES),
  description: Type.Optional(Description),
  values: Type.Optional(
    Type.Array(Type.Unsafe<string | number>({ type: ['string', 'number'] }), {
      description: 'Allowed values of an enum.',
    }),
  ),
  entity: Type.Optional(NameOf('Entity named by a ref.')),
  items: Type.Optional(CloneType(self, { description: 'Element type of an array.' })),
  fields: Type.Optional(NameMap(self, 'Fields of an object.')),
});

/** A type: a scalar type name, or an object with `type` (recursive through `items` and `fields`). */
const TypeOrShorthand = Type.Recursive(
  (self) =>
    Type.Union([ScalarName, Type.Object(typeSpecKeys(self), { additionalProperties: false })], {
      description:
        'A type: a scalar type name (string, integer, number, boolean, date, datetime) or an object with `type`.',
    }),
  { $id: TYPE_REF },
);
/** Where a type is used outside its own definition: a reference to `definitions.typeOrShorthand`. */
const TypeRef = Type.Unsafe<Static<typeof TypeOrShorthand>>(Type.Ref(TYPE_REF));
const Fields = NameMap(TypeRef);

const Param = Type.Union(
  [
    Type.Null(),
    ScalarName,
    Type.Object(
      {
        ...typeSpecKeys(TypeRef),
        type: Type.Optional(OneOf(TYPE_NAMES)),
        field: Type.Optional(NameOf('Entity field whose type and description the parameter takes.')),
        required: Type.Optional(Type.Boolean()),
        default: Type.Optional(Type.Unknown()),
        requires: Type.Optional(
          Type.Array(NameOf('A parameter of the same capability.'), {
            minItems: 1,
            uniqueItems: true,
            description: 'Parameters this one works only with; a program that gives it without them does not compile.',
          }),
        ),
        many: Type.Optional(
          Type.Boolean({
            description:
              'Takes one value or a list of them (`genre=["a","b"]`): repeated query keys, a JSON array in a body.',
          }),
        ),
        minimum: Type.Optional(Type.Number({ description: 'Smallest value of an integer or number parameter.' })),
        maximum: Type.Optional(Type.Number({ description: 'Largest value of an integer or number parameter.' })),
        minLength: Type.Optional(Type.Integer({ minimum: 0, description: 'Fewest characters of a string parameter.' })),
        maxLength: Type.Optional(Type.Integer({ minimum: 0, description: 'Most characters of a string parameter.' })),
        pattern: Type.Optional(
          Type.String({
            description:
              'JavaScript regular expression a string parameter must match (unanchored: write ^...$ for the whole value).',
          }),
        ),
        format: Type.Optional(
          OneOf(STRING_FORMATS, 'Format of a string parameter: email, uri, uuid, date-time or date.'),
        ),
      },
      { additionalProperties: false },
    ),
  ],
  {
    description:
      'A parameter. null, {} or an object without `type` takes the type and description of the entity field of the same name (or the one named by `field`).',
  },
);

const Auth = Type.Object(
  {
    scheme: OneOf(AUTH_SCHEMES),
    in: Type.Optional(OneOf(['header', 'query'])),
    name: Type.Optional(Type.String({ minLength: 1, description: 'Header or query parameter carrying the API key.' })),
    env: Type.Optional(EnvName),
    username_env: Type.Optional(EnvName),
    password_env: Type.Optional(EnvName),
    token_url: Type.Optional(Type.String({ minLength: 1 })),
    client_id_env: Type.Optional(EnvName),
    client_secret_env: Type.Optional(EnvName),
    scopes: Type.Optional(Type.Array(Type.String())),
    // Each key's own fields are optional here: a missing one is told as `bad_auth` (check-header.ts).
    also: Type.Optional(
      Type.Array(
        Type.Object(
          {
            in: Type.Optional(OneOf(['header', 'query'])),
            name: Type.Optional(
              Type.String({ minLength: 1, description: 'Header or query parameter carrying this key.' }),
            ),
            env: Type.Optional(EnvName),
          },
          { additionalProperties: false },
        ),
        { description: 'api_key only: further keys sent with the first on every call, each {in, name, env}.' },
      ),
    ),
  },
  { additionalProperties: false },
);

const Catalog = Type.Object(
  {
    entry_id: Type.String({
      description: 'Safe identifier: lower-case letter, then lower-case letters, digits, _ or -.',
    }),
    // Any value: a bad one is told as `bad_version` by the semantic checks, with the fix.
    version: Type.Unknown({ description: 'Positive integer; the highest version of an entry_id is loaded.' }),
    label: Type.String({ minLength: 1 }),
    tags: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { uniqueItems: true })),
    description: Description,
    backend: Type.Object({ url: Type.String({ pattern: '^https?://' }) }, { additionalProperties: false }),
    auth: Type.Optional(Auth),
  },
  { additionalProperties: false },
);

const Relation = Type.Object(
  {
    description: Type.Optional(Description),
    target: Name,
    cardinality: OneOf(['one', 'many']),
    capability: Name,
    bind: Type.Record(Type.String(), Name, {
      propertyNames: Name,
      description: 'Target capability parameter -> source field.',
    }),
  },
  { additionalProperties: false },
);

const Entity = Type.Object(
  {
    description: Type.Optional(Description),
    id: Type.Optional(NameOf('The id field; default `id`.')),
    fields: Fields,
    relations: Type.Optional(NameMap(Relation)),
  },
  { additionalProperties: false },
);

const Capability = Type.Object(
  {
    kind: OneOf(CAPABILITY_KINDS),
    entity: Name,
    description: Type.Optional(Description),
    id_param: Type.Optional(Name),
    singleton: Type.Optional(
      Type.Boolean({
        description:
          'A get that reads the one row its path answers, without an id parameter (GET /user); it gets an m# symbol of its own.',
      }),
    ),
    returns: Type.Optional(OneOf(['rows', 'row', 'none'])),
    at_least_one: Type.Optional(
      Type.Array(NameOf('A parameter of the capability.'), {
        uniqueItems: true,
        description:
          'Parameters of which a call must give at least one. Default for update: its optional parameters; [] turns it off.',
      }),
    ),
    params: Type.Optional(
      Type.Union([NameMap(Param), NameList], {
        description: 'Parameters: a map of name -> type, or a list of entity field names.',
      }),
    ),
  },
  { additionalProperties: false },
);

/** One YAML file of a catalog source directory. */
export const CatalogSourceFileSchema = Type.Object(
  {
    catalog: Type.Optional(Catalog),
    entities: Type.Optional(NameMap(Entity)),
    capabilities: Type.Optional(NameMap(Capability)),
    mappings: Type.Optional(NameMap(Mapping)),
  },
  {
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: SOURCE_SCHEMA_ID,
    title: 'svc catalog source file',
    description:
      'One YAML file of an svc catalog source directory. Sections may be split across files; `catalog` must appear in exactly one.',
    additionalProperties: false,
    definitions: { typeOrShorthand: withoutId(TypeOrShorthand) },
  },
);

/** The definition a `$ref` points at carries no `$id` of its own (its place in `definitions` names it). */
function withoutId<T extends { $id?: string }>(schema: T): Omit<T, '$id'> {
  const { $id: _id, ...rest } = schema;
  return rest;
}

/** A valid catalog source file, and its parts. */
export type CatalogSourceFile = Static<typeof CatalogSourceFileSchema>;
export type SourceCatalog = Static<typeof Catalog>;
export type SourceEntity = Static<typeof Entity>;
export type SourceRelation = Static<typeof Relation>;
export type SourceCapability = Static<typeof Capability>;
export type SourceParam = Static<typeof Param>;
export type SourceMapping = Static<typeof Mapping>;
export type SourceTypeSpec = Static<typeof TypeOrShorthand>;
