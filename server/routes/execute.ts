/**
 * Execute routes: sessions, context waves, programs, and the terminal's symbols/status/runs and
 * artifacts. They parse input, call the ExecuteService, and render in the negotiated format.
 */
import type { IncomingMessage } from 'node:http';
import { svcError, SvcFailure } from '../../common/errors.js';
import type { ExecuteService, ProgramRequest } from '../execute/service.js';
import type { ExecuteSession, SessionStore } from '../execute/session.js';
import type { Registry } from '../../pack/registry.js';
import { mediaType, parseJsonObject, readBody } from '../http/body.js';
import { negotiate, type Format } from '../http/format.js';
import type { Params, Router } from '../http/router.js';
import { sendJson, sendOutcome } from '../http/respond.js';
import { RESOLVED_PLAN_TYPE } from '../execute/resolved-plan.js';
import { streamOperation } from '../http/sse.js';

export interface ExecuteRouteDeps {
  service: ExecuteService;
  sessions: SessionStore;
  registry: () => Registry;
  /** The caller's tenant ('' when inbound auth is off). */
  tenant: (req: IncomingMessage) => string;
}

/** The format an Accept header asks for; 406 when none fits. */
export function formatOf(req: IncomingMessage): Format {
  const f = negotiate(req.headers.accept);
  if (!f) throw new SvcFailure([svcError('not_acceptable', `no response format matches Accept: ${req.headers.accept}`, { hint: 'accept text/toon (default), text/plain, application/json or application/x-ndjson' })]);
  return f;
}

/** A JSON object body (POST /execute, /context); `example` shows what the route takes. */
async function jsonBody(req: IncomingMessage, example: string): Promise<Record<string, unknown>> {
  const text = await readBody(req);
  if (!text.trim()) return {};
  const type = mediaType(req);
  // curl -d without -H 'content-type: application/json' labels JSON as a form: read it as JSON.
  if (type && type !== 'application/json' && type !== 'application/x-www-form-urlencoded') throw new SvcFailure([svcError('unsupported_media_type', `this route takes application/json, not ${type}`, { hint: 'send a JSON object with Content-Type: application/json' })]);
  return parseJsonObject(text, `send a JSON object such as ${example} with Content-Type: application/json`);
}

function flag(name: string, v: unknown): boolean | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'boolean') return v;
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw new SvcFailure([svcError('bad_arguments', `\`${name}\` must be true or false`, { hint: `write ${name}=true or ${name}=false` })]);
}

/** mode, wait, force and plan_commit_ref from the query (which wins) or a JSON body. */
function runFlags(url: URL, body: Record<string, unknown>): Omit<ProgramRequest, 'program'> {
  const q = url.searchParams;
  const mode = q.get('mode') ?? (typeof body.mode === 'string' ? body.mode : 'live');
  if (mode !== 'plan' && mode !== 'live' && mode !== 'run') throw new SvcFailure([svcError('bad_arguments', `mode \`${mode}\` is not plan or live`, { hint: 'mode=plan dry-runs; leave it out to run' })]);
  const ref = q.get('plan_commit_ref') ?? body.plan_commit_ref;
  if (ref !== undefined && ref !== null && (typeof ref !== 'string' || !/^pc\d+$/.test(ref))) throw new SvcFailure([svcError('bad_arguments', '`plan_commit_ref` must be a pcN from a dry-run', { hint: 'dry-run with mode=plan to get one' })]);
  const out: Omit<ProgramRequest, 'program'> = {
    mode: mode === 'plan' ? 'plan' : 'live',
    wait: flag('wait', q.get('wait') ?? body.wait) ?? true,
    force: flag('force', q.get('force') ?? body.force) ?? false,
  };
  if (typeof ref === 'string') out.plan_commit_ref = ref;
  return out;
}

/** The program request from the body (plain text or JSON) and the query parameters (which win). */
export async function programRequest(req: IncomingMessage, url: URL): Promise<ProgramRequest> {
  const text = await readBody(req);
  const type = mediaType(req);
  let body: Record<string, unknown> = {};
  let program: unknown;
  if (type === 'application/json') {
    body = parseJsonObject(text);
    program = body.program;
    for (const k of Object.keys(body)) {
      if (!['program', 'wait', 'force', 'plan_commit_ref', 'mode'].includes(k)) throw new SvcFailure([svcError('bad_arguments', `unknown body key \`${k}\``, { hint: 'the JSON body takes program, wait, force, plan_commit_ref (and mode)' })]);
    }
  } else if (type === '' || type === 'text/plain' || type === 'text/x-svc' || type === 'application/x-www-form-urlencoded') {
    // curl --data-binary sends the form type by default: the body is still the program text.
    program = text;
  } else {
    throw new SvcFailure([svcError('unsupported_media_type', `a program is sent as text/plain or application/json, not ${type}`, { hint: 'POST the program text with Content-Type: text/plain' })]);
  }
  if (typeof program !== 'string' || !program.trim()) throw new SvcFailure([svcError('bad_arguments', 'the program is empty', { hint: 'send a program such as e1(city="Berlin")[name] as the body' })]);
  return { program, ...runFlags(url, body) };
}

