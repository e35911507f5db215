/**
 * What survives a reload of the page, in this tab's sessionStorage (one JSON entry): the catalog,
 * seeds and intent chosen for a session, the open session's address with what the page knows of
 * its waves (seeds and row counts; the rows are read again from the server), and the editor text.
 * Never a credential: that is the auth dialog's own entry (api/client.ts), kept only when asked.
 */
import type { SessionRef } from '../api/svc.js';
import type { SavedWave } from './waves.js';

export const SAVED_KEY = 'svc.playground.state';

export interface SavedSession {
  ref: SessionRef;
  entry: string;
  waves: SavedWave[];
}

export interface Saved {
  entry?: string;
  seeds?: string[];
  intent?: string;
  session?: SavedSession;
  program?: string;
}

/** What is saved, each key of its type (anything else is left out). */
export function readSaved(): Saved {
  let v: Record<string, unknown>;
  try {
    const parsed = JSON.parse(sessionStorage.getItem(SAVED_KEY) ?? '{}') as unknown;
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return {};
    v = parsed as Record<string, unknown>;
  } catch {
    return {};
  }
  const text = (x: unknown) => (typeof x === 'string' ? x : undefined);
  const out: Saved = {};
  if (text(v.entry)) out.entry = text(v.entry);
  if (text(v.intent)) out.intent = text(v.intent);
  if (text(v.program) !== undefined) out.program = text(v.program);
  if (Array.isArray(v.seeds)) out.seeds = v.seeds.filter((x): x is string => typeof x === 'string');
  const s = v.session as SavedSession | undefined;
  if (s && typeof s === 'object' && s.ref && typeof s.entry === 'string' && Array.isArray(s.waves)) out.session = s;
  return out;
}

/** A patch `saveSoon` holds back, and its timer. */
let waiting: Partial<Saved> | undefined;
let timer: ReturnType<typeof setTimeout> | undefined;

/** How long typing holds back saving the editor text (ms). */
const SOON_MS = 300;

/**
 * `save`, a moment later: what changes on every keystroke (the editor text) is written once the
 * typing pauses, not each time. A `save` in between writes it first; leaving the page writes it.
 */
export function saveSoon(patch: Partial<Saved>): void {
  waiting = { ...waiting, ...patch };
  clearTimeout(timer);
  timer = setTimeout(() => save({}), SOON_MS);
}

if (typeof addEventListener === 'function') addEventListener('pagehide', () => waiting && save({}));

/** Merges `patch` into what is saved (an undefined value removes its key), after what `saveSoon` held back. */
export function save(patch: Partial<Saved>): void {
  if (waiting) {
    patch = { ...waiting, ...patch };
    waiting = undefined;
    clearTimeout(timer);
  }
  const next: Record<string, unknown> = { ...readSaved(), ...patch };
  for (const k of Object.keys(next)) if (next[k] === undefined) delete next[k];
  try {
    sessionStorage.setItem(SAVED_KEY, JSON.stringify(next));
  } catch {
    // Storage refused (private mode, full): a reload starts fresh.
  }
}

/** The session is gone or closed: forget it and its program. */
export const forgetSession = (): void => save({ session: undefined, program: undefined });
