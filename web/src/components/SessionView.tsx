/**
 * The session panel: pick seeds, open a session (`POST /execute`), add seeds to it
 * (`POST .../context`: each answer is a delta wave), read its teaching table, and write and run
 * programs against it (Workbench). The open session is saved for this tab and reopened after a
 * reload (saved.ts, restore.ts).
 */
import { useEffect, useState } from 'preact/hooks';
import { errorLine, type Answer } from '../api/client.js';
import * as svc from '../api/svc.js';
import type { RegistryRow, WaveAnswer } from '../api/types.js';
import { parseTeaching } from '../lang/teaching.js';
import { restoreSession } from './restore.js';
import { forgetSession, readSaved, save } from './saved.js';
import { savedWaves } from './waves.js';
import type { SessionState, Wave } from './session-state.js';
import { SeedPicker } from './SeedPicker.js';
import { Teaching } from './Teaching.js';
import { Workbench } from './Workbench.js';

const apiOf = (seed: string) => seed.split(':')[0] ?? '';

export function SessionView(props: {
  registry: RegistryRow[];
  seeds: string[];
  setSeeds: (s: string[]) => void;
  /** Grows when the credential changes (a session kept for lack of one is tried again). */
  authEpoch: number;
}) {
  const [session, setSession] = useState<SessionState | null>(null);
  const [intent, setIntent] = useState(() => readSaved().intent ?? '');
  const [entry, setEntry] = useState(() => readSaved().entry ?? '');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const [reopening, setReopening] = useState(() => readSaved().session !== undefined);
  const allSeeds = props.registry.flatMap((r) => r.entities.map((e) => `${r.entry_id}:${e}`));
  const chosenEntry = entry || (props.seeds[0] ? apiOf(props.seeds[0]) : (props.registry[0]?.entry_id ?? ''));

  useEffect(() => save({ entry: entry || undefined, intent: intent || undefined }), [entry, intent]);
  useEffect(() => {
    if (session) save({ session: { ref: session.ref, entry: session.entry, waves: savedWaves(session.waves) } });
  }, [session]);
  useEffect(() => {
    const saved = readSaved().session;
    if (!saved || session) return setReopening(false);
    let live = true;
    setReopening(true);
    restoreSession(saved)
      .then((r) => {
        if (!live) return;
        if (r.kind === 'restored') setSession(r.session);
        else if (r.kind === 'dropped') forgetSession();
        setError(r.kind === 'restored' ? '' : (r.message ?? ''));
      })
      .catch((e: unknown) => live && setError(`svc cannot be reached: ${String(e)}`))
      .finally(() => live && setReopening(false));
    return () => {
      live = false;
    };
  }, [props.authEpoch]);

  const refreshSymbols = async (s: SessionState): Promise<SessionState> => {
    const a = await svc.symbols(s.ref);
    return a.ok ? { ...s, symbols: a.body } : s;
  };

  const withBusy = async (f: () => Promise<void>) => {
    setBusy(true);
    setError('');
    try {
      await f();
    } catch (e) {
      setError(`svc cannot be reached: ${String(e)}`);
    } finally {
      setBusy(false);
    }
  };

  const applyWave = (s: SessionState, a: Answer<WaveAnswer>, seeds: string[]): SessionState => {
    const t = parseTeaching(a.body.wave ?? '');
    const wave: Wave = {
      revision: a.body.domain_revision,
      seeds,
      rows: t.rows,
      ...(a.body.notice ? { notice: a.body.notice } : {}),
    };
    return { ...s, entries: a.body.entries, revision: a.body.domain_revision, waves: [...s.waves, wave] };
  };

  const open = () =>
    withBusy(async () => {
      forgetSession();
      const mine = props.seeds.filter((s) => apiOf(s) === chosenEntry);
      const others = props.seeds.filter((s) => apiOf(s) !== chosenEntry);
      const a = await svc.openSession(chosenEntry, mine, intent);
      if (!a.ok) return setError(errorLine(a));
      const ref = { prompt_hash: a.body.prompt_hash!, session: a.body.session! };
      const first: SessionState = {
        ref,
        entry: chosenEntry,
        entries: [],
        revision: 0,
        rules: parseTeaching(a.body.rules ?? '').rules,
        waves: [],
        symbols: null,
      };
      let s = applyWave(first, a, mine.length ? mine : ['(every entity)']);
      if (others.length) {
        // Other catalogs are federated after opening (POST /execute takes seeds of its entry only).
        const c = await svc.addContext(ref, others);
        if (c.ok) s = applyWave(s, c, others);
        else setError(errorLine(c));
      }
      setSession(await refreshSymbols(s));
    });

  const addSeeds = (seeds: string[]) =>
    withBusy(async () => {
      if (!session || seeds.length === 0) return;
      const a = await svc.addContext(session.ref, seeds);
      if (!a.ok) return setError(errorLine(a));
      setSession(await refreshSymbols(applyWave(session, a, seeds)));
    });

  return (
    <div class="session-layout">
      <div class="session-side">
        <section aria-labelledby="session-title" class="session-setup">
          <h2 id="session-title">Session</h2>
          {reopening && !session ? (
            <p class="muted" data-testid="session-reopening">
              Reopening the session open before the reload…
            </p>
          ) : !session ? (
            <form
              onSubmit={(e) => {
                e.preventDefault();
                void open();
              }}
            >
              <label>
                Catalog
                <select
                  data-testid="session-entry"
                  value={chosenEntry}
                  onChange={(e) => setEntry((e.target as HTMLSelectElement).value)}
                >
                  {props.registry.map((r) => (
                    <option value={r.entry_id} key={r.entry_id}>
                      {r.label} ({r.entry_id})
                    </option>
                  ))}
                </select>
              </label>
              <SeedPicker
                label="Seeds (api:Entity; none: every entity of the catalog)"
                options={allSeeds}
                seeds={props.seeds}
                setSeeds={props.setSeeds}
                id="open"
              />
              <label>
                Intent (optional)
                <input
                  data-testid="session-intent"
                  value={intent}
                  onInput={(e) => setIntent((e.target as HTMLInputElement).value)}
                />
              </label>
              <button type="submit" data-testid="open-session" disabled={busy || !chosenEntry}>
                Open session
              </button>
            </form>
          ) : (
            <SessionInfo
              session={session}
              options={allSeeds}
              busy={busy}
              addSeeds={(s) => void addSeeds(s)}
              close={() => {
                forgetSession();
                setSession(null);
              }}
            />
          )}
          {error && (
            <p class="error" role="alert" data-testid="session-error">
              {error}
            </p>
          )}
        </section>
        {session && <Teaching rules={session.rules} waves={session.waves} />}
      </div>
      <div class="session-main">
        {session ? (
          <Workbench session={session} />
        ) : (
          <p class="muted">Open a session to write programs against its teaching table.</p>
        )}
      </div>
    </div>
  );
}

function SessionInfo(props: {
  session: SessionState;
  options: string[];
  busy: boolean;
  addSeeds: (s: string[]) => void;
  close: () => void;
}) {
  const [more, setMore] = useState<string[]>([]);
  const { session } = props;
  return (
    <div data-testid="session-info">
      <p>
        <code data-testid="session-address">
          {session.ref.prompt_hash}/{session.ref.session}
        </code>{' '}
        revision <strong data-testid="session-revision">{session.revision}</strong>; catalogs{' '}
        {session.entries.map((e) => e.entry_id).join(', ')}
      </p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          props.addSeeds(more);
          setMore([]);
        }}
      >
        <SeedPicker
          label="Add seeds (expand or federate)"
          options={props.options}
          seeds={more}
          setSeeds={setMore}
          id="context"
        />
        <button type="submit" data-testid="add-context" disabled={props.busy || more.length === 0}>
          Add to the session
        </button>{' '}
        <button type="button" class="secondary" data-testid="close-session" onClick={props.close}>
          New session
        </button>
      </form>
    </div>
  );
}
