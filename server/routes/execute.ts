/**
 * Execute routes: sessions, context waves, programs, and the terminal's symbols/status/runs and
 * artifacts. They parse input, call the ExecuteService, and render in the negotiated format.
 */
import type { IncomingMessage } from 'node:http';
import type { RequestUrl } from '../../common/request-target.js';
import { svcError, SvcFailure } from '../../common/errors.js';
import { quote } from '../../common/quote.js';
import type { ExecuteService, ProgramRequest, Who } from '../execute/service.js';
import type { SessionKey, SessionState } from '../execute/state.js';
import { mediaType, parseJsonObject, readBody } from '../http/body.js';
import { EXECUTE_MEDIA_TYPES, negotiate, type Format } from '../http/negotiate.js';
import {
  ContextBodySchema,
  decodeBody,
  OpenBodySchema,
  PlanBodySchema,
  ProgramBodySchema,
  type ProgramBody,
} from '../http/requests.js';
import type { Params, Router } from '../http/router.js';
import { sendJson, sendOutcome } from '../http/respond.js';
import { RESOLVED_PLAN_TYPE } from '../execute/resolved-plan.js';
import { streamOperation } from '../http/sse.js';

export interface ExecuteRouteDeps {
  service: ExecuteService;
  /** The caller's tenant ('' when inbound auth is off). */
  tenant: (req: IncomingMessage) => string;
  /** The sender of a request: its subject and its headers (for forwarded vendor credentials). */
  who: (req: IncomingMessage) => Who;
}

/** The format an Accept header asks for; 406 when none fits. */
export function formatOf(req: IncomingMessage): Format {
  const f = negotiate(req.headers.accept);
  if (!f)
    throw new SvcFailure([
      svcError('not_acceptable', `no response format matches Accept: ${quote(String(req.headers.accept), 120)}`, {
        hint: `accept one of ${EXECUTE_MEDIA_TYPES}`,
      }),
    ]);
  return f;
}

/** The JSON object text of a POST /execute or /context body ('{}' when empty). */
async function jsonText(req: IncomingMessage, example: string): Promise<Record<string, unknown>> {
  const text = await readBody(req);
  if (!text.trim()) return {};
  const type = mediaType(req);
  // curl -d without -H 'content-type: application/json' labels JSON as a form: read it as JSON.
  if (type && type !== 'application/json' && type !== 'application/x-www-form-urlencoded')
    throw new SvcFailure([
      svcError('unsupported_media_type', `this route takes application/json, not ${type}`, {
        hint: 'send a JSON object with Content-Type: application/json',
      }),
    ]);
  return parseJsonObject(text, `send a JSON object such as ${example} with Content-Type: application/json`);
}

function flag(name: string, v: string | null): boolean | undefined {
  if (v === null) return undefined;
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw new SvcFailure([
    svcError('bad_arguments', `\`${name}\` must be true or false`, { hint: `write ${name}=true or ${name}=false` }),
  ]);
}

const NO_QUERY = new URLSearchParams();

/** mode, wait, force and plan_commit_ref from the query (which wins) or a JSON body (already checked). */
function runFlags(url: RequestUrl, body: Omit<ProgramBody, 'program'>): Omit<ProgramRequest, 'program'> {
  // No query (the common case): no URLSearchParams built for it.
  const q = url.search ? url.searchParams : NO_QUERY;
  const mode = q.get('mode') ?? body.mode ?? 'live';
  if (mode !== 'plan' && mode !== 'check' && mode !== 'live' && mode !== 'run')
    throw new SvcFailure([
      svcError('bad_arguments', `mode \`${mode.slice(0, 40)}\` is not plan, check or live`, {
        hint: 'mode=plan dry-runs, mode=check only compiles; leave it out to run',
      }),
    ]);
  const ref = q.get('plan_commit_ref') ?? body.plan_commit_ref ?? undefined;
  if (ref !== undefined && !/^pc\d{1,9}$/.test(ref))
    throw new SvcFailure([
      svcError('bad_arguments', '`plan_commit_ref` must be a pcN from a dry-run', {
        hint: 'dry-run with mode=plan to get one',
      }),
    ]);
  const out: Omit<ProgramRequest, 'program'> = {
    mode: mode === 'run' ? 'live' : mode,
    wait: flag('wait', q.get('wait')) ?? body.wait ?? true,
    force: flag('force', q.get('force')) ?? body.force ?? false,
  };
  if (ref !== undefined) out.plan_commit_ref = ref;
  return out;
}

const PROGRAM_EXAMPLE = '{"program": "e1[name]"} (optionally with wait, force, plan_commit_ref, mode)';

/** The program request from the body (plain text or JSON) and the query parameters (which win). */
export async function programRequest(req: IncomingMessage, url: RequestUrl): Promise<ProgramRequest> {
  const text = await readBody(req);
  const type = mediaType(req);
  let body: Omit<ProgramBody, 'program'> = {};
  let program: string;
  if (type === 'application/json') {
    const decoded = decodeBody(ProgramBodySchema, parseJsonObject(text), PROGRAM_EXAMPLE);
    ({ program, ...body } = decoded);
  } else if (
    type === '' ||
    type === 'text/plain' ||
    type === 'text/x-svc' ||
    type === 'application/x-www-form-urlencoded'
  ) {
    // curl --data-binary sends the form type by default: the body is still the program text.
    program = text;
  } else {
    throw new SvcFailure([
      svcError('unsupported_media_type', `a program is sent as text/plain or application/json, not ${type}`, {
        hint: 'POST the program text with Content-Type: text/plain',
      }),
    ]);
  }
  if (!program.trim())
    throw new SvcFailure([
      svcError('bad_arguments', 'the program is empty', {
        hint: 'send a program such as e1(city="Berlin")[name] as the body',
      }),
    ]);
  return { program, ...runFlags(url, body) };
}

