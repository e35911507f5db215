/** The teaching text of a session: the rules, then each wave's rows as a table (later waves are deltas). */
import type { Wave } from './session-state.js';

export function Teaching({ rules, waves }: { rules: string[]; waves: Wave[] }) {
  return (
    <section class="teaching" aria-labelledby="teaching-title">
      <h2 id="teaching-title">Teaching table</h2>
      <details open>
        <summary>Rules</summary>
        <pre data-testid="teaching-rules">{rules.join('\n')}</pre>
      </details>
      {waves.map((w, i) => (
        <section
          key={i}
          class={`wave${i === waves.length - 1 && i > 0 ? ' new' : ''}`}
          data-testid={`wave-${i + 1}`}
          aria-labelledby={`wave-title-${i + 1}`}
        >
          <h3 id={`wave-title-${i + 1}`}>
            {i === 0 ? 'Wave 1' : `Wave ${i + 1} (delta)`}: {w.rows.length ? `+${w.rows.length} rows` : 'nothing new'}{' '}
            <small class="muted">
              revision {w.revision}; {w.seeds.join(', ')}
            </small>
          </h3>
          {w.notice && <p class="notice">{w.notice}</p>}
          {w.rows.length > 0 && (
            <table class="teaching-table" data-testid="teaching-table">
              <thead>
                <tr>
                  <th scope="col">form</th>
                  <th scope="col">meaning</th>
                </tr>
              </thead>
              <tbody>
                {w.rows.map((r, j) => (
                  <tr key={j}>
                    <td>
                      <code>{r.form}</code>
                    </td>
                    <td>{r.meaning}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
      ))}
    </section>
  );
}
