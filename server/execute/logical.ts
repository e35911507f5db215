/**
 * Logical sessions (MCP): many per transport session, each a ref `l_<token>` bound to one execute
 * session. A context call opens one (the primary catalog is the lexicographically first of the
 * seeds; the others are federated after it in order, so seed order never changes the result),
 * extends it (a new catalog is federated, a loaded one expanded, with a delta-only wave; nothing
 * already taught is sent again), or, when its session went away or a catalog it pinned changed,
 * recovers into a fresh session and symbol space and says so in `continuity`.
 */
import { randomBytes } from 'node:crypto';
import { fail, SvcFailure } from '../../common/errors.js';
import { quote } from '../../common/quote.js';
import type { Seed } from '../../compiler/symbols.js';
import type { Registry } from '../../pack/registry.js';
import { findSession, type Found } from './find-session.js';
import type { Outcome } from './outcome.js';
import type { SessionRepository } from './repository.js';
import type { SessionKey } from './state.js';
import { seedParts, type Teacher } from './teach.js';

export interface LogicalContextRequest {
  /** Chosen by the host, stable for one agent context. */
  intent: string;
  /** Seeds as given (validated here, all or nothing). */
  seeds: unknown;
  tenant: string;
  /** The ref this caller already holds for this intent (its transport session remembers it). */
  bound?: string;
  /** The entries the tenant may use (unset: every loaded entry). */
  allowed?: ReadonlySet<string>;
}

/** `_meta.svc.continuity` of a context call. */
export interface Continuity {
  stale_binding_recovered: boolean;
  new_symbol_space: boolean;
  /** Set when `new_symbol_space`: symbols cached from earlier waves mean nothing now. */
  discard_cached_svc_symbols?: true;
}

export interface LogicalContext {
  ref: string;
  key: SessionKey;
  outcome: Outcome;
  continuity: Continuity;
}

export interface LogicalDeps {
  registry: () => Registry;
  repo: SessionRepository;
  teach: Teacher;
}

const REF = /^l_[A-Za-z0-9]{1,64}$/;
const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A fresh ref: `l_` and 16 base62 characters (about 95 random bits). */
export function mintLogicalRef(): string {
  let out = 'l_';
  for (const b of randomBytes(16)) out += BASE62[b % 62];
  return out;
}

/** Logical sessions over the session repository: `context` calls and finding the session of a ref. */
export class LogicalSessions {
  constructor(private readonly deps: LogicalDeps) {}

  /** A context call: open, extend or recover the logical session of an intent. */
  context(req: LogicalContextRequest): Promise<LogicalContext> {
    return logicalContext(this.deps, req);
  }

  /**
   * The session a logical ref is bound to, for a caller of `tenant` (`unknown_logical_session`,
   * `forbidden`).
   */
  find(ref: unknown, tenant: string): Promise<Found> {
    return findLogical(this.deps, ref, tenant);
  }
}

/** The session a logical ref is bound to, for a caller of `tenant` (`unknown_logical_session`, `forbidden`). */
export async function findLogical(deps: LogicalDeps, ref: unknown, tenant: string): Promise<Found> {
  if (typeof ref !== 'string' || !REF.test(ref))
    fail(
      'bad_arguments',
      '`logical_session_ref` is not an l_<token>',
      'send the logical_session_ref a context call returned',
    );
  const key = await deps.repo.findLogical(ref);
  if (!key)
    fail(
      'unknown_logical_session',
      `no session is bound to \`${quote(ref)}\``,
      'it idled out or was never minted here: open one with a context call (intent and seeds)',
    );
  return findSession(deps.repo, key, tenant, deps.registry());
}

