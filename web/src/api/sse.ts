/**
 * Server-sent events over fetch (EventSource cannot send the credential headers inbound auth
 * needs): `snapshot`, `progress`, `terminal` events of an operation (docs/operations.md).
 */
import { authHeaders } from './client.js';
import { parseSse, type SseEvent } from './sse-parse.js';

export type { SseEvent };

/** Follows the stream at `path` until it ends or `signal` aborts; `onEvent` gets each event. */
export async function follow(path: string, onEvent: (e: SseEvent) => void, signal: AbortSignal): Promise<number> {
  const res = await fetch(path, {
    headers: { accept: 'text/event-stream', ...authHeaders() },
    signal,
    credentials: 'omit',
    cache: 'no-store',
  });
  if (!res.ok || !res.body) return res.status;
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    const parsed = parseSse(buffer + value);
    buffer = parsed.rest;
    for (const e of parsed.events) onEvent(e);
  }
  return res.status;
}
