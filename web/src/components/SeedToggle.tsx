/** The seeds picked for the next session, and how to pick or drop one. */
export interface SeedProps {
  seeds: string[];
  toggleSeed: (seed: string) => void;
}

/** A button that picks (or drops) `api:Entity` as a seed of the next session. */
export function SeedToggle(props: SeedProps & { seed: string }) {
  const on = props.seeds.includes(props.seed);
  return (
    <button
      type="button"
      class="seed-toggle secondary"
      aria-pressed={on}
      data-testid={`seed-toggle-${props.seed}`}
      onClick={() => props.toggleSeed(props.seed)}
    >
      {on ? '✓ seed' : '+ seed'}
      <span class="visually-hidden"> {props.seed}</span>
    </button>
  );
}
