/**
 * The catalogs panel: the registry (label, tags, counts), discovery search (`/v1/discover`), and
 * the selected entry's entities, fields, capabilities and relations with a diagram. Entities can
 * be picked as seeds of the next session.
 */
import { useEffect, useState } from 'preact/hooks';
import { errorLine } from '../api/client.js';
import * as svc from '../api/svc.js';
import type { DiscoverRow, RegistryRow, ToolModel } from '../api/types.js';
import { EntryDetail } from './EntryDetail.js';
import { SeedToggle, type SeedProps } from './SeedToggle.js';

export function Catalogs(props: SeedProps & { registry: RegistryRow[] | null; openSession: () => void }) {
  const [selected, setSelected] = useState<string>('');
  const [model, setModel] = useState<ToolModel | null>(null);
  const [modelError, setModelError] = useState('');
  const registry = props.registry ?? [];

  useEffect(() => {
    if (!selected && registry[0]) setSelected(registry[0].entry_id);
  }, [registry, selected]);

  useEffect(() => {
    if (!selected) return;
    setModel(null);
    setModelError('');
    void svc.toolModel(selected).then((a) => (a.ok ? setModel(a.body) : setModelError(errorLine(a))));
  }, [selected]);

  return (
    <div class="catalogs">
      <div class="catalog-list">
        <Discovery {...props} />
        <h2 id="registry-title">Catalogs</h2>
        {props.registry === null && <p aria-busy="true">loading…</p>}
        <ul class="registry" aria-labelledby="registry-title" data-testid="registry-list">
          {registry.map((r) => (
            <li key={r.entry_id}>
              <button
                type="button"
                class={`entry-card${r.entry_id === selected ? ' selected' : ''}`}
                aria-pressed={r.entry_id === selected}
                data-testid={`registry-entry-${r.entry_id}`}
                onClick={() => setSelected(r.entry_id)}
              >
                <span class="entry-label">{r.label}</span> <code>{r.entry_id}</code> <small>v{r.version}</small>
                <span class="tags">
                  {r.tags.map((t) => (
                    <span class="tag" key={t}>
                      {t}
                    </span>
                  ))}
                </span>
                <span class="muted">
                  {r.entities.length} entities, {r.capabilities} capabilities, auth {r.auth}
                </span>
              </button>
            </li>
          ))}
        </ul>
        {props.seeds.length > 0 && (
          <button type="button" data-testid="go-to-session" onClick={props.openSession}>
            Open a session with {props.seeds.length} seed{props.seeds.length === 1 ? '' : 's'} →
          </button>
        )}
      </div>
      <div class="catalog-detail">
        {modelError && (
          <p class="error" role="alert">
            {modelError}
          </p>
        )}
        {model && <EntryDetail model={model} row={registry.find((r) => r.entry_id === selected)} {...props} />}
      </div>
    </div>
  );
}

function Discovery(props: SeedProps) {
  const [q, setQ] = useState('');
  const [rows, setRows] = useState<DiscoverRow[] | null>(null);
  const [error, setError] = useState('');
  const search = async (e: Event) => {
    e.preventDefault();
    const a = await svc.discover(q);
    if (a.ok) {
      setRows(a.body.rows);
      setError('');
    } else setError(errorLine(a));
  };
  return (
    <section class="discovery" aria-labelledby="discover-title">
      <h2 id="discover-title">Discover</h2>
      <form role="search" onSubmit={(e) => void search(e)}>
        <label for="discover-q" class="visually-hidden">
          What are you looking for?
        </label>
        <input
          id="discover-q"
          type="search"
          placeholder="beer reviews, open tickets…"
          data-testid="discover-input"
          value={q}
          onInput={(e) => setQ((e.target as HTMLInputElement).value)}
        />
        <button type="submit" data-testid="discover-submit">
          Search
        </button>
      </form>
      {error && <p class="error">{error}</p>}
      {rows && (
        <ol class="discover-results" data-testid="discover-results" aria-live="polite">
          {rows.length === 0 && <li>No entity matches.</li>}
          {rows.map((r) => (
            <li key={r.seed}>
              <code>{r.seed}</code> <small class="muted">score {r.score}</small>
              <SeedToggle seed={r.seed} {...props} />
              <div class="muted">{r.description}</div>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
