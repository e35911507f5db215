/**
 * The MCP tools as SPEC.md names them: argument schemas defined once (TypeBox: the JSON Schema a
 * client sees in tools/list is the one the server checks), short descriptions (tools/list is sent
 * on every connection, so every word costs tokens), and annotations.
 */
import { Type, type Static, type TObject } from '@sinclair/typebox';

const Ref = Type.String({ description: 'l_<token> from svc_context' });

export const AuthArgs = Type.Object(
  {
    bearer_token: Type.Optional(Type.String({ minLength: 1, maxLength: 16384, description: 'a JWT' })),
    api_key: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, description: 'an API key' })),
  },
  { $id: 'svc:mcp/svc_incoming_auth', additionalProperties: false },
);

export const ContextArgs = Type.Object(
  {
    intent: Type.String({ maxLength: 4096, description: 'your task in a few words; keep it stable in one context' }),
    seeds: Type.Array(
      Type.Object(
        {
          api: Type.String({ minLength: 1, maxLength: 200, description: 'catalog entry_id' }),
          entity: Type.String({ minLength: 1, maxLength: 200 }),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 256 },
    ),
  },
  { $id: 'svc:mcp/svc_context', additionalProperties: false },
);

export const SvcArgs = Type.Object(
  {
    logical_session_ref: Ref,
    program: Type.String({ minLength: 1, description: 'svc program text' }),
  },
  { $id: 'svc:mcp/svc', additionalProperties: false },
);

/** svc_run: the keys of RUN_REJECTED are answered with what to send instead before the schema is checked. */
export const RunArgs = Type.Object(
  {
    logical_session_ref: Ref,
    run_ref: Type.String({ minLength: 1, maxLength: 200, description: 'pcN from svc, or l_<token>_pgN' }),
  },
  { $id: 'svc:mcp/svc_run', additionalProperties: false },
);

export const DiscoverArgs = Type.Object(
  {
    query: Type.String({ maxLength: 1000, description: 'what you need, in words' }),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, description: 'rows (default 10)' })),
  },
  { $id: 'svc:mcp/discover_capabilities', additionalProperties: false },
);

export const RegistryArgs = Type.Object(
  { tag: Type.Optional(Type.String({ maxLength: 200, description: 'only entries with this tag' })) },
  { $id: 'svc:mcp/list_registry', additionalProperties: false },
);

export type AuthArgs = Static<typeof AuthArgs>;
export type ContextArgs = Static<typeof ContextArgs>;
export type SvcArgs = Static<typeof SvcArgs>;
export type RunArgs = Static<typeof RunArgs>;
export type DiscoverArgs = Static<typeof DiscoverArgs>;
export type RegistryArgs = Static<typeof RegistryArgs>;

/** What svc_run rejects, and what to send instead. */
export const RUN_REJECTED: Record<string, string> = {
  program: 'send programs to svc; svc_run takes the run_ref svc returned',
  wait: 'svc_run always awaits its run; leave wait out',
  cancel: 'cancel the MCP request to stop a run; cancel(oN) is an HTTP and terminal continuation',
  force: 'a write runs by the pcN of its dry-run: send that pcN as run_ref',
  execute: 'svc_run always executes; leave execute out',
  plan_commit_ref: 'send the pcN as run_ref',
  page_handle: 'send the page handle (l_<token>_pgN) as run_ref',
};

export interface ToolDef {
  name: string;
  description: string;
  schema: TObject;
  annotations: { title: string; readOnlyHint?: boolean; destructiveHint?: boolean; openWorldHint?: boolean };
}

export const TOOLS: readonly ToolDef[] = [
  {
    name: 'svc_incoming_auth',
    description: 'Authenticate this connection once: exactly one of bearer_token or api_key.',
    schema: AuthArgs,
    annotations: { title: 'Authenticate', readOnlyHint: true, openWorldHint: false },
  },
  {
    name: 'svc_context',
    description:
      'Call first. Opens or extends a session for api:entity seeds; returns logical_session_ref and a teaching table of symbols (only new rows).',
    schema: ContextArgs,
    annotations: { title: 'Learn symbols', readOnlyHint: true, openWorldHint: false },
  },
  {
    name: 'svc',
    description:
      'Compile and dry-run a program. A clean read runs at once and returns rows; otherwise returns run_ref (pcN) and a review in _meta.svc.',
    schema: SvcArgs,
    annotations: { title: 'Run a program', readOnlyHint: false, destructiveHint: false, openWorldHint: true },
  },
  {
    name: 'svc_run',
    description:
      'Run a reviewed plan (run_ref pcN from svc) or fetch more pages (run_ref l_<token>_pgN). Awaits the end; never for clean reads.',
    schema: RunArgs,
    annotations: { title: 'Run reviewed', readOnlyHint: false, destructiveHint: true, openWorldHint: true },
  },
  {
    name: 'discover_capabilities',
    description: 'Find catalog entities for a need; returns api:Entity seeds for svc_context.',
    schema: DiscoverArgs,
    annotations: { title: 'Discover', readOnlyHint: true, openWorldHint: false },
  },
  {
    name: 'list_registry',
    description: 'List the catalogs (entry_id, label, tags).',
    schema: RegistryArgs,
    annotations: { title: 'List catalogs', readOnlyHint: true, openWorldHint: false },
  },
];

/** Initialize instructions: short, they are sent on every connection. */
export const INSTRUCTIONS = [
  'svc runs vendor REST APIs through short programs.',
  '1. Call svc_context first (intent + api:Entity seeds; discover_capabilities finds seeds). Keep its logical_session_ref; after new_symbol_space drop cached e#/m#/r# symbols.',
  '2. svc runs a program: clean reads return rows at once; writes return run_ref pcN and a review; run it with svc_run.',
  '3. Handles (pcN, l_<token>_pgN) come from the host only; never invent or reuse vendor ids as handles.',
  '4. svc_run awaits long work and pushes progress; wait for its one answer before starting unrelated runs.',
].join('\n');

/** The JSON Schema of a tool as tools/list shows it (TypeBox's symbols do not serialize). */
export function inputSchema(t: ToolDef): { type: 'object'; [k: string]: unknown } {
  const { $id: _id, ...schema } = JSON.parse(JSON.stringify(t.schema)) as { type: 'object'; [k: string]: unknown };
  return schema;
}
