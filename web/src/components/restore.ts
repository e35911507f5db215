/**
 * Reopening the session of before a reload (saved.ts) through public routes: `GET .../status`
 * (that it still lives, its catalogs and revision) and `GET .../symbols` (its symbols and teaching
 * text, cut back into the waves the page saved). A session the server no longer knows is dropped
 * quietly; one it refuses (another tenant, a catalog reloaded since) is dropped with a word why.
 */
import { errorLine, type Answer } from '../api/client.js';
import * as svc from '../api/svc.js';
import { parseTeaching } from '../lang/teaching.js';
import type { SavedSession } from './saved.js';
import { splitWaves } from './waves.js';
import type { SessionState } from './session-state.js';

export type Restored =
  | { kind: 'restored'; session: SessionState }
  /** Forget the saved session; `message` when the user should know why. */
  | { kind: 'dropped'; message?: string }
  /** Keep it saved (no credential yet, svc out of reach): a later try may work. */
  | { kind: 'kept'; message: string };

const HEX16 = /^[0-9a-f]{16}$/;

export async function restoreSession(saved: SavedSession): Promise<Restored> {
  const { ref } = saved;
  if (!ref || !HEX16.test(String(ref.prompt_hash)) || !HEX16.test(String(ref.session)) || !Array.isArray(saved.waves))
    return { kind: 'dropped' };
  const status = await svc.status(ref);
  if (!status.ok) return refused(status);
  const symbols = await svc.symbols(ref);
  if (!symbols.ok) return refused(symbols);
  const teaching = parseTeaching(symbols.body.teaching);
  const revision = status.body.domain_revision;
  return {
    kind: 'restored',
    session: {
      ref: { prompt_hash: ref.prompt_hash, session: ref.session },
      entry: saved.entry,
      entries: status.body.entries,
      revision,
      rules: teaching.rules,
      waves: splitWaves(saved.waves, teaching.rows, revision),
      symbols: symbols.body,
    },
  };
}

function refused(a: Answer): Restored {
  const code = (a.body as { errors?: Array<{ code?: string }> }).errors?.[0]?.code;
  if (code === 'unknown_session') return { kind: 'dropped' };
  if (code === 'forbidden' || code === 'session_stale')
    return { kind: 'dropped', message: `the session open before the reload cannot be used: ${errorLine(a)}` };
  if (a.status === 401) return { kind: 'kept', message: 'sign in to reopen the session open before the reload' };
  return { kind: 'kept', message: `the session open before the reload: ${errorLine(a)}` };
}
