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
import { Mapping } from './source-schema-mapping.js';
import { Description, EnvName, Name, NameList, NameMap, NameOf, OneOf, ScalarName } from './source-schema-parts.js';
import { AUTH_SCHEMES, CAPABILITY_KINDS, STRING_FORMATS, TYPE_NAMES } from './cgs.js';

export const SOURCE_SCHEMA_ID = 'https://svc.invalid/schemas/catalog-source.schema.json';
const TYPE_REF = '#/definitions/typeOrShorthand';

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
