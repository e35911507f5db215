/**
 * A stored run (`GET .../artifacts/{run_id}`) in a dialog, as JSON. The link under it opens the
 * same address in a tab (which works when inbound auth is off: a tab sends no credential).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { errorLine } from '../api/client.js';
import * as svc from '../api/svc.js';

export function ArtifactDialog(props: { session: svc.SessionRef; runId: string | null; onClose: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  /** Set while a close made here (runId went null) has its close event to come. */
  const closing = useRef(false);
  const [text, setText] = useState('');
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (!props.runId) {
      if (d.open) {
        closing.current = true;
        d.close();
      }
      return;
    }
    setText('loading…');
    if (!d.open) d.showModal();
    void svc
      .artifact(props.session, props.runId)
      .then((a) => setText(a.ok ? JSON.stringify(a.body, null, 2) : errorLine(a)))
      .catch((e: unknown) => setText(String(e)));
  }, [props.runId, props.session]);
  return (
    <dialog
      ref={ref}
      class="artifact-dialog"
      aria-labelledby="artifact-title"
      data-testid="artifact-dialog"
      // Only a close the user made (Escape) is reported: the close event of one made here comes a
      // task later, when another run may already be shown.
      onClose={() => (closing.current ? (closing.current = false) : props.onClose())}
    >
      <h2 id="artifact-title">
        Stored run <code>{props.runId}</code>
      </h2>
      <pre class="raw" data-testid="artifact-json">
        {text}
      </pre>
      <div class="buttons">
        {props.runId && (
          <a
            href={svc.artifactPath(props.session, props.runId)}
            target="_blank"
            rel="noopener noreferrer"
            data-testid="artifact-open"
          >
            Open the JSON in a new tab
          </a>
        )}
        <button type="button" data-testid="artifact-close" onClick={props.onClose} autoFocus>
          Close
        </button>
      </div>
    </dialog>
  );
}
