/**
 * Progress of a run: events per step (phase, pages, rows, calls, elapsed), and a coalescer that
 * passes start and terminal events at once but at most one running update per step about every
 * 2 seconds (the latest one wins). Events never carry secrets or row data.
 */

export type StepPhase = 'running' | 'done' | 'failed' | 'skipped' | 'cancelled';

export interface ProgressEvent {
  kind: 'start' | 'step' | 'end';
  /** Step id for `step` events. */
  step?: string;
  /** `running`/`done`/... for steps; for `end` the run status. */
  phase: StepPhase | 'started' | RunStatus;
  pages: number;
  rows: number;
  calls: number;
  elapsed_ms: number;
}

export type RunStatus = 'succeeded' | 'failed' | 'cancelled';

export const PROGRESS_INTERVAL_MS = 2000;

export interface Timers {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realTimers: Timers = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return t;
  },
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

/** Wrap `emit` so running updates are coalesced per step; call `close()` when the run ends. */
export function coalesceProgress(
  emit: (e: ProgressEvent) => void,
  intervalMs = PROGRESS_INTERVAL_MS,
  timers: Timers = realTimers,
) {
  const last = new Map<string, number>();
  const pending = new Map<string, { event: ProgressEvent; timer: unknown }>();
  const flush = (step: string) => {
    const p = pending.get(step);
    if (!p) return;
    pending.delete(step);
    last.set(step, timers.now());
    emit(p.event);
  };
  return {
    push(e: ProgressEvent): void {
      if (e.kind !== 'step' || e.phase !== 'running') {
        if (e.step) {
          const p = pending.get(e.step);
          if (p) {
            timers.clearTimeout(p.timer);
            pending.delete(e.step);
          }
        }
        emit(e);
        return;
      }
      const step = e.step!;
      const prev = last.get(step);
      const now = timers.now();
      if (prev === undefined || now - prev >= intervalMs) {
        const p = pending.get(step);
        if (p) {
          timers.clearTimeout(p.timer);
          pending.delete(step);
        }
        last.set(step, now);
        emit(e);
        return;
      }
      const p = pending.get(step);
      if (p) {
        p.event = e;
        return;
      }
      pending.set(step, { event: e, timer: timers.setTimeout(() => flush(step), prev + intervalMs - now) });
    },
    close(): void {
      for (const [, p] of pending) timers.clearTimeout(p.timer);
      pending.clear();
    },
  };
}