/** A context call: open, extend, or recover the logical session of an intent (rules in the file comment). */
export async function logicalContext(deps: LogicalDeps, req: LogicalContextRequest): Promise<LogicalContext> {
  const raw = asList(req.seeds);
  // Scopes are checked on the apis the seeds name, before they are resolved: a seed of a catalog
  // the tenant may not use (or of none) must not get an answer that lists its entities or the
  // other loaded catalogs.
  if (req.allowed) {
    const denied = [...new Set(raw.map((x) => seedParts(x, undefined)?.api).filter((a) => a !== undefined))].filter(
      (api) => !req.allowed!.has(api),
    );
    if (denied.length)
      fail(
        'api_not_allowed',
        `this tenant may not use ${denied.map((a) => `\`${a}\``).join(', ')}`,
        req.allowed.size ? `catalogs it may use: ${[...req.allowed].sort().join(', ')}` : 'it may use no catalog here',
      );
  }
  const seeds = sortedSeeds(deps.teach.parseSeeds(raw, undefined));
  if (seeds.length === 0)
    fail(
      'bad_seed',
      '`seeds` is required and not empty',
      'send for example "seeds": [{"api": "<catalog>", "entity": "<Entity>"}]',
    );
  let recovered = false;
  if (req.bound) {
    const key = await deps.repo.findLogical(req.bound);
    const found = key ? await findSession(deps.repo, key, req.tenant, deps.registry()).catch(gone) : undefined;
    if (found && !found.stale) {
      const outcome = await deps.teach.context(found.session, seeds);
      return {
        ref: req.bound,
        key: found.session,
        outcome,
        continuity: { stale_binding_recovered: false, new_symbol_space: false },
      };
    }
    recovered = true;
  }
  const { key, outcome } = await openFederated(deps, req, seeds);
  const ref = mintLogicalRef();
  await deps.repo.bindLogical(key, ref);
  return {
    ref,
    key,
    outcome,
    continuity: { stale_binding_recovered: recovered, new_symbol_space: true, discard_cached_svc_symbols: true },
  };
}

/** A fresh session on the first catalog, the others federated after it: one wave of all seeds. */
async function openFederated(
  deps: LogicalDeps,
  req: LogicalContextRequest,
  seeds: Seed[],
): Promise<{ key: SessionKey; outcome: Outcome }> {
  const primary = seeds[0]!.api;
  const own = seeds.filter((s) => s.api === primary);
  const rest = seeds.filter((s) => s.api !== primary);
  const opened = await deps.teach.open({ entry_id: primary, intent: req.intent, seeds: own }, req.tenant);
  const extra = opened.extra;
  const key = { prompt_hash: extra.prompt_hash, session: extra.session };
  if (!rest.length) return { key, outcome: opened };
  const more = await deps.teach.context(key, rest);
  const rows = more.extra.wave.split('\n').slice(1);
  const wave = [extra.wave, ...rows].join('\n');
  return {
    key,
    outcome: {
      ...opened,
      text: `${extra.rules}\n${wave}`,
      meta: more.meta,
      extra: { ...opened.extra, ...more.extra, wave },
    },
  };
}

/** Seeds by catalog, then entity, each once. */
function sortedSeeds(seeds: Seed[]): Seed[] {
  const seen = new Set<string>();
  return [...seeds]
    .sort((a, b) =>
      a.api === b.api ? (a.entity < b.entity ? -1 : a.entity > b.entity ? 1 : 0) : a.api < b.api ? -1 : 1,
    )
    .filter((s) => {
      const k = `${s.api}:${s.entity}`;
      if (seen.has(k)) return false;
      seen.add(k);
      return true;
    });
}

function asList(raw: unknown): unknown[] {
  if (!Array.isArray(raw))
    fail(
      'bad_seed',
      '`seeds` must be a list',
      'send for example "seeds": [{"api": "<catalog>", "entity": "<Entity>"}]',
    );
  return raw as unknown[];
}

/** A bound session that went away (idled out) is recovered; any other failure stands. */
function gone(e: unknown): undefined {
  if (e instanceof SvcFailure && e.errors[0]?.code === 'unknown_session') return undefined;
  throw e;
}
