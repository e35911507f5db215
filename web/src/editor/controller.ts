/**
 * The program editor (CodeMirror 6): highlighting, heredoc-aware tokens, completion from the
 * session, server diagnostics shown inline at line:col with their hint and "did you mean" fixes
 * as actions. One controller per editor; the Preact component mounts it.
 */
import { autocompletion, closeBrackets, closeBracketsKeymap, completionKeymap } from '@codemirror/autocomplete';
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import { bracketMatching } from '@codemirror/language';
import { lintGutter, lintKeymap, setDiagnostics, type Diagnostic } from '@codemirror/lint';
import { EditorState } from '@codemirror/state';
import {
  drawSelection,
  EditorView,
  highlightActiveLine,
  highlightActiveLineGutter,
  keymap,
  lineNumbers,
  placeholder,
} from '@codemirror/view';
import type { ExecError } from '../api/types.js';
import { fixesOf, offsetOf, tokenRange, type Fix } from '../lang/fixes.js';
import { svcCompletion, type CompletionData } from './complete.js';
import { svcLanguage } from './language.js';

export interface EditorHooks {
  /** Mod-Enter. */
  run(): void;
  /** Mod-Shift-Enter. */
  dryRun(): void;
  /** The completion data in force. */
  completion(): CompletionData;
  /** The text changed (typing, a fix, undo). */
  changed(text: string): void;
}

/** The CSP nonce of this page (index.html's `csp-nonce` meta), for the styles CodeMirror injects. */
export function cspNonce(): string {
  return document.querySelector<HTMLMetaElement>('meta[name="csp-nonce"]')?.content ?? '';
}

export class EditorController {
  view: EditorView | undefined;

  constructor(
    private readonly hooks: EditorHooks,
    private doc: string,
  ) {}

  mount(parent: HTMLElement): void {
    const run = (f: () => void) => () => (f(), true);
    this.view = new EditorView({
      parent,
      state: EditorState.create({
        doc: this.doc,
        extensions: [
          EditorView.cspNonce.of(cspNonce()),
          lineNumbers(),
          highlightActiveLineGutter(),
          history(),
          drawSelection(),
          highlightActiveLine(),
          bracketMatching(),
          closeBrackets(),
          svcLanguage,
          autocompletion({ override: [svcCompletion(() => this.hooks.completion())], activateOnTyping: true }),
          lintGutter(),
          placeholder('e1(city="Berlin")[name, city]   (Ctrl-Enter runs, Ctrl-Shift-Enter dry-runs)'),
          keymap.of([
            { key: 'Mod-Enter', run: run(() => this.hooks.run()) },
            { key: 'Mod-Shift-Enter', run: run(() => this.hooks.dryRun()) },
            ...closeBracketsKeymap,
            ...defaultKeymap,
            ...historyKeymap,
            ...completionKeymap,
            ...lintKeymap,
          ]),
          EditorView.contentAttributes.of({ 'aria-label': 'Program', 'data-testid': 'program-editor' }),
          EditorView.lineWrapping,
          EditorView.updateListener.of((u) => {
            if (u.docChanged) this.hooks.changed(u.state.doc.toString());
          }),
        ],
      }),
    });
  }

  destroy(): void {
    if (this.view) this.doc = this.text();
    this.view?.destroy();
    this.view = undefined;
  }

  text(): string {
    return this.view ? this.view.state.doc.toString() : this.doc;
  }

  setText(text: string): void {
    if (!this.view) {
      this.doc = text;
      return;
    }
    this.view.dispatch({ changes: { from: 0, to: this.view.state.doc.length, insert: text } });
  }

  focus(): void {
    this.view?.focus();
  }

  /**
   * Shows the compile errors of an answer inline (none clears them); each fix is an action. With
   * `about`, only while the editor still holds that text (a check's answer for older text is dropped).
   */
  showErrors(errors: ExecError[], about?: string): void {
    const view = this.view;
    if (!view) return;
    const text = view.state.doc.toString();
    if (about !== undefined && about !== text) return;
    const diagnostics: Diagnostic[] = [];
    for (const e of errors) {
      if (e.line === undefined || e.col === undefined) continue;
      const { from, to } = tokenRange(text, offsetOf(text, e.line, e.col));
      diagnostics.push({
        from,
        to,
        severity: 'error',
        source: e.code,
        message: `${e.message}${e.hint ? `\nhint: ${e.hint}` : ''}`,
        actions: fixesOf(text, e).map((f) => ({
          name: `use ${f.insert}`,
          apply: (v, from, to) => v.dispatch({ changes: { from, to, insert: f.insert } }),
        })),
      });
    }
    view.dispatch(setDiagnostics(view.state, diagnostics));
  }

  /** Applies a fix computed on the text as it was when the errors came (`fixesOf`). */
  applyFix(fix: Fix): void {
    const view = this.view;
    if (!view) return;
    view.dispatch({
      changes: { from: fix.from, to: fix.to, insert: fix.insert },
      selection: { anchor: fix.from + fix.insert.length },
    });
    view.dispatch(setDiagnostics(view.state, []));
    view.focus();
  }
}