export function executeRoutes(router: Router, deps: ExecuteRouteDeps): void {
  const session = (req: IncomingMessage, p: Params): ExecuteSession => deps.sessions.get(p.ph!, p.sid!, deps.tenant(req), deps.registry());

  router.add('POST', '/execute', async (req, res) => {
    const format = formatOf(req);
    sendOutcome(res, deps.service.open(await jsonBody(req, '{"entry_id": "<catalog>", "seeds": ["<catalog>:<Entity>"]}'), deps.tenant(req)), format);
  });
  router.add('POST', '/execute/:ph/:sid', async (req, res, p, url) => {
    const format = formatOf(req);
    const s = session(req, p);
    const r = await programRequest(req, url);
    sendOutcome(res, await deps.service.program(s, r), format, r.program);
  });
  router.add('POST', '/execute/:ph/:sid/context', async (req, res, p) => {
    const format = formatOf(req);
    const s = session(req, p);
    sendOutcome(res, deps.service.context(s, await jsonBody(req, '{"seeds": ["<catalog>:<Entity>"]}')), format);
  });
  router.add('POST', '/execute/:ph/:sid/plan', async (req, res, p, url) => {
    const format = formatOf(req);
    const s = session(req, p);
    if (mediaType(req) !== RESOLVED_PLAN_TYPE) throw new SvcFailure([svcError('unsupported_media_type', `a resolved plan is sent as ${RESOLVED_PLAN_TYPE}`, { hint: 'programs go to POST /execute/{prompt_hash}/{session} as text/plain' })]);
    const body = parseJsonObject(await readBody(req), 'send {"plan": <plan IR>} (optionally with wait, force, plan_commit_ref, mode)');
    for (const k of Object.keys(body)) {
      if (!['plan', 'program', 'wait', 'force', 'plan_commit_ref', 'mode'].includes(k)) throw new SvcFailure([svcError('bad_arguments', `unknown body key \`${k}\``, { hint: 'the body takes plan, program, wait, force, plan_commit_ref and mode' })]);
    }
    sendOutcome(res, await deps.service.resolvedPlan(s, body, runFlags(url, body)), format);
  });
  router.add('GET', '/execute/:ph/:sid/operations/:handle/stream', (req, res, p) => {
    const s = session(req, p);
    streamOperation(req, res, deps.service, deps.service.operation(s, p.handle!));
  });
  router.add('GET', '/execute/:ph/:sid/symbols', (req, res, p) => {
    const s = session(req, p);
    sendJson(res, 200, { ...s.symbols.toJSON(), teaching: s.teaching });
  });
  router.add('GET', '/execute/:ph/:sid/status', (req, res, p) => sendJson(res, 200, statusOf(session(req, p))));
  router.add('GET', '/execute/:ph/:sid/runs', (req, res, p) => sendJson(res, 200, { runs: session(req, p).runs }));
  router.add('GET', '/execute/:ph/:sid/artifacts/:run', async (req, res, p) => {
    const s = session(req, p);
    sendJson(res, 200, await deps.service.artifact(s, p.run!));
  });
}

function statusOf(s: ExecuteSession): Record<string, unknown> {
  return {
    prompt_hash: s.prompt_hash, session: s.session, intent: s.intent,
    entries: [...s.pins].map(([entry_id, cgs_hash]) => ({ entry_id, cgs_hash })),
    domain_revision: s.symbols.domainRevision, symbols: s.symbols.all().length,
    page_handles: [...s.pages].filter(([, v]) => !v.used).map(([k]) => k),
    plan_tokens: [...s.tokens].map(([k, t]) => ({ ref: k, commit_id: t.commit_id, verdict: t.review.verdict, consumed: t.consumed_at !== undefined })),
    runs: s.runs.length, created_at: new Date(s.created_at).toISOString(), last_used: new Date(s.last_used).toISOString(),
  };
}

