/**
 * How `svc run` sends a program when it draws progress (a TTY, or `--progress`):
 * - a live program with the default `--wait` starts as a background operation, its SSE stream
 *   feeds the status line, and at the end `wait(oN)` fetches the answer (rows and all); Ctrl-C
 *   cancels the run (`cancel(oN)`), as an interrupted waited request would;
 * - `wait(oN)` follows the stream until the operation ends, then polls once; Ctrl-C stops
 *   following and leaves the operation running;
 * - everything else is sent as it is, with a spinner and the elapsed time after a second.
 * Without progress every request is sent once, exactly as the flags say.
 */
import type { HttpAnswer, ServerClient } from './client.js';
import { followOperation, StatusLine } from './progress.js';

export interface Sender {
  client: ServerClient;
  /** `/execute/{ph}/{sid}` */
  sessionPath: string;
  /** The Accept header of the answer the user asked for. */
  accept: string;
  /** Draw the status line on stderr. */
  progress: boolean;
}

/** What was sent and answered; `interrupted` when Ctrl-C ended it. */
export interface Sent {
  answer: HttpAnswer;
  /** The background operation that carried a waited run, when progress started one. */
  operation?: string;
  interrupted?: boolean;
}

const STARTED = /\+ (o\d+) started/;
const WAIT = /^\s*wait\((o\d+)\)\s*$/;

export async function sendContinuation(s: Sender, text: string): Promise<Sent> {
  const post = () => s.client.request(s.sessionPath, { body: text, contentType: 'text/plain', accept: s.accept });
  const handle = WAIT.exec(text)?.[1];
  if (!s.progress || !handle) return { answer: await withSpinner(s, post) };
  const followed = await follow(s, handle, 0);
  if (followed.interrupted) {
    process.stderr.write(
      `${handle} keeps running: svc run -e 'wait(${handle})' polls it, -e 'cancel(${handle})' stops it\n`,
    );
    return { answer: await post(), interrupted: true };
  }
  return { answer: await post() };
}

/** Post a resolved plan body (`wait` as the user set it). */
export async function sendPlan(s: Sender, body: Record<string, unknown>): Promise<Sent> {
  const post = (wait: unknown) =>
    s.client.request(`${s.sessionPath}/plan`, {
      body: JSON.stringify({ ...body, wait }),
      contentType: 'application/vnd.svc.resolved-plan+json',
      accept: s.accept,
    });
  if (!s.progress || body.mode !== 'live' || body.wait === false)
    return { answer: await withSpinner(s, () => post(body.wait)) };
  const start = await post(false);
  const handle = start.status === 202 ? STARTED.exec(start.text)?.[1] : undefined;
  if (!handle) {
    // The server's cap on running operations: run it waited instead (a refused start spends no pcN).
    if (start.status === 429) return { answer: await withSpinner(s, () => post(true)) };
    return { answer: start };
  }
  const followed = await follow(s, handle);
  const poll = (program: string) =>
    s.client.request(s.sessionPath, { body: program, contentType: 'text/plain', accept: s.accept });
  if (followed.interrupted) return { answer: await poll(`cancel(${handle})`), operation: handle, interrupted: true };
  return { answer: await poll(`wait(${handle})`), operation: handle };
}

/**
 * Follow `handle` on a status line until it ends, or until Ctrl-C (`interrupted`). The line shows
 * after `delayMs` (default 1 s: a quick run draws nothing; `wait(oN)` shows it at once).
 */
async function follow(s: Sender, handle: string, delayMs?: number): Promise<{ interrupted: boolean }> {
  const status = new StatusLine(process.stderr, delayMs);
  const stop = new AbortController();
  const onInt = () => stop.abort();
  process.once('SIGINT', onInt);
  try {
    await followOperation(
      {
        base: s.client.base,
        sessionPath: s.sessionPath,
        handle,
        headers: s.client.credentials(),
      },
      (line) => status.set(line),
      stop.signal,
    );
  } finally {
    process.off('SIGINT', onInt);
    status.stop();
  }
  return { interrupted: stop.signal.aborted };
}

async function withSpinner(s: Sender, send: () => Promise<HttpAnswer>): Promise<HttpAnswer> {
  if (!s.progress) return send();
  const status = new StatusLine(process.stderr);
  try {
    return await send();
  } finally {
    status.stop();
  }
}
