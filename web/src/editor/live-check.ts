/**
 * Checking the program while it is typed: once the text has stayed the same for `delayMs`, and
 * only when it differs from the text checked last, `check` asks the server; its diagnostics go to
 * `show` only while they are about the newest text (null when the check failed). An older request
 * still under way is aborted, and an answer that comes for older text anyway is dropped.
 */

export class LiveCheck<T> {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private inFlight: AbortController | undefined;
  /** The text checked last (or whose diagnostics are shown otherwise, by a run). */
  private checked: string | undefined;
  /** The newest text seen. */
  private latest = '';

  constructor(
    private readonly check: (text: string, signal: AbortSignal) => Promise<T>,
    private readonly show: (text: string, result: T | null) => void,
    private readonly delayMs = 400,
  ) {}

  /** The text changed (or is there from the start): check it after the pause. True when a check is due. */
  changed(text: string): boolean {
    this.latest = text;
    clearTimeout(this.timer);
    this.timer = undefined;
    if (text === this.checked) return false;
    this.timer = setTimeout(() => void this.run(text), this.delayMs);
    return true;
  }

  /** `text` has its diagnostics from elsewhere (a run): no check of it is needed. */
  settled(text: string): void {
    this.checked = text;
    if (text === this.latest) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.inFlight?.abort();
    }
  }

  stop(): void {
    clearTimeout(this.timer);
    this.inFlight?.abort();
  }

  private async run(text: string): Promise<void> {
    this.timer = undefined;
    this.inFlight?.abort();
    const ctl = new AbortController();
    this.inFlight = ctl;
    this.checked = text;
    let result: T | null;
    try {
      result = await this.check(text, ctl.signal);
    } catch {
      result = null; // aborted, or svc out of reach: the next change tries again
      if (!ctl.signal.aborted && this.checked === text) this.checked = undefined;
    }
    if (ctl.signal.aborted || text !== this.latest) return; // stale: newer text is on its way
    if (this.inFlight === ctl) this.inFlight = undefined;
    this.show(text, result);
  }
}
