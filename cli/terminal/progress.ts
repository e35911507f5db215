/**
 * The terminal's live status line: a spinner, the operation's progress line and the elapsed time,
 * redrawn on stderr while a run goes on, fed by the operation's SSE stream
 * (`GET .../operations/{oN}/stream`: `snapshot`, `progress`, `terminal`; `data` is the plain
 * progress line). It shows only after `delayMs` (quick runs print nothing) and is erased before
 * the answer is printed, so stdout never holds it.
 */
import type { IncomingMessage } from 'node:http';
import { TerminalError, TERMINAL_EXIT } from './errors.js';
import { send } from './http.js';
import { safeText } from './safe-text.js';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const REDRAW_MS = 100;

/** When the status line is drawn: `--quiet` never, `--progress` always, else when stderr is a TTY. */
export function progressWanted(flags: { quiet?: boolean; progress?: boolean }, isTTY: boolean | undefined): boolean {
  if (flags.quiet) return false;
  return flags.progress === true || isTTY === true;
}

export class StatusLine {
  private line = '';
  private frame = 0;
  private shown = false;
  private readonly started = Date.now();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly out: NodeJS.WritableStream & { columns?: number },
    private readonly delayMs = 1000,
  ) {
    this.timer = setInterval(() => this.draw(), REDRAW_MS);
  }

  /** The line to show next: server text, so its control characters are shown escaped and it stays one line. */
  set(line: string): void {
    this.line = safeText(line).replace(/[\n\t]/g, ' ');
  }

  private draw(): void {
    const elapsed = Date.now() - this.started;
    if (elapsed < this.delayMs) return;
    this.shown = true;
    this.frame = (this.frame + 1) % FRAMES.length;
    const text = `${FRAMES[this.frame]} ${(elapsed / 1000).toFixed(1)} s ${this.line || 'running'}`;
    const width = this.out.columns && this.out.columns > 10 ? this.out.columns - 1 : 119;
    this.out.write(`\r\x1b[2K${text.length > width ? text.slice(0, width - 1) + '…' : text}`);
  }

  /** Stop redrawing and erase the line (it was only ever shown on stderr). */
  stop(): void {
    clearInterval(this.timer);
    if (this.shown) this.out.write('\r\x1b[2K');
  }
}

export interface StreamEvent {
  event: string;
  data: string;
}

/** Parse server-sent events from a text stream; yields each complete event. */
export async function* sseEvents(body: AsyncIterable<Uint8Array>): AsyncGenerator<StreamEvent> {
  const decoder = new TextDecoder();
  let buf = '';
  for await (const chunk of body) {
    buf += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, '\n');
    let end: number;
    while ((end = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, end);
      buf = buf.slice(end + 2);
      let event = 'message';
      const data: string[] = [];
      for (const l of block.split('\n')) {
        if (l.startsWith(':')) continue;
        const i = l.indexOf(':');
        const name = i < 0 ? l : l.slice(0, i);
        const value = i < 0 ? '' : l.slice(i + 1).replace(/^ /, '');
        if (name === 'event') event = value;
        else if (name === 'data') data.push(value);
      }
      if (data.length) yield { event, data: data.join('\n') };
    }
  }
}

export interface FollowTarget {
  /** Base URL of the server, no trailing slash. */
  base: string;
  /** `/execute/{ph}/{sid}` */
  sessionPath: string;
  handle: string;
  headers: Record<string, string>;
}

/**
 * Follow one operation's stream until its `terminal` event (or the stream ends): each line goes
 * to `onLine`. Resolves with the last line; `signal` stops following early (the operation goes on).
 */
export async function followOperation(
  target: FollowTarget,
  onLine: (line: string) => void,
  signal?: AbortSignal,
): Promise<string | undefined> {
  let res: IncomingMessage;
  try {
    res = await send(`${target.base}${target.sessionPath}/operations/${target.handle}/stream`, {
      method: 'GET',
      headers: { ...target.headers, accept: 'text/event-stream' },
      ...(signal ? { signal } : {}),
    });
  } catch (e) {
    if (signal?.aborted) return undefined;
    throw new TerminalError(
      'server_unreachable',
      `cannot follow ${target.handle} on ${target.base} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
      `the operation may still run: svc run -e 'wait(${target.handle})'`,
      TERMINAL_EXIT.server,
    );
  }
  // Not streamable (unknown handle, auth): the caller's wait(oN) answers with the reason.
  if (res.statusCode !== 200) {
    res.resume();
    return undefined;
  }
  let last: string | undefined;
  try {
    for await (const e of sseEvents(res)) {
      last = e.data;
      onLine(e.data);
      if (e.event === 'terminal') break;
    }
  } catch (e) {
    if (!signal?.aborted) throw e;
  } finally {
    res.destroy();
  }
  return last;
}
