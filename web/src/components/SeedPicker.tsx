/** A list of seeds as removable chips, and an input (with suggestions) to add one. */
import { useState } from 'preact/hooks';

export function SeedPicker(props: {
  id: string;
  label: string;
  options: string[];
  seeds: string[];
  setSeeds: (s: string[]) => void;
}) {
  const [draft, setDraft] = useState('');
  const add = () => {
    const s = draft.trim();
    if (s && !props.seeds.includes(s)) props.setSeeds([...props.seeds, s]);
    setDraft('');
  };
  const listId = `seed-options-${props.id}`;
  return (
    <fieldset class="seed-picker">
      <legend>{props.label}</legend>
      <ul class="chips" data-testid={`seeds-${props.id}`}>
        {props.seeds.map((s) => (
          <li key={s} class="chip">
            <code>{s}</code>
            <button
              type="button"
              class="chip-remove"
              aria-label={`remove ${s}`}
              onClick={() => props.setSeeds(props.seeds.filter((x) => x !== s))}
            >
              ×
            </button>
          </li>
        ))}
      </ul>
      <div class="row">
        <input
          list={listId}
          aria-label="seed api:Entity"
          placeholder="api:Entity"
          data-testid={`seed-input-${props.id}`}
          value={draft}
          onInput={(e) => setDraft((e.target as HTMLInputElement).value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter') {
              e.preventDefault();
              add();
            }
          }}
        />
        <button type="button" class="secondary" data-testid={`seed-add-${props.id}`} onClick={add}>
          Add seed
        </button>
      </div>
      <datalist id={listId}>
        {props.options.map((o) => (
          <option value={o} key={o} />
        ))}
      </datalist>
    </fieldset>
  );
}
