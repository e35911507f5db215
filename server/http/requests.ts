/**
 * The JSON request bodies of the execute routes, each defined once as a JSON Schema built in code
 * (TypeBox), compiled by ajv, with its TypeScript type derived from the same definition. A field of
 * the wrong type, an unknown key or a missing one is a 400 `bad_arguments` naming the field; `null`
 * counts as absent for optional fields.
 */
import { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox';
import type { ErrorObject } from 'ajv';
import { svcError, SvcFailure, type SvcError } from '../../common/errors.js';
import { quote } from '../../common/quote.js';
import { check } from '../../pack/ajv.js';

/** An optional field; `description` is what the field must be, as an error message says it. */
const optional = <T extends TSchema>(t: T, description: string) =>
  Type.Optional(Type.Union([t, Type.Null()], { description }));
const Name = Type.String({ minLength: 1, maxLength: 200 });

/** A seed: `"api:Entity"`, `"Entity"` of the session's entry, or `{api, entity}`. */
export const SeedSchema = Type.Union([
  Type.String({ minLength: 1, maxLength: 400 }),
  Type.Object({ api: Type.Optional(Name), entity: Name }, { additionalProperties: false }),
]);
const SEEDS = 'a list of at most 256 seeds, each "api:Entity" or {"api": "...", "entity": "..."}';
const Seeds = Type.Array(SeedSchema, { maxItems: 256, description: SEEDS });

const RunFlags = {
  wait: optional(Type.Boolean(), 'true or false'),
  force: optional(Type.Boolean(), 'true or false'),
  plan_commit_ref: optional(Type.String({ pattern: '^pc[0-9]{1,9}$' }), 'a pcN from a dry-run (pc0, pc1, ...)'),
  mode: optional(
    Type.Union([Type.Literal('plan'), Type.Literal('check'), Type.Literal('live'), Type.Literal('run')]),
    '"plan" (a dry-run), "check" (compile and review only) or "live"',
  ),
};

/** `POST /execute`: open a session on one catalog. */
export const OpenBodySchema = Type.Object(
  {
    entry_id: Type.String({ minLength: 1, maxLength: 200, description: 'the entry_id of a loaded catalog' }),
    intent: optional(Type.String({ maxLength: 4096 }), 'a string of at most 4096 characters'),
    seeds: optional(Seeds, SEEDS),
  },
  { $id: 'svc:request/open', additionalProperties: false },
);
/** `POST .../context`: more seeds (expand or federate). */
export const ContextBodySchema = Type.Object(
  { seeds: Seeds },
  { $id: 'svc:request/context', additionalProperties: false },
);
/** `POST /execute/{ph}/{s}` with a JSON body. */
export const ProgramBodySchema = Type.Object(
  { program: Type.String({ description: 'the program text, a string' }), ...RunFlags },
  { $id: 'svc:request/program', additionalProperties: false },
);
/** `POST .../plan`: a plan compiled by the client (its shape is checked by the plan schema). */
export const PlanBodySchema = Type.Object(
  {
    plan: Type.Unknown({ description: 'the plan IR, an object' }),
    program: optional(Type.String(), 'the program text the plan came from, a string'),
    ...RunFlags,
  },
  { $id: 'svc:request/plan', additionalProperties: false },
);

export type OpenBody = Static<typeof OpenBodySchema>;
export type ContextBody = Static<typeof ContextBodySchema>;
export type ProgramBody = Static<typeof ProgramBodySchema>;
export type PlanBody = Static<typeof PlanBodySchema>;
export type Seed = Static<typeof SeedSchema>;

/**
 * `data` checked against `schema`; every problem is a `bad_arguments` error naming its field (one
 * per field), with `example` (what the route takes) in the hint.
 */
export function decodeBody<S extends TObject>(
  schema: S,
  data: unknown,
  example: string,
  what: 'body' | 'arguments' = 'body',
): Static<S> {
  const checked = check(schema, data);
  if (checked.ok) return checked.value;
  const byField = new Map<string, SvcError>();
  for (const e of checked.errors) {
    const p = problem(schema, e, data, example, what);
    // A malformed `seeds` is a bad seed, as is a seed that names nothing.
    if (p.field === 'seeds') p.error.code = 'bad_seed';
    if (!byField.has(p.field)) byField.set(p.field, p.error);
  }
  throw new SvcFailure([...byField.values()]);
}

function problem(
  schema: TObject,
  e: ErrorObject,
  data: unknown,
  example: string,
  what: 'body' | 'arguments',
): { field: string; error: SvcError } {
  const keys = Object.keys(schema.properties);
  if (e.instancePath === '' && e.keyword === 'required') {
    const field = (e.params as { missingProperty: string }).missingProperty;
    return { field, error: svcError('bad_arguments', `\`${field}\` is required`, { hint: `send ${example}` }) };
  }
  if (e.instancePath === '' && e.keyword === 'additionalProperties') {
    const field = (e.params as { additionalProperty: string }).additionalProperty;
    return {
      field,
      error: svcError('bad_arguments', `unknown ${what === 'body' ? 'body key' : 'argument'} \`${quote(field)}\``, {
        hint: `the ${what} take${what === 'body' ? 's' : ''} ${keys.join(', ')}`,
      }),
    };
  }
  if (e.instancePath === '')
    return {
      field: '',
      error: svcError('bad_arguments', `the ${what} must be a JSON object`, { hint: `send ${example}` }),
    };
  const [field, item] = e.instancePath.split('/').slice(1).map(decodeURIComponent) as [string, string | undefined];
  const expected = schema.properties[field]?.description ?? 'something else';
  const value = (data as Record<string, unknown>)[field];
  const got =
    item !== undefined && Array.isArray(value)
      ? `${preview(value[Number(item)])} at \`${field}[${item}]\``
      : preview(value);
  return {
    field,
    error: svcError('bad_arguments', `\`${field}\` must be ${expected}, not ${got}`, { hint: `send ${example}` }),
  };
}

/** A short account of a JSON value for a message; never the whole of a large or deep value. */
export function preview(v: unknown): string {
  if (Array.isArray(v)) return `a list of ${v.length}`;
  if (v === null) return 'null';
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'string') return `"${quote(v)}"`;
  return typeof v === 'number' || typeof v === 'boolean' ? String(v) : typeof v;
}
