/**
 * Writing and running programs in a session: the editor (checked by the server while typed, and
 * saved for a reload), Run / Dry-run / Run in background, the answer (rows, More appending the next
 * page, review, errors with fixes), operations and stored runs.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { Answer } from '../api/client.js';
import * as svc from '../api/svc.js';
import type { ExecAnswer } from '../api/types.js';
import { completionData, emptyCompletion, type CompletionData } from '../editor/complete.js';
import { EditorController } from '../editor/controller.js';
import { Editor } from '../editor/Editor.js';
import { LiveCheck } from '../editor/live-check.js';
import type { Fix } from '../lang/fixes.js';
import { ArtifactDialog } from './ArtifactDialog.js';
import { checkText, type CheckResult } from './check-program.js';
import { Operations } from './Operations.js';
import { Outcome, type Shown } from './Outcome.js';
import { appendPage, loadedBlocks } from './pages.js';
import { readSaved, saveSoon } from './saved.js';
import type { SessionState } from './session-state.js';
import { useOperations } from './use-operations.js';

const CHECKING = 'checking…';

/** Handles named in an answer (`pg3`, `o2`, `pc1`), for completion. */
function handlesIn(a: ExecAnswer): string[] {
  return [...JSON.stringify(a).matchAll(/\b(pg\d+|o\d+|pc\d+)\b/g)].map((m) => m[1]!);
}

/**
 * Whether a run sent `how` may have written: by a pcN, unless the dry-run shown before it minted
 * that pcN with no write in its review; with `force`, always (its plan was not reviewed here).
 */
function mayHaveWritten(how: svc.RunHow, before: Shown | null): boolean {
  if (how.force) return true;
  if (!how.plan_commit_ref) return false;
  const meta = before?.answer.body._meta?.svc;
  return meta?.plan_commit_ref !== how.plan_commit_ref || (meta.dry_review?.mutations ?? 1) > 0;
}

export function Workbench({ session }: { session: SessionState }) {
  const completion = useRef<CompletionData>(emptyCompletion());
  const handles = useRef<string[]>([]);
  const [shown, setShown] = useState<Shown | null>(null);
  const [busy, setBusy] = useState(false);
  const [force, setForce] = useState(false);
  const [netError, setNetError] = useState('');
  const [artifact, setArtifact] = useState<string | null>(null);
  const [check, setCheck] = useState<Pick<CheckResult, 'note' | 'bad'>>({ note: '', bad: false });
  const { ops, track, cancel } = useOperations(session.ref);

  useEffect(() => {
    completion.current = session.symbols ? completionData(session.symbols, handles.current) : emptyCompletion();
  }, [session.symbols]);

  /** Sends a program; its answer, or undefined when svc could not be reached. */
  const post = async (program: string, how: svc.RunHow): Promise<Answer<ExecAnswer> | undefined> => {
    setBusy(true);
    setNetError('');
    try {
      const a = await svc.runProgram(session.ref, program, how);
      for (const h of handlesIn(a.body)) if (!handles.current.includes(h)) handles.current.push(h);
      completion.current = { ...completion.current, handles: handles.current };
      return a;
    } catch (e) {
      setNetError(`svc cannot be reached: ${String(e)}`);
      return undefined;
    } finally {
      setBusy(false);
    }
  };

  const send = async (program: string, how: svc.RunHow, fromEditor: boolean) => {
    if (!program.trim()) return;
    const a = await post(program, how);
    if (!a) return;
    const op = a.body._meta?.svc?.op;
    if (a.status === 202 && op) track(op, program);
    if (fromEditor) {
      controller.showErrors(a.body.errors ?? [], program);
      live.settled(program); // the answer's diagnostics stand for this text
      setCheck({ note: '', bad: false });
    }
    setShown({ answer: a, program, how, at: Date.now(), wrote: mayHaveWritten(how, shown) });
  };

  /** More on block `index`: the next page's rows are appended to it (the answer shown is that page's). */
  const more = async (index: number, handle: string) => {
    const a = await post(`page(${handle})`, {});
    if (!a) return;
    setShown((prev) => {
      if (!prev) return prev;
      const blocks = appendPage(prev.blocks ?? loadedBlocks(prev.answer.body), index, handle, a.body);
      // A failed page (or one that came twice) leaves the rows loaded; a failure shows its errors.
      if (!blocks)
        return a.ok
          ? prev
          : { ...prev, answer: a, page: handle, blocks: prev.blocks ?? loadedBlocks(prev.answer.body) };
      return { ...prev, answer: a, page: handle, blocks };
    });
  };

  const hooks = {
    run: () => void send(controller.text(), forced(), true),
    dryRun: () => void send(controller.text(), { mode: 'plan' }, true),
    completion: () => completion.current,
    changed: (text: string) => {
      saveSoon({ program: text });
      if (live.changed(text)) setCheck((c) => (c.note === CHECKING ? c : { note: CHECKING, bad: false }));
    },
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
          changed: (text) => hooksRef.current.changed(text),
        },
        readSaved().program ?? '', // the text of before a reload
      ),
    [session.ref],
  );
  const live = useMemo(
    () =>
      new LiveCheck<CheckResult>(
        (text, signal) => checkText(session.ref, text, signal),
        (text, r) => {
          if (r?.errors) controller.showErrors(r.errors, text);
          setCheck(r ?? { note: 'not checked: svc cannot be reached', bad: false });
        },
      ),
    [session.ref],
  );
  useEffect(() => {
    live.changed(controller.text()); // a text kept over a reload is checked too
    return () => live.stop();
  }, [live]);

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
        {check.note && (
          <p class={`check-note${check.bad ? ' error' : ' muted'}`} data-testid="check-note">
            {check.note}
          </p>
        )}
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
          more={(i, h) => void more(i, h)}
          busy={busy}
          openRun={setArtifact}
        />
      )}
      <ArtifactDialog session={session.ref} runId={artifact} onClose={() => setArtifact(null)} />
    </div>
  );
}
