/** The shapes of the svc answers the page reads (docs/http.md). Only the fields it uses. */

export interface RegistryRow {
  entry_id: string;
  label: string;
  tags: string[];
  version: number;
  cgs_hash: string;
  description: string;
  entities: string[];
  capabilities: number;
  auth: string;
}

export interface FieldInfo {
  name: string;
  type: string;
  description?: string;
}

export interface ParamInfo extends FieldInfo {
  required: boolean;
  default?: unknown;
}

export interface Verb {
  name: string;
  kind: string;
  effect: 'read' | 'write';
  returns: string;
  default: boolean;
  params: ParamInfo[];
  about: string;
}

export interface Relation {
  name: string;
  target: string;
  cardinality: 'one' | 'many';
  capability: string;
  description?: string;
}

export interface EntityModel {
  description: string;
  id_field: string;
  fields: FieldInfo[];
  verbs: Verb[];
  relations: Relation[];
  entity_ref_links: Array<{ field: string; entity: string }>;
}

export interface ToolModel {
  entry: { entry_id: string; label: string; tags: string[] };
  overview: { entity_count: number; relation_edge_count: number; verb_count: number };
  entities: Record<string, EntityModel>;
}

export interface DiscoverRow {
  api: string;
  entity: string;
  seed: string;
  score: number;
  label: string;
  description: string;
  capabilities: string[];
  matched: string[];
}

export interface AuthContext {
  mode: 'off' | 'optional' | 'required';
  authenticated: boolean;
  method: 'jwt' | 'api_key' | 'anonymous';
  subject: string | null;
  tenant_id: string | null;
}

export interface PinnedEntry {
  entry_id: string;
  cgs_hash: string;
}

/** `POST /execute` (201) and `POST .../context` (200). */
export interface WaveAnswer {
  prompt_hash?: string;
  session?: string;
  domain_revision: number;
  entries: PinnedEntry[];
  rules?: string;
  wave: string;
  notice?: string;
}

export interface Symbols {
  entities: Array<{ sym: string; api: string; entity: string }>;
  capabilities: Array<{ sym: string; api: string; capability: string; entity: string }>;
  relations: Array<{ sym: string; api: string; entity: string; relation: string; target: string }>;
  domain_revision: number;
  teaching: string;
}

/** `GET .../status`: a summary of the session. */
export interface SessionStatus {
  prompt_hash: string;
  session: string;
  intent: string;
  entries: PinnedEntry[];
  domain_revision: number;
  symbols: number;
  page_handles: string[];
  plan_tokens: Array<{ ref: string; commit_id: string; verdict: string; consumed: boolean }>;
  runs: number;
}

export interface ExecError {
  code: string;
  message: string;
  hint?: string;
  line?: number;
  col?: number;
  path?: string;
}

export type Row = Record<string, unknown>;

export interface Block {
  entity: string;
  count: number;
  total?: number;
  more?: string;
  done?: string;
  rows: Row[];
}

export interface Review {
  verdict: 'proceed' | 'review';
  flow: 'clean' | string[];
  mutations: number;
  max_calls: number | null;
  summary: string;
}

export interface OpMeta {
  n: string;
  '~': string;
  s: 'running' | 'succeeded' | 'failed' | 'cancelled';
  l: string;
  r?: string;
}

export interface SvcMeta {
  mode?: 'live' | 'plan' | 'check';
  commit_id?: string;
  run_id?: string;
  status?: string;
  code?: string;
  plan_commit_ref?: string;
  dry_verdict?: 'proceed' | 'review';
  dry_review?: Review;
  op?: OpMeta;
}

/** An answer of the program route in JSON. */
export interface ExecAnswer extends Partial<Block> {
  results?: Block[];
  text?: string;
  errors?: ExecError[];
  warnings?: ExecError[];
  _meta?: { svc?: SvcMeta };
}

/** The blocks of an answer: `results`, or the one flat block. */
export function blocksOf(a: ExecAnswer): Block[] {
  if (a.results) return a.results;
  if (a.entity !== undefined) return [{ entity: a.entity, count: a.count ?? 0, rows: a.rows ?? [], ...pick(a) }];
  return [];
}

function pick(a: ExecAnswer): Partial<Block> {
  return {
    ...(a.total !== undefined ? { total: a.total } : {}),
    ...(a.more !== undefined ? { more: a.more } : {}),
    ...(a.done !== undefined ? { done: a.done } : {}),
  };
}
