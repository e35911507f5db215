/** Background operations: live progress from their streams, cancel, their result and stored run. */
import type { Operation } from './use-operations.js';

export function Operations(props: {
  ops: Operation[];
  cancel: (n: string) => void;
  show: (o: Operation) => void;
  openRun: (runId: string) => void;
}) {
  if (props.ops.length === 0) return null;
  return (
    <section class="operations" aria-labelledby="ops-title" data-testid="operations">
      <h2 id="ops-title">Background runs</h2>
      <ul>
        {props.ops.map((o) => (
          <li key={o.n} class={`op ${o.state}`} data-testid={`operation-${o.n}`}>
            <div class="op-head">
              <code>{o.n}</code> <span data-testid="operation-state">{o.state}</span>{' '}
              <code class="muted op-program">{o.program.length > 60 ? `${o.program.slice(0, 60)}…` : o.program}</code>
            </div>
            <progress
              data-testid="operation-progress"
              aria-label={`progress of ${o.n}`}
              max={o.total ?? 1}
              value={o.done ?? (o.state === 'succeeded' ? (o.total ?? 1) : 0)}
            />
            <div class="op-line" data-testid="operation-line" aria-live="polite">
              {o.line}
            </div>
            {o.streamError && <div class="error">{o.streamError}</div>}
            <div class="buttons">
              <button
                type="button"
                class="secondary"
                data-testid="operation-cancel"
                disabled={o.state !== 'running'}
                onClick={() => props.cancel(o.n)}
              >
                Cancel {o.n}
              </button>
              <button
                type="button"
                class="secondary"
                data-testid="operation-result"
                disabled={!o.answer}
                onClick={() => props.show(o)}
              >
                Show result
              </button>
              {o.runId && (
                <button
                  type="button"
                  class="secondary"
                  data-testid="operation-run"
                  onClick={() => props.openRun(o.runId!)}
                >
                  Stored run
                </button>
              )}
            </div>
          </li>
        ))}
      </ul>
    </section>
  );
}
