/**
 * The playground: two panels (catalogs; session and programs), the credential dialog and the
 * caller's identity. Everything goes through the public HTTP API (api/svc.ts).
 */
import { useCallback, useEffect, useState } from 'preact/hooks';
import { onAuthRequired } from '../api/client.js';
import * as svc from '../api/svc.js';
import type { AuthContext, RegistryRow } from '../api/types.js';
import { AuthDialog, AuthStatus } from './Auth.js';
import { Catalogs } from './Catalogs.js';
import { readSaved, save } from './saved.js';
import { SessionView } from './SessionView.js';
import { Tabs } from './Tabs.js';

type Tab = 'catalogs' | 'session';

export function App() {
  // A reload with a session open (saved.ts) comes back to it.
  const [tab, setTab] = useState<Tab>(() => (readSaved().session ? 'session' : 'catalogs'));
  const [registry, setRegistry] = useState<RegistryRow[] | null>(null);
  const [registryError, setRegistryError] = useState<string>('');
  const [who, setWho] = useState<AuthContext | null>(null);
  const [askAuth, setAskAuth] = useState(false);
  const [seeds, setSeeds] = useState<string[]>(() => readSaved().seeds ?? []);
  const [authEpoch, setAuthEpoch] = useState(0);

  useEffect(() => save({ seeds: seeds.length ? seeds : undefined }), [seeds]);

  const load = useCallback(async () => {
    const [r, w] = await Promise.all([svc.registry(), svc.whoAmI()]);
    if (w.ok) setWho(w.body);
    if (r.ok) {
      setRegistry(r.body.entries);
      setRegistryError('');
    } else setRegistryError(r.status === 401 ? 'sign in to see the catalogs' : `the registry answered ${r.status}`);
  }, []);

  useEffect(() => {
    const off = onAuthRequired(() => setAskAuth(true));
    void load().catch((e: unknown) => setRegistryError(`svc cannot be reached: ${String(e)}`));
    return off;
  }, [load]);

  const toggleSeed = (seed: string) => setSeeds((s) => (s.includes(seed) ? s.filter((x) => x !== seed) : [...s, seed]));

  return (
    <div class="app">
      <header class="top">
        <h1>svc playground</h1>
        <Tabs
          label="Views"
          tabs={[
            { id: 'catalogs', label: 'Catalogs' },
            { id: 'session', label: `Session & programs${seeds.length ? ` (${seeds.length} seeds)` : ''}` },
          ]}
          current={tab}
          onSelect={(id) => setTab(id as Tab)}
        />
        <AuthStatus who={who} onSignIn={() => setAskAuth(true)} />
      </header>
      <main>
        <section id="panel-catalogs" role="tabpanel" aria-labelledby="tab-catalogs" hidden={tab !== 'catalogs'}>
          {registryError && (
            <p class="error" role="alert" data-testid="registry-error">
              {registryError}
            </p>
          )}
          <Catalogs registry={registry} seeds={seeds} toggleSeed={toggleSeed} openSession={() => setTab('session')} />
        </section>
        <section id="panel-session" role="tabpanel" aria-labelledby="tab-session" hidden={tab !== 'session'}>
          <SessionView registry={registry ?? []} seeds={seeds} setSeeds={setSeeds} authEpoch={authEpoch} />
        </section>
      </main>
      <AuthDialog
        open={askAuth}
        who={who}
        onClose={() => setAskAuth(false)}
        onChanged={() => {
          setAskAuth(false);
          setAuthEpoch((n) => n + 1);
          void load();
        }}
      />
    </div>
  );
}
