/**
 * Writing and running programs in a session: the editor, Run / Dry-run / Run in background, the
 * answer (rows, review, errors with fixes), operations and stored runs.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { Answer } from '../api/client.js';
import * as svc from '../api/svc.js';
import type { ExecAnswer } from '../api/types.js';
import { completionData, emptyCompletion, type CompletionData } from '../editor/complete.js';
import { EditorController } from '../editor/controller.js';
import { Editor } from '../editor/Editor.js';
import type { Fix } from '../lang/fixes.js';
import { ArtifactDialog } from './ArtifactDialog.js';
import { Operations } from './Operations.js';
import { Outcome, type Shown } from './Outcome.js';
import type { SessionState } from './session-state.js';
import { useOperations } from './use-operations.js';

/** Handles named in an answer (`pg3`, `o2`, `pc1`), for completion. */
function handlesIn(a: ExecAnswer): string[] {
  return [...JSON.stringify(a).matchAll(/\b(pg\d+|o\d+|pc\d+)\b/g)].map((m) => m[1]!);
}

export function Workbench({ session }: { session: SessionState }) {
  const completion = useRef<CompletionData>(emptyCompletion());
  const handles = useRef<string[]>([]);
  const [shown, setShown] = useState<Shown | null>(null);
  const [busy, setBusy] = useState(false);
  const [force, setForce] = useState(false);
  const [netError, setNetError] = useState('');
  const [artifact, setArtifact] = useState<string | null>(null);
  const { ops, track, cancel } = useOperations(session.ref);

  useEffect(() => {
    completion.current = session.symbols ? completionData(session.symbols, handles.current) : emptyCompletion();
  }, [session.symbols]);

  const send = async (program: string, how: svc.RunHow, fromEditor: boolean) => {
    if (!program.trim()) return;
    setBusy(true);
    setNetError('');
    let a: Answer<ExecAnswer>;
    try {
      a = await svc.runProgram(session.ref, program, how);
    } catch (e) {
      setNetError(`svc cannot be reached: ${String(e)}`);
      return;
    } finally {
      setBusy(false);
    }
    for (const h of handlesIn(a.body)) if (!handles.current.includes(h)) handles.current.push(h);
    completion.current = { ...completion.current, handles: handles.current };
    const op = a.body._meta?.svc?.op;
    if (a.status === 202 && op) track(op, program);
    if (fromEditor) controller.showErrors(a.body.errors ?? []);
    setShown({ answer: a, program, how, at: Date.now() });
  };

  const hooks = {
    run: () => void send(controller.text(), forced(), true),
    dryRun: () => void send(controller.text(), { mode: 'plan' }, true),
    completion: () => completion.current,
  };
  const forced = (): svc.RunHow => {
    if (!force) return {};
    setForce(false);
    return { force: true };
  };
  const hooksRef = useRef(hooks);
  hooksRef.current = hooks;
  const controller = useMemo(
    () =>
      new EditorController(
        {
          run: () => hooksRef.current.run(),
          dryRun: () => hooksRef.current.dryRun(),
          completion: () => hooksRef.current.completion(),
        },
        '',
      ),
    [session.ref],
  );

  const applyFix = (fix: Fix) => controller.applyFix(fix);

  return (
    <div class="workbench">
      <section aria-labelledby="program-title">
        <h2 id="program-title">Program</h2>
        <Editor controller={controller} labelledBy="program-title" />
        <div class="buttons" role="toolbar" aria-label="Run the program">
          <button type="button" data-testid="run" disabled={busy} onClick={hooks.run}>
            Run
          </button>
          <button type="button" class="secondary" data-testid="dry-run" disabled={busy} onClick={hooks.dryRun}>
            Dry-run
          </button>
          <button
            type="button"
            class="secondary"
            data-testid="run-background"
            disabled={busy}
            onClick={() => void send(controller.text(), { wait: false, ...forced() }, true)}
          >
            Run in background
          </button>
          <label class="inline force" title="pass the review gate without a plan token">
            <input
              type="checkbox"
              data-testid="force"
              checked={force}
              onChange={(e) => setForce((e.target as HTMLInputElement).checked)}
            />
            force the next run (skips review)
          </label>
          {busy && <span aria-live="polite">running…</span>}
        </div>
        {netError && (
          <p class="error" role="alert">
            {netError}
          </p>
        )}
      </section>
      <Operations
        ops={ops}
        cancel={(n) => void cancel(n)}
        show={(o) => o.answer && setShown({ answer: o.answer, program: `wait(${o.n})`, how: {}, at: Date.now() })}
        openRun={setArtifact}
      />
      {shown && (
        <Outcome
          shown={shown}
          currentText={() => controller.text()}
          applyFix={applyFix}
          send={(p, how) => void send(p, how, false)}
          openRun={setArtifact}
        />
      )}
      <ArtifactDialog session={session.ref} runId={artifact} onClose={() => setArtifact(null)} />
    </div>
  );
}
