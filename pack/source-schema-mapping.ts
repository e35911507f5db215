/**
 * The `mappings:` part of the catalog source schema: how a capability maps onto HTTP (method, path,
 * query, headers, body, pagination, sort, response).
 */
import { Type } from '@sinclair/typebox';
import { BODY_ENCODINGS, HTTP_METHODS, PAGINATION_STYLES, SORT_ORDERS } from './cgs.js';
import { Name, NameList, NameOf, OneOf } from './source-schema-parts.js';

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

export const Mapping = Type.Union(
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
