/** JSON Schema of the plan IR: the server validates client-compiled plans with it (ajv). */
import { CAPABILITY_KINDS, SORT_ORDERS } from '../pack/cgs.js';
import { MAX_PROGRAM_STATEMENTS } from './limits.js';
import { PLAN_VERSION } from './plan.js';

/** Nests inside nests: `e6[id, customer[name, tickets[id]]]` has two levels below the step. */
export const MAX_NEST_DEPTH = 2;

const stepId = { type: 'string', pattern: '^n[1-9][0-9]*$' };
const name = { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' };

/** Arguments by name: each a literal, or the other form given (a step's field, a row's field). */
function argsOf(other: Record<string, unknown>): Record<string, unknown> {
  const lit = { type: 'object', properties: { lit: {} }, required: ['lit'], additionalProperties: false };
  return { type: 'object', propertyNames: name, additionalProperties: { oneOf: [lit, other] } };
}
const sortSchema = {
  type: 'object',
  properties: { field: name, order: { enum: [...SORT_ORDERS] } },
  required: ['field', 'order'],
  additionalProperties: false,
};

/** The schema of a step's nests, `depth` levels deep at most (so a posted plan cannot nest without end). */
function nests(depth: number): Record<string, unknown> {
  const nest: Record<string, unknown> = {
    type: 'object',
    properties: {
      relation: name,
      entity: name,
      capability: name,
      card: { enum: ['one', 'many'] },
      args: argsOf({ type: 'object', properties: { field: name }, required: ['field'], additionalProperties: false }),
      projection: { type: 'array', items: name, uniqueItems: true },
      limit: { type: 'integer', minimum: 1 },
      sort: sortSchema,
      max: { type: 'integer', minimum: 1 },
      ...(depth > 1 ? { nest: nests(depth - 1) } : {}),
    },
    required: ['relation', 'entity', 'capability', 'card', 'args', 'max'],
    additionalProperties: false,
  };
  return { type: 'array', minItems: 1, items: nest };
}

export const PLAN_SCHEMA_ID = 'https://svc.invalid/schemas/plan.schema.json';

export const planSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  $id: PLAN_SCHEMA_ID,
  title: 'svc plan IR',
  type: 'object',
  properties: {
    version: { const: PLAN_VERSION },
    steps: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_PROGRAM_STATEMENTS,
      items: {
        type: 'object',
        properties: {
          id: stepId,
          op: { enum: [...CAPABILITY_KINDS] },
          api: { type: 'string', pattern: '^[a-z][a-z0-9_-]{0,62}$' },
          cgs_hash: { type: 'string', pattern: '^[0-9a-f]{64}$' },
          entity: name,
          capability: name,
          args: argsOf({
            type: 'object',
            properties: {
              ref: {
                type: 'object',
                properties: { step: stepId, field: name },
                required: ['step', 'field'],
                additionalProperties: false,
              },
            },
            required: ['ref'],
            additionalProperties: false,
          }),
          projection: { type: 'array', items: name, uniqueItems: true },
          depends_on: { type: 'array', items: stepId, uniqueItems: true },
          effect: { enum: ['read', 'write'] },
          limit: { type: 'integer', minimum: 1 },
          sort: sortSchema,
          via: {
            type: 'object',
            properties: { relation: name, from: stepId },
            required: ['relation'],
            additionalProperties: false,
          },
          fanout: {
            type: 'object',
            properties: { from: stepId, max: { type: 'integer', minimum: 1 } },
            required: ['from', 'max'],
            additionalProperties: false,
          },
          nest: nests(MAX_NEST_DEPTH),
        },
        required: ['id', 'op', 'api', 'cgs_hash', 'entity', 'capability', 'args', 'depends_on', 'effect'],
        additionalProperties: false,
      },
    },
    bind: { type: 'object', propertyNames: name, additionalProperties: stepId },
    return: { type: 'array', items: stepId, minItems: 1 },
    name: { type: 'string' },
    summary: { type: 'object' },
  },
  required: ['version', 'steps', 'bind', 'return'],
  additionalProperties: false,
} as const;
