/** The svc routes the page calls, one function each (docs/http.md). */
import { request, type Answer } from './client.js';
import type {
  AuthContext,
  DiscoverRow,
  ExecAnswer,
  RegistryRow,
  SessionStatus,
  Symbols,
  ToolModel,
  WaveAnswer,
} from './types.js';

const enc = encodeURIComponent;

/** A session's address. */
export interface SessionRef {
  prompt_hash: string;
  session: string;
}

const base = (s: SessionRef) => `execute/${enc(s.prompt_hash)}/${enc(s.session)}`;

export const registry = () => request<{ entries: RegistryRow[] }>('v1/registry');

export const toolModel = (entry: string) => request<ToolModel>(`v1/registry/${enc(entry)}/tool-model`);

export const discover = (q: string, limit = 20) =>
  request<{ intent: string; rows: DiscoverRow[] }>(`v1/discover?q=${enc(q)}&limit=${limit}`);

export const whoAmI = () => request<AuthContext>('v1/incoming-auth/context');

export const openSession = (entry_id: string, seeds: string[], intent: string) =>
  request<WaveAnswer>('execute', { json: { entry_id, seeds, ...(intent ? { intent } : {}) } });

export const addContext = (s: SessionRef, seeds: string[]) =>
  request<WaveAnswer>(`${base(s)}/context`, { json: { seeds } });

export const symbols = (s: SessionRef) => request<Symbols>(`${base(s)}/symbols`);

export const status = (s: SessionRef) => request<SessionStatus>(`${base(s)}/status`);

/** How a program is sent: a dry-run, in the background, with a plan token, forced. */
export interface RunHow {
  mode?: 'plan';
  wait?: false;
  plan_commit_ref?: string;
  force?: true;
}

/** POST a program (JSON body, JSON answer). */
export const runProgram = (s: SessionRef, program: string, how: RunHow = {}): Promise<Answer<ExecAnswer>> =>
  request<ExecAnswer>(base(s), { json: { program, ...how } });

/**
 * Checks a program without running it (`mode=check`, docs/http.md): the server compiles and
 * reviews it and answers its diagnostics (400 with line:col) or its review (200); it mints no pcN,
 * stores no run, runs no continuation and sends nothing to the vendor.
 */
export const checkProgram = (s: SessionRef, program: string, signal: AbortSignal): Promise<Answer<ExecAnswer>> =>
  request<ExecAnswer>(base(s), { json: { program, mode: 'check' }, signal, quiet: true });

/** The address of a stored run (also a link the user can open when inbound auth is off). */
export const artifactPath = (s: SessionRef, runId: string) => `${base(s)}/artifacts/${enc(runId)}`;

export const artifact = (s: SessionRef, runId: string) => request<Record<string, unknown>>(artifactPath(s, runId));

/** The SSE stream of an operation. */
export const streamPath = (s: SessionRef, handle: string) => `${base(s)}/operations/${enc(handle)}/stream`;
