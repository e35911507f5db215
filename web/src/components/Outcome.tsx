/**
 * The answer to a program: a status line (run id linking to the stored run), the answer's text,
 * its errors (each "did you mean" a button that applies the fix), a dry-run's review, and the
 * rows as sortable tables (More appends the next page), with the raw JSON, TOON or plain text one
 * click away (of the last page, once More was used).
 */
import { useState } from 'preact/hooks';
import type { Answer } from '../api/client.js';
import type { RunHow } from '../api/svc.js';
import type { ExecAnswer, ExecError } from '../api/types.js';
import { fixesOf, type Fix } from '../lang/fixes.js';
import { loadedBlocks, type LoadedBlock } from './pages.js';
import { cleanAnswer, plainText, toonText } from './plain.js';
import { Results } from './Results.js';
import { Review } from './Review.js';

export interface Shown {
  answer: Answer<ExecAnswer>;
  program: string;
  how: RunHow;
  /** When the answer came (Date.now()); pages appended later keep it. */
  at: number;
  /** The rows loaded so far, when More appended pages to the answer's blocks. */
  blocks?: LoadedBlock[];
  /** The handle of the last page appended (`answer` is then that page's answer). */
  page?: string;
  /** The run may have written (a pcN whose review counted writes, or `force`): never a clean answer. */
  wrote?: boolean;
}

export interface OutcomeProps {
  shown: Shown;
  currentText: () => string;
  applyFix: (f: Fix) => void;
  send: (program: string, how: RunHow) => void;
  /** More on block `index`: `page(handle)`, appended. */
  more: (index: number, handle: string) => void;
  busy: boolean;
  openRun: (runId: string) => void;
}

type View = 'table' | 'json' | 'toon' | 'plain';

const VIEW_LABEL: Record<View, string> = { table: 'Table', json: 'JSON', toon: 'TOON', plain: 'Plain' };

export function Outcome(props: OutcomeProps) {
  const { answer, program } = props.shown;
  const body = answer.body;
  const meta = body._meta?.svc ?? {};
  const [view, setView] = useState<View>('table');
  const blocks = props.shown.blocks ?? loadedBlocks(body);
  return (
    <section class="outcome" aria-labelledby="outcome-title" data-testid="outcome">
      <h2 id="outcome-title">Answer</h2>
      <p class="status-line" data-testid="status-line" role="status">
        <span class={answer.ok ? 'ok' : 'bad'}>HTTP {answer.status}</span>
        {meta.mode ? ` · ${meta.mode}` : ''}
        {meta.status ? ` · ${meta.status}` : ''}
        {meta.code ? ` · ${meta.code}` : ''}
        {props.shown.page ? ` · page(${props.shown.page})` : ''}
        {meta.run_id && (
          <>
            {' · run '}
            <a
              href="#"
              data-testid="run-id-link"
              onClick={(e) => {
                e.preventDefault();
                props.openRun(meta.run_id!);
              }}
            >
              {meta.run_id.slice(0, 14)}…
            </a>
          </>
        )}
      </p>
      <div role="group" aria-label="Show the answer as" class="view-switch">
        {(['table', 'json', 'toon', 'plain'] as View[]).map((v) => (
          <button
            type="button"
            key={v}
            class="secondary"
            aria-pressed={view === v}
            data-testid={`view-${v}`}
            onClick={() => setView(v)}
          >
            {VIEW_LABEL[v]}
          </button>
        ))}
      </div>
      {view !== 'table' && props.shown.page && (
        <p class="muted" data-testid="raw-note">
          The answer to <code>page({props.shown.page})</code>, the last page loaded.
        </p>
      )}
      {view === 'json' && (
        <pre class="raw" data-testid="raw-answer">
          {JSON.stringify(body, null, 2)}
        </pre>
      )}
      {(view === 'toon' || view === 'plain') && (
        <pre class="raw" data-testid="raw-answer">
          {(view === 'toon' ? toonText : plainText)(body, cleanAnswer(body, !props.shown.page && !!props.shown.wrote))}
        </pre>
      )}
      {view === 'table' && (
        <>
          {body.text && !meta.dry_review && (
            <pre class="answer-text" data-testid="answer-text">
              {body.text}
            </pre>
          )}
          {body.errors && body.errors.length > 0 && <Errors errors={body.errors} program={program} {...props} />}
          {body.warnings && body.warnings.length > 0 && (
            <ul class="warnings">
              {body.warnings.map((w, i) => (
                <li key={i}>
                  <code>{w.code}</code> {w.message}
                </li>
              ))}
            </ul>
          )}
          {meta.dry_review && meta.plan_commit_ref && (
            <Review
              review={meta.dry_review}
              token={meta.plan_commit_ref}
              at={props.shown.at}
              text={body.text ?? ''}
              run={() => props.send(program, { plan_commit_ref: meta.plan_commit_ref! })}
            />
          )}
          {blocks.length > 0 && <Results key={props.shown.at} blocks={blocks} more={props.more} busy={props.busy} />}
        </>
      )}
    </section>
  );
}

function Errors(props: OutcomeProps & { errors: ExecError[]; program: string }) {
  const fixText = () => props.currentText();
  return (
    <ul class="errors" data-testid="error-list" role="alert">
      {props.errors.map((e, i) => {
        // Fixes are computed on the editor's text now (it may have changed since the answer came).
        const fixes: Fix[] = fixesOf(props.program === fixText() ? props.program : fixText(), e);
        return (
          <li key={i} data-testid="error-item">
            <strong>
              <code>{e.code}</code>
            </strong>
            {e.line !== undefined ? ` at ${e.line}:${e.col}` : ''}: {e.message}
            {e.hint && <div class="hint">hint: {e.hint}</div>}
            {fixes.length > 0 && (
              <div class="fixes">
                {fixes.map((f) => (
                  <button type="button" key={f.label} data-testid="fix-button" onClick={() => props.applyFix(f)}>
                    use <code>{f.insert}</code>
                  </button>
                ))}
              </div>
            )}
          </li>
        );
      })}
    </ul>
  );
}