export function executeRoutes(router: Router, deps: ExecuteRouteDeps): void {
  const { service } = deps;
  const key = (p: Params): SessionKey => ({ prompt_hash: p.ph!, session: p.sid! });
  /** The session, stale or not: what it already holds stays readable (operations, runs, artifacts). */
  const found = (req: IncomingMessage, p: Params) => service.find(key(p), deps.tenant(req));
  /** The session, for routes that change it or run something new: a stale session is refused. */
  const current = async (req: IncomingMessage, p: Params): Promise<SessionState> => {
    const f = await found(req, p);
    if (f.stale) throw new SvcFailure([f.stale]);
    return f.session;
  };

  router.add('POST', '/execute', async (req, res) => {
    const format = formatOf(req);
    const example = '{"entry_id": "<catalog>", "seeds": ["<catalog>:<Entity>"]}';
    sendOutcome(
      res,
      await service.open(decodeBody(OpenBodySchema, await jsonText(req, example), example), deps.tenant(req)),
      format,
    );
  });
  router.add('POST', '/execute/:ph/:sid', async (req, res, p, url) => {
    const format = formatOf(req);
    const f = await service.find(key(p), deps.tenant(req));
    const r = await programRequest(req, url);
    r.who = deps.who(req);
    sendOutcome(res, await service.program(f.session, r, f), format, r.program);
  });
  router.add('POST', '/execute/:ph/:sid/context', async (req, res, p) => {
    const format = formatOf(req);
    const s = await current(req, p);
    const example = '{"seeds": ["<catalog>:<Entity>"]}';
    sendOutcome(
      res,
      await service.context(s, decodeBody(ContextBodySchema, await jsonText(req, example), example).seeds),
      format,
    );
  });
  router.add('POST', '/execute/:ph/:sid/plan', async (req, res, p, url) => {
    const format = formatOf(req);
    const s = await current(req, p);
    if (mediaType(req) !== RESOLVED_PLAN_TYPE)
      throw new SvcFailure([
        svcError('unsupported_media_type', `a resolved plan is sent as ${RESOLVED_PLAN_TYPE}`, {
          hint: 'programs go to POST /execute/{prompt_hash}/{session} as text/plain',
        }),
      ]);
    const example = '{"plan": <plan IR>} (optionally with program, wait, force, plan_commit_ref, mode)';
    const body = decodeBody(PlanBodySchema, parseJsonObject(await readBody(req), `send ${example}`), example);
    const flags = { ...runFlags(url, body), who: deps.who(req) };
    sendOutcome(res, await service.resolvedPlan(s, body.plan, flags, body.program ?? undefined), format);
  });
  router.add('GET', '/execute/:ph/:sid/operations/:handle/stream', async (req, res, p) => {
    const { session: s } = await found(req, p);
    streamOperation(req, res, await service.watch(s, p.handle!));
  });
  router.add('GET', '/execute/:ph/:sid/symbols', async (req, res, p) => {
    const s = await current(req, p);
    sendJson(res, 200, service.teach.symbols(s));
  });
  router.add('GET', '/execute/:ph/:sid/status', async (req, res, p) =>
    sendJson(res, 200, statusOf(await current(req, p))),
  );
  router.add('GET', '/execute/:ph/:sid/runs', async (req, res, p) =>
    sendJson(res, 200, { runs: (await found(req, p)).session.runs }),
  );
  router.add('GET', '/execute/:ph/:sid/artifacts/:run', async (req, res, p) => {
    try {
      await found(req, p);
    } catch (e) {
      // A session this process no longer holds (a restart): a stored run of the caller's tenant still answers.
      if (!(e instanceof SvcFailure) || e.errors[0]?.code !== 'unknown_session') throw e;
      sendJson(
        res,
        200,
        await service.storedRun(key(p), deps.tenant(req), p.run!).catch(() => {
          throw e;
        }),
      );
      return;
    }
    sendJson(res, 200, await service.storedRun(key(p), deps.tenant(req), p.run!));
  });
}

function statusOf(s: SessionState): Record<string, unknown> {
  return {
    prompt_hash: s.prompt_hash,
    session: s.session,
    intent: s.intent,
    entries: [...s.pins].map(([entry_id, cgs_hash]) => ({ entry_id, cgs_hash })),
    domain_revision: s.symbols.domainRevision,
    symbols: s.symbols.all().length,
    page_handles: [...s.pages].filter(([, v]) => !v.used).map(([k]) => k),
    plan_tokens: [...s.tokens].map(([k, t]) => ({
      ref: k,
      commit_id: t.commit_id,
      verdict: t.verdict,
      consumed: t.consumed_at !== undefined,
    })),
    runs: s.runs.length,
    created_at: new Date(s.created_at).toISOString(),
    last_used: new Date(s.last_used).toISOString(),
  };
}
