/** An ARIA tab list: arrow keys, Home and End move between tabs (WAI-ARIA Authoring Practices). */
export interface TabSpec {
  id: string;
  label: string;
}

export function Tabs(props: { label: string; tabs: TabSpec[]; current: string; onSelect: (id: string) => void }) {
  const { tabs, current, onSelect } = props;
  const onKey = (e: KeyboardEvent) => {
    const i = tabs.findIndex((t) => t.id === current);
    const next =
      e.key === 'ArrowRight'
        ? (i + 1) % tabs.length
        : e.key === 'ArrowLeft'
          ? (i - 1 + tabs.length) % tabs.length
          : e.key === 'Home'
            ? 0
            : e.key === 'End'
              ? tabs.length - 1
              : -1;
    if (next < 0) return;
    e.preventDefault();
    onSelect(tabs[next]!.id);
    document.getElementById(`tab-${tabs[next]!.id}`)?.focus();
  };
  return (
    <div role="tablist" aria-label={props.label} class="tabs" onKeyDown={onKey}>
      {tabs.map((t) => (
        <button
          type="button"
          role="tab"
          id={`tab-${t.id}`}
          data-testid={`tab-${t.id}`}
          aria-selected={t.id === current}
          aria-controls={`panel-${t.id}`}
          tabIndex={t.id === current ? 0 : -1}
          onClick={() => onSelect(t.id)}
        >
          {t.label}
        </button>
      ))}
    </div>
  );
}
